// Splitting a launch script into commands of words, quoting kept for the expansion (shell_expand.cc): a word
// ends at unquoted whitespace or an operator, and a `$(...)`, `${...}`, `$((...))`, backquote or array
// assignment `A=(...)` stays inside its word across spaces and lines, as bash reads it.
#include <cctype>
#include <regex>

#include "engines/shell_words.h"

namespace realign::engines {
namespace {

class Splitter {
 public:
  explicit Splitter(const std::string& s) : s_(s) {}

  std::vector<ShellCommand> run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\\' && next_is('\n')) {
        i_ += 2, ++line_;
      } else if (c == '\n') {
        end_command(), ++i_, ++line_;
        skip_heredocs();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        end_word(), ++i_;
      } else if (c == '#' && word_.empty()) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        operator_at(c);
      } else if (c == '<' || c == '>') {
        redirection();
      } else {
        word_char();
      }
    }
    end_command();
    return std::move(commands_);
  }

 private:
  bool next_is(char c) const { return i_ + 1 < s_.size() && s_[i_ + 1] == c; }

  void end_word() {
    if (!in_word_) return;
    if (drop_next_word_) {
      drop_next_word_ = false;
    } else {
      if (current_.words.empty()) current_.line = word_line_;
      current_.words.push_back(word_);
      current_.lines.push_back(word_line_);
    }
    word_.clear(), in_word_ = false;
  }
  void end_command() {
    end_word();
    if (!current_.words.empty()) commands_.push_back(std::move(current_));
    current_ = ShellCommand{};
  }
  void start_word() {
    if (!in_word_) word_line_ = line_;
    in_word_ = true;
  }

  void operator_at(char c) {
    // `A=(x y)` assigns an array: the parentheses belong to the word.
    static const std::regex array_start(R"(^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$)");
    if (c == '(' && in_word_ && std::regex_match(word_, array_start)) {
      copy_balanced('(', ')');
      return;
    }
    // `2>&1`, `>&2`, `&>`: redirections, not operators.
    if (c == '&' && next_is('>')) {
      end_word(), ++i_;
      redirection();
      return;
    }
    end_command();
    i_ += (c != '(' && c != ')' && next_is(c)) ? 2 : 1;
  }

  // `>`, `>>`, `<`, `N>&M`, `>&2`, `2>/dev/null`: dropped with their target; `<<WORD` starts a here-document.
  void redirection() {
    if (s_[i_] == '<' && next_is('<') && !(i_ + 2 < s_.size() && s_[i_ + 2] == '<')) {
      heredoc();
      return;
    }
    // A word of digits just before is the descriptor (`2>`).
    if (in_word_ && !word_.empty() && word_.find_first_not_of("0123456789") == std::string::npos)
      word_.clear(), in_word_ = false;
    end_word();
    ++i_;
    while (i_ < s_.size() && (s_[i_] == '>' || s_[i_] == '<' || s_[i_] == '|')) ++i_;
    if (i_ < s_.size() && s_[i_] == '&') {  // `>&2`: a descriptor, no file word follows
      ++i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-')) ++i_;
      return;
    }
    drop_next_word_ = true;
  }

  void heredoc() {
    end_word();
    i_ += 2;
    const bool strip_tabs = i_ < s_.size() && s_[i_] == '-';
    if (strip_tabs) ++i_;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    std::string delimiter;
    while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) && s_[i_] != ';' &&
           s_[i_] != '&' && s_[i_] != '|' && s_[i_] != ')') {
      if (s_[i_] != '\'' && s_[i_] != '"' && s_[i_] != '\\') delimiter += s_[i_];
      ++i_;
    }
    heredocs_.push_back({delimiter, strip_tabs});
  }

  // After the line that opened them, here-documents' bodies are text, not commands.
  void skip_heredocs() {
    for (const auto& [delimiter, strip_tabs] : heredocs_) {
      while (i_ < s_.size()) {
        size_t end = s_.find('\n', i_);
        if (end == std::string::npos) end = s_.size();
        std::string body_line = s_.substr(i_, end - i_);
        if (!body_line.empty() && body_line.back() == '\r') body_line.pop_back();
        if (strip_tabs) body_line.erase(0, body_line.find_first_not_of('\t'));
        i_ = end < s_.size() ? end + 1 : end, ++line_;
        if (body_line == delimiter) break;
      }
    }
    heredocs_.clear();
  }

  // Copies from s_[i_] == open to its matching close, quotes and nesting respected, into the word.
  void copy_balanced(char open, char close) {
    start_word();
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\'' || c == '"' || c == '`') {
        copy_quoted(c);
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') ++line_;
        word_ += s_.substr(i_, 2), i_ += 2;
        continue;
      }
      if (c == '\n') ++line_;
      word_ += c, ++i_;
      if (c == open) ++depth;
      if (c == close && --depth == 0) return;
    }
  }

  // Copies a quoted run starting at s_[i_] == quote; inside double quotes and backquotes, `\` escapes and
  // `$(`/`${` nest.
  void copy_quoted(char quote) {
    word_ += s_[i_++];
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\n') ++line_;
      if (quote != '\'' && s_[i_] == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') ++line_;
        word_ += s_.substr(i_, 2), i_ += 2;
      } else if (quote == '"' && s_[i_] == '$' && i_ + 1 < s_.size() &&
                 (s_[i_ + 1] == '(' || s_[i_ + 1] == '{')) {
        word_ += s_[i_++];
        copy_balanced(s_[i_], s_[i_] == '(' ? ')' : '}');
      } else {
        word_ += s_[i_++];
      }
    }
    if (i_ < s_.size()) word_ += s_[i_++];
  }

  void word_char() {
    start_word();
    const char c = s_[i_];
    if (c == '\'' || c == '"' || c == '`') {
      copy_quoted(c);
    } else if (c == '\\' && i_ + 1 < s_.size()) {
      word_ += s_.substr(i_, 2), i_ += 2;
    } else if (c == '$' && i_ + 1 < s_.size() && (s_[i_ + 1] == '(' || s_[i_ + 1] == '{')) {
      word_ += s_[i_++];
      copy_balanced(s_[i_], s_[i_] == '(' ? ')' : '}');
    } else {
      word_ += c, ++i_;
    }
  }

  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1, word_line_ = 1;
  std::string word_;
  bool in_word_ = false, drop_next_word_ = false;
  ShellCommand current_;
  std::vector<ShellCommand> commands_;
  std::vector<std::pair<std::string, bool>> heredocs_;
};

}  // namespace

std::vector<ShellCommand> split_commands(const std::string& script) { return Splitter(script).run(); }

}  // namespace realign::engines
