// Lexer and parser for the chat-template subset of Jinja. Whitespace handling follows transformers'
// settings (trim_blocks, lstrip_blocks, one trailing newline dropped) as @huggingface/jinja applies them.
#include <cstring>
#include <set>

#include "core/error.h"
#include "io/jinja_ast.h"
#include "io/utf8.h"

namespace realign::io::jinja {
namespace {

enum class Tok { kText, kOpenStmt, kCloseStmt, kOpenExpr, kCloseExpr, kName, kString, kNumber, kOp, kEnd };

struct Token {
  Tok type;
  std::string text;
  int line;
  bool is_float = false;
};

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

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& where) : t_(std::move(tokens)), where_(where) {}

  NodePtr parse_all() {
    NodePtr root = block({});
    if (peek().type != Tok::kEnd) fail("unexpected '" + peek().text + "'");
    return root;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(p_++, t_.size() - 1)]; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ":" + std::to_string(peek().line), what);
  }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).type == Tok::kOp && peek(k).text == op; }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).type == Tok::kName && peek(k).text == n; }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(std::string("expected '") + op + "', found '" + peek().text + "'");
    ++p_;
  }
  void expect(Tok type, const char* what) {
    if (peek().type != type) fail(std::string("expected ") + what + ", found '" + peek().text + "'");
    ++p_;
  }
  std::string expect_name() {
    if (peek().type != Tok::kName) fail("expected a name, found '" + peek().text + "'");
    return next().text;
  }
  NodePtr make(Node::Kind kind, int line) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = line;
    return n;
  }

  // Statements until one of `ends` ({% end... %} etc.), which is left unconsumed.
  NodePtr block(const std::set<std::string>& ends) {
    NodePtr b = make(Node::Kind::kBlock, peek().line);
    for (;;) {
      const Token& tok = peek();
      if (tok.type == Tok::kEnd) {
        for (const std::string& end : ends)
          if (end.rfind("end", 0) == 0) fail("missing {% " + end + " %}");
        return b;
      }
      if (tok.type == Tok::kText) {
        NodePtr n = make(Node::Kind::kText, tok.line);
        n->text = tok.text;
        b->children.push_back(n);
        ++p_;
      } else if (tok.type == Tok::kOpenExpr) {
        ++p_;
        NodePtr n = make(Node::Kind::kOutput, tok.line);
        n->a = expression();
        expect(Tok::kCloseExpr, "'}}'");
        b->children.push_back(n);
      } else if (tok.type == Tok::kOpenStmt) {
        if (peek(1).type == Tok::kName && ends.count(peek(1).text)) return b;
        ++p_;
        if (NodePtr s = statement()) b->children.push_back(s);
      } else {
        fail("unexpected '" + tok.text + "'");
      }
    }
  }

  void close_stmt() { expect(Tok::kCloseStmt, "'%}'"); }
  void end_tag(const char* name) {
    expect(Tok::kOpenStmt, "'{%'");
    if (!is_name(name)) fail(std::string("expected {% ") + name + " %}");
    ++p_;
    close_stmt();
  }

  NodePtr statement() {
    const int line = peek().line;
    const std::string kw = expect_name();
    if (kw == "if") return if_rest(line);
    if (kw == "for") {
      NodePtr n = make(Node::Kind::kFor, line);
      n->names.push_back(expect_name());
      while (is_op(",")) {
        ++p_;
        n->names.push_back(expect_name());
      }
      if (!is_name("in")) fail("expected 'in' in a for loop");
      ++p_;
      n->a = or_expr();  // a conditional here would swallow the loop's `if`
      if (is_name("if")) {
        ++p_;
        n->b = expression();
      }
      close_stmt();
      n->children.push_back(block({"endfor", "else"}));
      n->children.push_back(nullptr);
      if (is_name("else", 1)) {
        p_ += 2;
        close_stmt();
        n->children[1] = block({"endfor"});
      }
      end_tag("endfor");
      return n;
    }
    if (kw == "set") {
      NodePtr n = make(Node::Kind::kSet, line);
      const std::string first = expect_name();
      if (is_op(".")) {
        ++p_;
        NodePtr target = make(Node::Kind::kAttr, line);
        target->a = make(Node::Kind::kName, line);
        target->a->text = first;
        target->text = expect_name();
        n->a = target;
      } else {
        n->names.push_back(first);
        while (is_op(",")) {
          ++p_;
          n->names.push_back(expect_name());
        }
      }
      if (is_op("=")) {
        ++p_;
        n->b = expression();
        close_stmt();
      } else {
        close_stmt();
        n->children.push_back(block({"endset"}));
        end_tag("endset");
      }
      return n;
    }
    if (kw == "break" || kw == "continue") {
      close_stmt();
      return make(kw == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, line);
    }
    if (kw == "generation" || kw == "endgeneration") {  // transformers' assistant-mask markers: no output
      close_stmt();
      return nullptr;
    }
    throw Error(where_ + ":" + std::to_string(line),
                "'{% " + kw + " %}' is not supported (supported: if, for, set, break, continue)");
  }

  NodePtr if_rest(int line) {
    NodePtr n = make(Node::Kind::kIf, line);
    n->a = expression();
    close_stmt();
    n->children.push_back(block({"elif", "else", "endif"}));
    n->children.push_back(nullptr);
    if (is_name("elif", 1)) {
      p_ += 2;
      NodePtr inner = make(Node::Kind::kBlock, peek().line);
      inner->children.push_back(if_rest(peek().line));  // consumes the shared endif
      n->children[1] = inner;
      return n;
    }
    if (is_name("else", 1)) {
      p_ += 2;
      close_stmt();
      n->children[1] = block({"endif"});
    }
    end_tag("endif");
    return n;
  }

  // expression := or_expr ['if' or_expr ['else' expression]]
  NodePtr expression() {
    NodePtr value = or_expr();
    if (is_name("if")) {
      NodePtr n = make(Node::Kind::kConditional, peek().line);
      ++p_;
      n->b = value;
      n->a = or_expr();
      n->children.push_back(nullptr);
      if (is_name("else")) {
        ++p_;
        n->children[0] = expression();
      }
      return n;
    }
    return value;
  }
  NodePtr binary(const std::string& op, NodePtr l, NodePtr r, int line) {
    NodePtr n = make(Node::Kind::kBinary, line);
    n->text = op;
    n->a = std::move(l);
    n->b = std::move(r);
    return n;
  }
  NodePtr or_expr() {
    NodePtr l = and_expr();
    while (is_name("or")) {
      const int line = next().line;
      l = binary("or", l, and_expr(), line);
    }
    return l;
  }
  NodePtr and_expr() {
    NodePtr l = not_expr();
    while (is_name("and")) {
      const int line = next().line;
      l = binary("and", l, not_expr(), line);
    }
    return l;
  }
  NodePtr not_expr() {
    if (is_name("not")) {
      NodePtr n = make(Node::Kind::kUnary, next().line);
      n->text = "not";
      n->a = not_expr();
      return n;
    }
    return compare();
  }
  NodePtr compare() {
    NodePtr l = additive();
    for (;;) {
      const int line = peek().line;
      if (peek().type == Tok::kOp && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                      peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
        const std::string op = next().text;
        l = binary(op, l, additive(), line);
      } else if (is_name("in")) {
        ++p_;
        l = binary("in", l, additive(), line);
      } else if (is_name("not") && is_name("in", 1)) {
        p_ += 2;
        l = binary("not in", l, additive(), line);
      } else {
        return l;
      }
    }
  }
  NodePtr additive() {
    NodePtr l = concat();
    while (is_op("+") || is_op("-")) {
      const Token& op = next();
      l = binary(op.text, l, concat(), op.line);
    }
    return l;
  }
  NodePtr concat() {
    NodePtr l = multiplicative();
    while (is_op("~")) {
      const int line = next().line;
      l = binary("~", l, multiplicative(), line);
    }
    return l;
  }
  NodePtr multiplicative() {
    NodePtr l = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& op = next();
      l = binary(op.text, l, power(), op.line);
    }
    return l;
  }
  NodePtr power() {
    NodePtr l = unary();
    while (is_op("**")) {
      const int line = next().line;
      l = binary("**", l, unary(), line);
    }
    return l;
  }
  NodePtr unary() {
    if (is_op("-") || is_op("+")) {
      NodePtr n = make(Node::Kind::kUnary, peek().line);
      n->text = next().text;
      n->a = unary();
      return n;
    }
    return filters(postfix(primary()));
  }

  void call_args(NodePtr& n) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().type == Tok::kName && is_op("=", 1)) {
        n->names.push_back(next().text);
        ++p_;
      } else {
        n->names.emplace_back();
      }
      n->children.push_back(expression());
      if (!is_op(")")) expect_op(",");
    }
    ++p_;
  }

  NodePtr postfix(NodePtr n) {
    for (;;) {
      const int line = peek().line;
      if (is_op(".")) {
        ++p_;
        NodePtr a = make(Node::Kind::kAttr, line);
        a->a = n;
        if (peek().type == Tok::kNumber)
          a->text = next().text;  // x.0
        else
          a->text = expect_name();
        n = a;
      } else if (is_op("[")) {
        ++p_;
        NodePtr parts[3];
        int k = 0;
        bool slice = false;
        for (;;) {
          if (is_op("]")) break;
          if (is_op(":")) {
            slice = true;
            if (++k > 2) fail("a slice has at most three parts");
            ++p_;
            continue;
          }
          parts[k] = expression();
        }
        expect_op("]");
        NodePtr s = make(slice ? Node::Kind::kSlice : Node::Kind::kIndex, line);
        s->a = n;
        if (slice)
          s->children = {parts[0], parts[1], parts[2]};
        else if (!parts[0])
          fail("empty subscript []");
        else
          s->b = parts[0];
        n = s;
      } else if (is_op("(")) {
        NodePtr c = make(Node::Kind::kCall, line);
        c->a = n;
        call_args(c);
        n = c;
      } else {
        return n;
      }
    }
  }

  NodePtr filters(NodePtr n) {
    for (;;) {
      const int line = peek().line;
      if (is_op("|")) {
        ++p_;
        NodePtr f = make(Node::Kind::kFilter, line);
        f->a = n;
        f->text = expect_name();
        if (is_op("(")) call_args(f);
        n = f;
      } else if (is_name("is")) {
        ++p_;
        NodePtr t = make(Node::Kind::kTest, line);
        t->a = n;
        if (is_name("not")) {
          ++p_;
          t->negate = true;
        }
        t->text = expect_name();
        if (is_op("(")) call_args(t);
        n = t;
      } else {
        return n;
      }
    }
  }

  NodePtr primary() {
    const Token& tok = peek();
    NodePtr n;
    if (tok.type == Tok::kString) {
      n = make(Node::Kind::kLiteral, tok.line);
      std::string s;
      while (peek().type == Tok::kString) s += next().text;  // adjacent literals concatenate
      n->value = Value::string(s);
      return n;
    }
    if (tok.type == Tok::kNumber) {
      n = make(Node::Kind::kLiteral, tok.line);
      n->value = tok.is_float ? Value::real(std::stod(tok.text)) : Value::integer(std::stoll(tok.text));
      ++p_;
      return n;
    }
    if (tok.type == Tok::kName) {
      ++p_;
      n = make(Node::Kind::kLiteral, tok.line);
      if (tok.text == "true" || tok.text == "True")
        n->value = Value::boolean(true);
      else if (tok.text == "false" || tok.text == "False")
        n->value = Value::boolean(false);
      else if (tok.text == "none" || tok.text == "None")
        n->value = Value::none();
      else {
        n->kind = Node::Kind::kName;
        n->text = tok.text;
      }
      return n;
    }
    if (is_op("(")) {
      ++p_;
      NodePtr first = expression();
      if (is_op(")")) {
        ++p_;
        return first;
      }
      n = make(Node::Kind::kTuple, tok.line);
      n->children.push_back(first);
      while (is_op(",")) {
        ++p_;
        if (is_op(")")) break;
        n->children.push_back(expression());
      }
      expect_op(")");
      return n;
    }
    if (is_op("[")) {
      ++p_;
      n = make(Node::Kind::kList, tok.line);
      while (!is_op("]")) {
        n->children.push_back(expression());
        if (!is_op("]")) expect_op(",");
      }
      ++p_;
      return n;
    }
    if (is_op("{")) {
      ++p_;
      n = make(Node::Kind::kDict, tok.line);
      while (!is_op("}")) {
        n->children.push_back(expression());
        expect_op(":");
        n->children.push_back(expression());
        if (!is_op("}")) expect_op(",");
      }
      ++p_;
      return n;
    }
    fail("expected an expression, found '" + tok.text + "'");
  }

  std::vector<Token> t_;
  std::string where_;
  size_t p_ = 0;
};

}  // namespace

NodePtr parse_template(const std::string& source, const std::string& where) {
  Lexer lexer(source, where);
  return Parser(lexer.tokens(), where).parse_all();
}

}  // namespace realign::io::jinja
