#include "jinja/lexer.h"

#include <cstring>

#include "core/error.h"
#include "core/utf8.h"

namespace realign::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

class Lexer {
 public:
  Lexer(const std::string& source, const std::string& where) : src_(source), where_(where) {
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const Tok last = out_.empty() ? Tok::kCloseStmt : out_.back().type;
      if (last == Tok::kCloseStmt || last == Tok::kCloseExpr || last == Tok::kText) {
        if (lex_text()) continue;
      }
      if (starts("{#")) {
        lex_comment();
        continue;
      }
      if (starts("{%") || starts("{{")) {
        const bool stmt = starts("{%");
        pos_ += 2;
        if (pos_ < src_.size() && src_[pos_] == '-') {
          strip_trailing_text();
          ++pos_;
        }
        push(stmt ? Tok::kOpenStmt : Tok::kOpenExpr, stmt ? "{%" : "{{");
        curly_ = 0;
        lex_inside(stmt);
        continue;
      }
      fail("unexpected character '" + std::string(1, src_[pos_]) + "'");
    }
    out_.push_back({Tok::kEnd, "", line_at(pos_)});
    return out_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ":" + std::to_string(line_at(pos_)), what);
  }
  int line_at(size_t p) const {
    int n = 1;
    for (size_t k = 0; k < p && k < src_.size(); ++k) n += src_[k] == '\n';
    return n;
  }
  bool starts(const char* s) const { return src_.compare(pos_, std::strlen(s), s) == 0; }
  void push(Tok t, std::string text, bool is_float = false) {
    out_.push_back({t, std::move(text), line_at(pos_), is_float});
  }

  // Text up to the next tag; lstrip_blocks drops spaces and tabs that begin the line of a {% or {# tag.
  bool lex_text() {
    const size_t begin = pos_;
    while (pos_ < src_.size() && !(src_[pos_] == '{' && pos_ + 1 < src_.size() &&
                                   (src_[pos_ + 1] == '%' || src_[pos_ + 1] == '{' || src_[pos_ + 1] == '#')))
      ++pos_;
    size_t end = pos_;
    if (pos_ < src_.size() && src_[pos_ + 1] != '{') {
      size_t k = end;
      while (k > begin && (src_[k - 1] == ' ' || src_[k - 1] == '\t')) --k;
      // Only when nothing else precedes the tag on its line (in the source, before any trimming).
      size_t line_start = k;
      while (line_start > 0 && (src_[line_start - 1] == ' ' || src_[line_start - 1] == '\t')) --line_start;
      if (line_start == 0 || src_[line_start - 1] == '\n') end = k;
    }
    if (end == begin) return false;
    out_.push_back({Tok::kText, src_.substr(begin, end - begin), line_at(begin)});
    return true;
  }

  void strip_trailing_text() {
    if (out_.empty() || out_.back().type != Tok::kText) return;
    std::string& t = out_.back().text;
    while (!t.empty() && is_space(t.back())) t.pop_back();
    if (t.empty()) out_.pop_back();
  }
  void skip_space() {
    while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
  }
  void trim_block_newline() {
    if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
  }

  void lex_comment() {
    pos_ += 2;
    if (pos_ < src_.size() && src_[pos_] == '-') {
      strip_trailing_text();
      ++pos_;
    }
    const size_t close = src_.find("#}", pos_);
    if (close == std::string::npos) fail("a comment '{#' is never closed with '#}'");
    const bool strip_after = close > pos_ && src_[close - 1] == '-';
    pos_ = close + 2;
    // The comment leaves no token; text after it is lexed as text.
    out_.push_back({Tok::kCloseStmt, "#}", line_at(pos_)});
    comment_marks_.push_back(out_.size() - 1);
    if (strip_after)
      skip_space();
    else
      trim_block_newline();
  }

  void lex_inside(bool stmt) {
    for (;;) {
      skip_space();
      if (pos_ >= src_.size()) fail(std::string("a tag '") + (stmt ? "{%" : "{{") + "' is never closed");
      if (starts("-%}") || starts("%}")) {
        if (!stmt) fail("'%}' closes a '{{' tag");
        const bool strip = src_[pos_] == '-';
        pos_ += strip ? 3 : 2;
        push(Tok::kCloseStmt, "%}");
        if (strip)
          skip_space();
        else
          trim_block_newline();
        return;
      }
      if ((starts("-}}") || starts("}}")) && curly_ == 0) {
        if (stmt) fail("'}}' closes a '{%' tag");
        const bool strip = src_[pos_] == '-';
        pos_ += strip ? 3 : 2;
        push(Tok::kCloseExpr, "}}");
        if (strip) skip_space();
        return;
      }
      const char c = src_[pos_];
      if (c == '\'' || c == '"') {
        lex_string(c);
      } else if (is_digit(c)) {
        lex_number("");
      } else if ((c == '-' || c == '+') && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1]) &&
                 !operand_before()) {
        ++pos_;
        lex_number(std::string(1, c));
      } else if (is_word(c)) {
        const size_t b = pos_;
        while (pos_ < src_.size() && is_word(src_[pos_])) ++pos_;
        out_.push_back({Tok::kName, src_.substr(b, pos_ - b), line_at(b)});
      } else {
        static const char* const ops[] = {"<=", ">=", "==", "!=", "**", "//", "(", ")", "{",
                                          "}",  "[",  "]",  ",",  ".",  ":",  "|", "<", ">",
                                          "+",  "-",  "~",  "*",  "/",  "%",  "="};
        bool found = false;
        for (const char* op : ops)
          if (starts(op)) {
            if (op[0] == '{' && op[1] == 0) ++curly_;
            if (op[0] == '}' && op[1] == 0) --curly_;
            push(Tok::kOp, op);
            pos_ += std::strlen(op);
            found = true;
            break;
          }
        if (!found) fail("unexpected character '" + std::string(1, c) + "' in a tag");
      }
    }
  }

  bool operand_before() const {
    if (out_.empty()) return false;
    const Token& t = out_.back();
    return t.type == Tok::kName || t.type == Tok::kNumber || t.type == Tok::kString ||
           (t.type == Tok::kOp && (t.text == ")" || t.text == "]"));
  }

  void lex_number(std::string sign) {
    const size_t b = pos_;
    while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      is_float = true;
      ++pos_;
      while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
    }
    push(Tok::kNumber, sign + src_.substr(b, pos_ - b), is_float);
  }

  void lex_string(char quote) {
    const int line = line_at(pos_);
    ++pos_;
    std::string s;
    while (pos_ < src_.size() && src_[pos_] != quote) {
      char c = src_[pos_++];
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos_ >= src_.size()) break;
      const char e = src_[pos_++];
      switch (e) {
        case 'n':
          s += '\n';
          break;
        case 't':
          s += '\t';
          break;
        case 'r':
          s += '\r';
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case 'v':
          s += '\v';
          break;
        case '\'':
        case '"':
        case '\\':
          s += e;
          break;
        case 'x':
        case 'u': {
          const size_t n = e == 'x' ? 2 : 4;
          const std::string hex = src_.substr(pos_, n);
          if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            fail(std::string("invalid escape \\") + e + hex);
          append_utf8(s, uint32_t(std::stoul(hex, nullptr, 16)));
          pos_ += n;
          break;
        }
        default:
          fail(std::string("unknown escape \\") + e + " in a string");
      }
    }
    if (pos_ >= src_.size()) fail("a string is never closed");
    ++pos_;
    out_.push_back({Tok::kString, s, line});
  }

  std::string src_;
  std::string where_;
  size_t pos_ = 0;
  int curly_ = 0;
  std::vector<Token> out_;
  std::vector<size_t> comment_marks_;

 public:
  // Comments were pushed as bare close marks so text after them lexes as text; drop them now.
  std::vector<Token> tokens() {
    std::vector<Token> all = run();
    std::vector<Token> out;
    size_t m = 0;
    for (size_t k = 0; k < all.size(); ++k) {
      if (m < comment_marks_.size() && comment_marks_[m] == k) {
        ++m;
        continue;
      }
      out.push_back(std::move(all[k]));
    }
    return out;
  }
};

}  // namespace

std::vector<Token> lex_template(const std::string& source, const std::string& where) {
  return Lexer(source, where).tokens();
}

}  // namespace realign::jinja
