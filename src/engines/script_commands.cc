#include "engines/script_commands.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/read_file.h"

namespace realign::engines {
namespace {

// Sourced files sourcing others: deep enough for env files, short of a file sourcing itself forever.
constexpr int kMaxSourceDepth = 8;

class ScriptReader {
 public:
  ScriptReader(const std::string& file, const std::map<std::string, std::string>& env,
               const WordObserver& observe)
      : observe_(observe) {
    vars_.scalars.insert(env.begin(), env.end());
    for (const char* name : {"HOME", "USER"})
      if (const char* v = std::getenv(name); v && !vars_.scalars.count(name)) vars_.scalars[name] = v;
    if (!vars_.scalars.count("PWD")) vars_.scalars["PWD"] = std::filesystem::current_path().string();
    vars_.script = file;
  }

  void read(const std::string& text, const std::string& file, int depth) {
    texts_[file] = text;
    for (const ShellCommand& c : split_commands(text)) command(c, file, depth);
  }

  // A `bash -c` string's commands, from line `first_line` of `file`. Its text is the string as expanded, a
  // `\` newline inside its double quotes joined, so a word's line is found in the file's own text: the first
  // line from the previous word's on that holds it (that word's line when none does).
  void read_command_string(const std::string& text, const std::string& file, int depth, int first_line) {
    std::vector<std::string> file_lines;
    std::string line_text;
    for (char ch : texts_[file] + "\n")
      if (ch == '\n') file_lines.push_back(line_text), line_text.clear();
      else line_text += ch;
    int at = first_line;
    for (ShellCommand c : split_commands(text)) {
      for (size_t w = 0; w < c.words.size(); ++w) {
        const std::string& word = c.words[w];
        for (int l = at; l <= int(file_lines.size()); ++l)
          if (file_lines[size_t(l - 1)].find(word) != std::string::npos) {
            at = l;
            break;
          }
        c.lines[w] = at;
      }
      c.line = c.lines.empty() ? at : c.lines[0];
      command(c, file, depth);
    }
  }

  std::vector<ScriptCommand> take() { return std::move(out_); }

 private:
  void command(const ShellCommand& c, const std::string& file, int depth) {
    std::vector<std::string> words = c.words;
    // Keywords that open or close a compound command: the command after them is read as any other.
    static const std::vector<std::string> keywords = {"then", "else", "do",    "{",     "!",
                                                      "if",   "elif", "while", "until", "time"};
    while (!words.empty() && std::find(keywords.begin(), keywords.end(), words[0]) != keywords.end())
      words.erase(words.begin());
    if (words.empty()) return;
    const std::string& first = words[0];
    if (first == "export" || first == "local" || first == "declare" || first == "readonly" ||
        first == "typeset") {
      for (size_t k = 1; k < words.size(); ++k)
        if (words[k].empty() || words[k][0] != '-') assign(words[k], c.lines.at(k + c.words.size() - words.size()));
      return;
    }
    if (first == "unset") {
      for (size_t k = 1; k < words.size(); ++k)
        vars_.scalars.erase(words[k]), vars_.arrays.erase(words[k]), array_lines_.erase(words[k]);
      return;
    }
    if ((first == "source" || first == ".") && words.size() >= 2) {
      source(words[1], file, depth);
      return;
    }
    // Assignments before a command hold for that command only, as in bash; alone, for the script.
    size_t k = 0;
    while (k < words.size() && is_assignment(words[k])) ++k;
    if (k == words.size()) {
      for (size_t w = 0; w < words.size(); ++w) assign(words[w], c.lines.at(w + c.words.size() - words.size()));
      return;
    }
    ScriptCommand out{{}, c.line, file, {}};
    const size_t skipped = c.words.size() - words.size();  // the keywords dropped above
    static const std::regex whole_array(R"(^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?$)");
    for (; k < words.size(); ++k) {
      ExpandedWord e = expand(words[k]);
      out.words.insert(out.words.end(), e.fields.begin(), e.fields.end());
      // An array's elements are where its assignment writes them (`ARGS=(\n --flag v\n ...)`).
      std::smatch m;
      const auto elements = std::regex_match(words[k], m, whole_array) ? array_lines_.find(m[1])
                                                                         : array_lines_.end();
      if (elements != array_lines_.end() && elements->second.size() == e.fields.size())
        out.lines.insert(out.lines.end(), elements->second.begin(), elements->second.end());
      else
        out.lines.insert(out.lines.end(), e.fields.size(), c.lines.at(k + skipped));
    }
    // A shell's command string: `bash -c STRING` (or -lc, -ec, ...; sh, /bin/bash, ...).
    std::string inner;
    int inner_line = 0;
    for (size_t w = 0; w + 2 < out.words.size(); ++w) {
      const std::string shell = out.words[w].substr(out.words[w].find_last_of('/') + 1);
      const std::string& flag = out.words[w + 1];
      if ((shell == "bash" || shell == "sh") && flag.size() >= 2 && flag[0] == '-' &&
          flag.find('c') != std::string::npos && flag.find_first_not_of("-abcefhiklmnptuvx") == std::string::npos) {
        inner = out.words[w + 2], inner_line = out.lines[w + 2];
        break;
      }
    }
    out_.push_back(std::move(out));
    if (!inner.empty() && depth < kMaxSourceDepth) read_command_string(inner, file, depth + 1, inner_line);
  }

  static bool is_assignment(const std::string& word) {
    static const std::regex assignment(R"(^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=[\s\S]*$)");
    return std::regex_match(word, assignment);
  }

  // `line`: where the word starts (an array's elements are kept with their own lines).
  void assign(const std::string& word, int line) {
    static const std::regex parts(R"(^([A-Za-z_][A-Za-z0-9_]*)(\[([^\]]*)\])?(\+?)=([\s\S]*)$)");
    std::smatch m;
    if (!std::regex_match(word, m, parts)) return;  // `export NAME`: already a variable or nothing
    const std::string name = m[1], index = m[3], value = m[5];
    const bool append = m[4] == "+";
    if (value.size() >= 2 && value.front() == '(' && value.back() == ')' && !m[2].matched) {
      std::vector<std::string> elements;
      std::vector<int> lines;
      // The text after `(` starts on the word's line (`NAME=(` opens the word).
      for (const ShellCommand& c : split_commands(value.substr(1, value.size() - 2)))
        for (size_t w = 0; w < c.words.size(); ++w) {
          ExpandedWord e = expand(c.words[w]);
          elements.insert(elements.end(), e.fields.begin(), e.fields.end());
          lines.insert(lines.end(), e.fields.size(), line + c.lines[w] - 1);
        }
      std::vector<std::string>& array = vars_.arrays[name];
      std::vector<int>& array_lines = array_lines_[name];
      if (!append) array.clear(), array_lines.clear();
      array_lines.resize(array.size(), line);
      array.insert(array.end(), elements.begin(), elements.end());
      array_lines.insert(array_lines.end(), lines.begin(), lines.end());
      vars_.scalars.erase(name);
      return;
    }
    ExpandedWord e = expand(value, false);
    const std::string v = e.fields.empty() ? "" : e.fields[0];
    if (m[2].matched) {
      long long at = 0;
      std::string why;
      if (!eval_arithmetic(index, vars_, at, why) || at < 0) return;
      std::vector<std::string>& array = vars_.arrays[name];
      if (array.size() <= static_cast<size_t>(at)) array.resize(static_cast<size_t>(at) + 1);
      array[static_cast<size_t>(at)] = v;
      std::vector<int>& array_lines = array_lines_[name];
      array_lines.resize(array.size(), line);
      array_lines[static_cast<size_t>(at)] = line;
      return;
    }
    if (vars_.arrays.count(name)) {  // NAME=x on an array sets its first element
      vars_.arrays[name].resize(std::max<size_t>(vars_.arrays[name].size(), 1));
      vars_.arrays[name][0] = append ? vars_.arrays[name][0] + v : v;
      array_lines_[name].resize(vars_.arrays[name].size(), line);
      array_lines_[name][0] = line;
      return;
    }
    vars_.scalars[name] = append ? vars_.scalars[name] + v : v;
  }

  // An env file is looked for as bash would find it from the working directory, then beside the file
  // sourcing it (how scripts name their `common.env` when run from elsewhere). Not found, it sets nothing:
  // a value it would have given is named where a key needs it.
  void source(const std::string& word, const std::string& from, int depth) {
    ExpandedWord e = expand(word);
    if (!e.unexpanded.empty() || e.fields.size() != 1 || depth >= kMaxSourceDepth) return;
    const std::filesystem::path path(e.fields[0]);
    std::vector<std::filesystem::path> candidates = {path};
    if (path.is_relative()) candidates.push_back(std::filesystem::path(from).parent_path() / path);
    for (const auto& candidate : candidates) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      const std::string outer = vars_.source;
      vars_.source = candidate.string();
      read(read_file(candidate.string()), candidate.string(), depth + 1);
      vars_.source = outer;
      return;
    }
  }

  ExpandedWord expand(const std::string& word, bool split = true) {
    if (observe_) observe_(word, vars_, split);
    return expand_word(word, vars_, split);
  }

  const WordObserver& observe_;
  std::map<std::string, std::string> texts_;  // each file read, by name
  // The line of each element of each array (vars_.arrays).
  std::map<std::string, std::vector<int>> array_lines_;
  ShellVars vars_;
  std::vector<ScriptCommand> out_;
};

}  // namespace

std::vector<ScriptCommand> script_commands(const std::string& script, const std::string& file,
                                           const std::map<std::string, std::string>& env,
                                           const WordObserver& observe) {
  ScriptReader reader(file, env, observe);
  reader.read(script, file, 0);
  return reader.take();
}

}  // namespace realign::engines
