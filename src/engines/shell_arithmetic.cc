// Bash arithmetic for launch scripts' `$((max_prompt_length + max_response_length))` and `$((1024 * 8))`:
// a recursive-descent evaluator over 64-bit integers in bash's precedence order. Names read the script's
// variables as integers; bash would take an unset one as 0, which here would price a script on a value the
// user never gave, so it is refused and named instead.
#include <cctype>
#include <cstdlib>

#include "engines/shell_words.h"

namespace realign::engines {
namespace {

class Arithmetic {
 public:
  Arithmetic(const std::string& text, const ShellVars& vars) : s_(text), vars_(vars) {}

  bool run(long long& value, std::string& why) {
    value = ternary();
    skip();
    if (ok_ && i_ != s_.size()) fail("'" + s_.substr(i_) + "' is not arithmetic realign evaluates");
    why = why_;
    return ok_;
  }

 private:
  void fail(const std::string& why) {
    if (ok_) why_ = why;
    ok_ = false;
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(const char* op) {
    skip();
    const std::string o(op);
    if (s_.compare(i_, o.size(), o) != 0) return false;
    // `*` is not the start of `**`, `<` not of `<=`, `&` not of `&&`.
    const char next = i_ + o.size() < s_.size() ? s_[i_ + o.size()] : '\0';
    if (o.size() == 1 && (next == '=' || next == o[0]) && o != "(" && o != ")" && o != "!" && o != "~")
      return false;
    i_ += o.size();
    return true;
  }

  long long ternary() {
    const long long c = logical_or();
    if (!eat("?")) return c;
    const long long a = ternary();
    if (!eat(":")) fail("'?' without ':'");
    const long long b = ternary();
    return c ? a : b;
  }
  long long logical_or() {
    long long v = logical_and();
    while (eat("||")) v = (logical_and() || v) ? 1 : 0;
    return v;
  }
  long long logical_and() {
    long long v = comparison();
    while (eat("&&")) v = (comparison() && v) ? 1 : 0;
    return v;
  }
  long long comparison() {
    long long v = additive();
    for (;;) {
      if (eat("=="))
        v = v == additive();
      else if (eat("!="))
        v = v != additive();
      else if (eat("<="))
        v = v <= additive();
      else if (eat(">="))
        v = v >= additive();
      else if (eat("<"))
        v = v < additive();
      else if (eat(">"))
        v = v > additive();
      else
        return v;
    }
  }
  long long additive() {
    long long v = multiplicative();
    for (;;) {
      if (eat("+"))
        v += multiplicative();
      else if (eat("-"))
        v -= multiplicative();
      else
        return v;
    }
  }
  long long multiplicative() {
    long long v = power();
    for (;;) {
      if (eat("*")) {
        v *= power();
      } else if (eat("/") || eat("%")) {
        const bool divide = s_[i_ - 1] == '/';
        const long long d = power();
        if (d == 0) {
          fail("division by zero");
          return 0;
        }
        v = divide ? v / d : v % d;
      } else {
        return v;
      }
    }
  }
  long long power() {
    const long long base = unary();
    if (!eat("**")) return base;
    const long long exp = power();  // right-associative, as bash
    long long v = 1;
    for (long long k = 0; k < exp && k < 64; ++k) v *= base;
    return v;
  }
  long long unary() {
    if (eat("-")) return -unary();
    if (eat("+")) return unary();
    if (eat("!")) return !unary();
    if (eat("~")) return ~unary();
    return primary();
  }
  long long primary() {
    skip();
    if (eat("(")) {
      const long long v = ternary();
      if (!eat(")")) fail("unbalanced parentheses");
      return v;
    }
    const size_t start = i_;
    if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      while (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_]))) ++i_;
      return number(s_.substr(start, i_ - start));
    }
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    if (i_ == start) {
      fail(i_ < s_.size() ? "'" + s_.substr(i_) + "' is not arithmetic realign evaluates"
                          : "an operand is missing");
      return 0;
    }
    const std::string name = s_.substr(start, i_ - start);
    const auto it = vars_.scalars.find(name);
    if (it == vars_.scalars.end()) {
      fail("${" + name + "} is not set");
      return 0;
    }
    return number(it->second, name);
  }
  long long number(const std::string& text, const std::string& name = "") {
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 0);  // 0x.., 0.. (octal) as bash reads them
    if (text.empty() || *end != '\0') {
      fail(name.empty() ? "'" + text + "' is not an integer"
                        : "${" + name + "} is '" + text + "', not an integer");
      return 0;
    }
    return v;
  }

  const std::string& s_;
  const ShellVars& vars_;
  size_t i_ = 0;
  bool ok_ = true;
  std::string why_;
};

}  // namespace

bool eval_arithmetic(const std::string& expr, const ShellVars& vars, long long& value, std::string& why) {
  return Arithmetic(expr, vars).run(value, why);
}

}  // namespace realign::engines
