// Expanding one word of a launch script as bash does (shell_words.h): quote removal, parameters with their
// operators, arithmetic, `~`, the path-only command substitutions, and field splitting of what an unquoted
// expansion gives. What bash would need a running command or an unknown value for stays as written.
#include <fnmatch.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <regex>

#include "engines/shell_words.h"

namespace realign::engines {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The index of the `close` matching w[open_at], skipping quoted runs and nested pairs; npos when unbalanced.
size_t matching(const std::string& w, size_t open_at, char open, char close) {
  int depth = 0;
  for (size_t i = open_at; i < w.size(); ++i) {
    const char c = w[i];
    if (c == '\\') {
      ++i;
    } else if (c == '\'' && open != '\'') {
      const size_t end = w.find('\'', i + 1);
      if (end == std::string::npos) return end;
      i = end;
    } else if (c == '"') {
      for (++i; i < w.size() && w[i] != '"'; ++i)
        if (w[i] == '\\')
          ++i;
        else if (w[i] == '$' && i + 1 < w.size() && (w[i + 1] == '(' || w[i + 1] == '{'))
          i = matching(w, i + 1, w[i + 1], w[i + 1] == '(' ? ')' : '}');
      if (i >= w.size()) return std::string::npos;
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

std::string dirname_of(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  p.resize(slash);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string basename_of(std::string p, const std::string& suffix) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  if (slash != std::string::npos && p.size() > 1) p = p.substr(slash + 1);
  if (!suffix.empty() && p.size() > suffix.size() &&
      p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
    p.resize(p.size() - suffix.size());
  return p;
}

class Expander {
 public:
  Expander(ShellVars& vars, bool split) : vars_(vars), split_(split) {}

  ExpandedWord run(const std::string& w) {
    size_t i = 0;
    if (!w.empty() && w[0] == '~' && (w.size() == 1 || w[1] == '/')) {
      const auto home = vars_.scalars.find("HOME");
      home == vars_.scalars.end() ? unexpanded("~") : literal(home->second);
      i = 1;
    }
    while (i < w.size()) {
      const char c = w[i];
      if (c == '\'') {
        const size_t end = w.find('\'', i + 1);
        literal(w.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1));
        i = end == std::string::npos ? w.size() : end + 1;
      } else if (c == '"') {
        i = double_quoted(w, i);
      } else if (c == '\\') {
        if (i + 1 < w.size() && w[i + 1] != '\n') literal(std::string(1, w[i + 1]));
        i += 2;
      } else if (c == '$' && i + 1 < w.size() && w[i + 1] == '\'') {
        i = ansi_c_quoted(w, i + 1);
      } else if (c == '$') {
        i = dollar(w, i, false);
      } else if (c == '`') {
        i = backquote(w, i, false);
      } else {
        literal(std::string(1, c)), ++i;
      }
    }
    return {std::move(fields_), std::move(unexpanded_)};
  }

  // $'...': bash's ANSI-C quoting, its common escapes.
  size_t ansi_c_quoted(const std::string& w, size_t i) {
    std::string out;
    for (++i; i < w.size() && w[i] != '\''; ++i) {
      if (w[i] != '\\' || i + 1 >= w.size()) {
        out += w[i];
        continue;
      }
      const char e = w[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'a' ? '\a' : e == '0' ? '\0' : e;
    }
    literal(out);
    return i + 1;
  }

 private:
  // Output: the fields so far; `open_` while the last one still takes text.
  void literal(const std::string& text) {
    if (!open_) fields_.emplace_back(), open_ = true;
    fields_.back() += text;
  }
  void splittable(const std::string& text, bool quoted) {
    if (quoted || !split_) return literal(text);
    for (char c : text)
      if (c == ' ' || c == '\t' || c == '\n')
        open_ = false;
      else
        literal(std::string(1, c));
  }
  // Several values, each its own field when quoted ("${A[@]}"), all split when not.
  void values(const std::vector<std::string>& v, bool quoted) {
    for (size_t k = 0; k < v.size(); ++k) {
      if (k > 0) quoted ? void(open_ = false) : splittable(" ", false);
      splittable(v[k], quoted);
    }
  }
  void unexpanded(const std::string& raw) {
    literal(raw);
    if (unexpanded_.empty()) unexpanded_ = raw;
  }
  // A part of the word expanded on its own (an operator's operand, arithmetic's text), its fields appended.
  void nested(const std::string& text, bool quoted) {
    Expander sub(vars_, split_ && !quoted);
    ExpandedWord e = sub.run(text);
    if (unexpanded_.empty()) unexpanded_ = e.unexpanded;
    for (size_t k = 0; k < e.fields.size(); ++k) {
      if (k > 0) open_ = false;
      literal(e.fields[k]);
    }
  }
  std::string nested_text(const std::string& text) {
    Expander sub(vars_, false);
    ExpandedWord e = sub.run(text);
    if (unexpanded_.empty()) unexpanded_ = e.unexpanded;
    return e.fields.empty() ? "" : e.fields[0];
  }

  size_t double_quoted(const std::string& w, size_t i) {
    // "$@" and "${A[@]}" of nothing give no field; any other quotes give one, empty or not.
    static const std::regex all_of("^\"\\$(@|\\{@\\}|\\{[A-Za-z_][A-Za-z0-9_]*\\[@\\]\\})\"");
    std::smatch m;
    const std::string rest = w.substr(i);
    if (!std::regex_search(rest, m, all_of)) literal("");
    for (++i; i < w.size() && w[i] != '"';) {
      if (w[i] == '\\' && i + 1 < w.size() && std::strchr("$`\"\\\n", w[i + 1])) {
        if (w[i + 1] != '\n') literal(std::string(1, w[i + 1]));
        i += 2;
      } else if (w[i] == '$') {
        i = dollar(w, i, true);
      } else if (w[i] == '`') {
        i = backquote(w, i, true);
      } else {
        literal(std::string(1, w[i++]));
      }
    }
    return i + 1;
  }

  size_t dollar(const std::string& w, size_t i, bool quoted) {
    if (i + 2 < w.size() && w[i + 1] == '(' && w[i + 2] == '(') {
      const size_t end = matching(w, i + 1, '(', ')');
      if (end != std::string::npos && w[end - 1] == ')') {
        arithmetic(w.substr(i + 3, end - 1 - (i + 3)), w.substr(i, end + 1 - i), quoted);
        return end + 1;
      }
    }
    if (i + 1 < w.size() && (w[i + 1] == '(' || w[i + 1] == '{')) {
      const bool brace = w[i + 1] == '{';
      const size_t end = matching(w, i + 1, w[i + 1], brace ? '}' : ')');
      if (end == std::string::npos) {
        unexpanded(w.substr(i));
        return w.size();
      }
      const std::string inner = w.substr(i + 2, end - i - 2), raw = w.substr(i, end + 1 - i);
      brace ? parameter(inner, raw, quoted) : command(inner, raw, quoted);
      return end + 1;
    }
    if (i + 1 < w.size() && std::strchr("@*#?$!-0123456789", w[i + 1])) {
      parameter(std::string(1, w[i + 1]), w.substr(i, 2), quoted);
      return i + 2;
    }
    size_t end = i + 1;
    if (end < w.size() && name_start(w[end]))
      while (end < w.size() && name_char(w[end])) ++end;
    if (end == i + 1) {
      literal("$");
      return i + 1;
    }
    parameter(w.substr(i + 1, end - i - 1), w.substr(i, end - i), quoted);
    return end;
  }

  size_t backquote(const std::string& w, size_t i, bool quoted) {
    size_t end = i + 1;
    std::string inner;
    for (; end < w.size() && w[end] != '`'; ++end) {
      if (w[end] == '\\' && end + 1 < w.size() && std::strchr("$`\\", w[end + 1])) ++end;
      inner += w[end];
    }
    command(inner, w.substr(i, end + 1 - i), quoted);
    return end + 1;
  }

  void arithmetic(const std::string& text, const std::string& raw, bool quoted) {
    Expander sub(vars_, false);
    const ExpandedWord expr = sub.run(text);
    long long value = 0;
    std::string why;
    if (!expr.unexpanded.empty() ||
        !eval_arithmetic(expr.fields.empty() ? "" : expr.fields[0], vars_, value, why))
      return unexpanded(raw);
    splittable(std::to_string(value), quoted);
  }

  // The command substitutions that only compute a path from their words; any other command is not run.
  void command(const std::string& inner, const std::string& raw, bool quoted) {
    const std::vector<ShellCommand> commands = split_commands(inner);
    std::vector<std::vector<std::string>> words;
    for (const ShellCommand& c : commands) {
      std::vector<std::string> w;
      for (const std::string& word : c.words) {
        ExpandedWord e = Expander(vars_, true).run(word);
        if (!e.unexpanded.empty()) return unexpanded(raw);
        w.insert(w.end(), e.fields.begin(), e.fields.end());
      }
      if (!w.empty() && w.size() > 1 && w[1] == "--") w.erase(w.begin() + 1);
      words.push_back(std::move(w));
    }
    const std::string cwd =
        vars_.scalars.count("PWD") ? vars_.scalars.at("PWD") : std::filesystem::current_path().string();
    auto absolute = [&](const std::string& p) {
      return std::filesystem::path(p.empty() || p[0] != '/' ? cwd + "/" + p : p).lexically_normal().string();
    };
    std::string out;
    bool ok = true;
    if (words.size() == 1 && words[0] == std::vector<std::string>{"pwd"}) {
      out = cwd;
    } else if (words.size() == 1 && words[0].size() == 2 && words[0][0] == "dirname") {
      out = dirname_of(words[0][1]);
    } else if (words.size() == 1 && (words[0].size() == 2 || words[0].size() == 3) &&
               words[0][0] == "basename") {
      out = basename_of(words[0][1], words[0].size() == 3 ? words[0][2] : "");
    } else if (words.size() == 1 && words[0].size() == 2 && words[0][0] == "realpath") {
      out = absolute(words[0][1]);
    } else if (words.size() == 1 && words[0].size() == 3 && words[0][0] == "readlink" &&
               words[0][1] == "-f") {
      out = absolute(words[0][2]);
    } else if (words.size() == 2 && words[0].size() == 2 && words[0][0] == "cd" &&
               words[1] == std::vector<std::string>{"pwd"}) {
      out = absolute(words[0][1]);
    } else if (words.size() == 1 && !words[0].empty() && words[0][0] == "echo") {
      out = join({words[0].begin() + 1, words[0].end()});
    } else if (words.size() == 2 && !words[0].empty() && words[0][0] == "echo" && words[1].size() == 2 &&
               words[1][0] == "sed") {
      ok = sed_substitute(join({words[0].begin() + 1, words[0].end()}), words[1][1], out);
    } else {
      ok = false;
    }
    if (!ok) return unexpanded(raw);
    while (!out.empty() && out.back() == '/' && out.size() > 1) out.pop_back();
    splittable(out, quoted);
  }

  // ${inner}: a name (or special parameter, or NAME[index]) and an operator.
  void parameter(const std::string& inner, const std::string& raw, bool quoted) {
    if (inner.empty() || inner[0] == '!') return unexpanded(raw);
    const bool length = inner[0] == '#' && inner.size() > 1;
    size_t n = length ? 1 : 0;
    const size_t name_from = n;
    if (n < inner.size() && std::strchr("@*#?$!-0123456789", inner[n]) && !name_start(inner[n])) {
      ++n;
    } else {
      while (n < inner.size() && name_char(inner[n])) ++n;
    }
    const std::string name = inner.substr(name_from, n - name_from);
    std::string index;
    if (n < inner.size() && inner[n] == '[') {
      const size_t close = inner.find(']', n);
      if (close == std::string::npos) return unexpanded(raw);
      index = inner.substr(n + 1, close - n - 1);
      n = close + 1;
    }
    if (name.empty()) return unexpanded(raw);
    const std::string op_and_word = inner.substr(n);
    std::vector<std::string> value;
    bool set = lookup(name, index, value);
    const bool all = index == "@" || index == "*" || name == "@" || name == "*";
    if (length) {
      if (!set || !op_and_word.empty()) return unexpanded(raw);
      return splittable(std::to_string(all ? value.size() : value.empty() ? 0 : value[0].size()), quoted);
    }
    if (op_and_word.empty()) {
      if (!set) return unexpanded(raw);
      return all ? values(index == "*" && quoted ? std::vector<std::string>{join(value)} : value, quoted)
                 : splittable(value.empty() ? "" : value[0], quoted);
    }
    const std::string joined = join(value);
    static const char* const ops[] = {":-", ":=", ":+", ":?", "##", "%%", "//", "^^", ",,",
                                      "-",  "=",  "+",  "?",  "#",  "%",  "/",  "^",  ","};
    std::string op;
    for (const char* o : ops)
      if (op_and_word.rfind(o, 0) == 0) {
        op = o;
        break;
      }
    const std::string operand = op_and_word.substr(op.size());
    const bool empty_counts = !op.empty() && op[0] == ':';
    const bool present = set && !(empty_counts && joined.empty());
    if (op == ":-" || op == "-" || op == ":=" || op == "=") {
      if (present) return all ? values(value, quoted) : splittable(joined, quoted);
      if (op == ":=" || op == "=") {
        const std::string assigned = nested_text(operand);
        vars_.scalars[name] = assigned;
        return splittable(assigned, quoted);
      }
      return nested(operand, quoted);
    }
    if (op == ":+" || op == "+") {
      if (present) nested(operand, quoted);
      return;
    }
    if (op == ":?" || op == "?") return present ? splittable(joined, quoted) : unexpanded(raw);
    if (!set) return unexpanded(raw);
    if (op == "#" || op == "##" || op == "%" || op == "%%")
      return splittable(trim(joined, op, nested_text(operand)), quoted);
    if (op == "^^" || op == ",,") {
      std::string out = joined;
      for (char& c : out)
        c = char(op == "^^" ? std::toupper(static_cast<unsigned char>(c))
                            : std::tolower(static_cast<unsigned char>(c)));
      return splittable(out, quoted);
    }
    if ((op == "/" || op == "//") && operand.find('/') != std::string::npos) {
      const std::string pattern = nested_text(operand.substr(0, operand.find('/')));
      const std::string with = nested_text(operand.substr(operand.find('/') + 1));
      if (pattern.empty() || pattern.find_first_of("*?[") != std::string::npos) return unexpanded(raw);
      std::string out = joined;
      for (size_t at = out.find(pattern); at != std::string::npos;
           at = op == "//" ? out.find(pattern, at + with.size()) : std::string::npos)
        out.replace(at, pattern.size(), with);
      return splittable(out, quoted);
    }
    unexpanded(raw);  // substrings `${A:1:2}`, `${A^}` and the like
  }

  // `sed 's<d>A<d>B<d>[g]'` on one line, A and B literal (no regular-expression characters): the string
  // function NeMo-RL's test scripts use to find their config. False for anything else.
  static bool sed_substitute(const std::string& text, const std::string& script, std::string& out) {
    if (script.size() < 4 || script[0] != 's') return false;
    const char d = script[1];
    const size_t mid = script.find(d, 2), end = mid == std::string::npos ? mid : script.find(d, mid + 1);
    if (end == std::string::npos) return false;
    const std::string from = script.substr(2, mid - 2), to = script.substr(mid + 1, end - mid - 1);
    const std::string flags = script.substr(end + 1);
    if (from.empty() || (flags != "" && flags != "g") ||
        from.find_first_of(".*[]^$\\") != std::string::npos || to.find_first_of("&\\") != std::string::npos ||
        text.find('\n') != std::string::npos)
      return false;
    out = text;
    for (size_t at = out.find(from); at != std::string::npos;
         at = flags == "g" ? out.find(from, at + to.size()) : std::string::npos)
      out.replace(at, from.size(), to);
    return true;
  }

  // Bash's `#`/`##`/`%`/`%%`: the shortest or longest prefix or suffix matching a glob pattern removed.
  static std::string trim(const std::string& v, const std::string& op, const std::string& pattern) {
    const bool prefix = op[0] == '#', longest = op.size() == 2;
    const size_t n = v.size();
    for (size_t k = 0; k <= n; ++k) {
      const size_t len = longest ? n - k : k;
      const std::string part = prefix ? v.substr(0, len) : v.substr(n - len);
      if (fnmatch(pattern.c_str(), part.c_str(), 0) == 0)
        return prefix ? v.substr(len) : v.substr(0, n - len);
    }
    return v;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (size_t k = 0; k < v.size(); ++k) out += (k ? " " : "") + v[k];
    return out;
  }

  // The value(s) of a parameter; false when unset. A launch script runs without arguments.
  bool lookup(const std::string& name, const std::string& index, std::vector<std::string>& out) const {
    if (name == "@" || name == "*") return true;
    if (name == "#") return out = {"0"}, true;
    if (name == "0") return out = {vars_.script}, true;
    if (name == "BASH_SOURCE" && (index.empty() || index == "0"))
      return out = {vars_.source.empty() ? vars_.script : vars_.source}, true;
    if (std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    const auto array = vars_.arrays.find(name);
    if (array != vars_.arrays.end()) {
      if (index == "@" || index == "*") return out = array->second, true;
      long long k = 0;
      std::string why;
      if (!index.empty() && !eval_arithmetic(index, vars_, k, why)) return false;
      if (k < 0 || k >= static_cast<long long>(array->second.size())) return false;
      return out = {array->second[static_cast<size_t>(k)]}, true;
    }
    const auto scalar = vars_.scalars.find(name);
    if (scalar == vars_.scalars.end()) return false;
    if (!index.empty() && index != "0" && index != "@" && index != "*") return false;
    return out = {scalar->second}, true;
  }

  ShellVars& vars_;
  bool split_;
  std::vector<std::string> fields_;
  bool open_ = false;
  std::string unexpanded_;
};

}  // namespace

ExpandedWord expand_word(const std::string& word, ShellVars& vars, bool split) {
  return Expander(vars, split).run(word);
}

}  // namespace realign::engines
