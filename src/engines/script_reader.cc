#include "engines/script_reader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <map>
#include <regex>

#include "core/error.h"
#include "graph/model_spec.h"

namespace realign::engines {
namespace {

using Vars = std::map<std::string, std::string>;
using Command = std::vector<std::string>;

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Expands the variable reference at s[i] == '$' ($NAME, ${NAME}, ${NAME:-default}, ${NAME-default}) into
// `out` and returns the index after it. A variable the script never assigned stays as written.
size_t expand_at(const std::string& s, size_t i, const Vars& vars, std::string& out) {
  if (i + 1 < s.size() && s[i + 1] == '{') {
    const size_t close = s.find('}', i + 2);
    if (close == std::string::npos) {
      out += s.substr(i);
      return s.size();
    }
    const std::string inner = s.substr(i + 2, close - i - 2);
    size_t name_end = 0;
    while (name_end < inner.size() && name_char(inner[name_end])) ++name_end;
    const std::string name = inner.substr(0, name_end);
    const auto it = vars.find(name);
    std::string fallback;
    bool has_fallback = false;
    if (inner.compare(name_end, 2, ":-") == 0) {
      fallback = inner.substr(name_end + 2), has_fallback = true;
    } else if (inner.compare(name_end, 1, "-") == 0) {
      fallback = inner.substr(name_end + 1), has_fallback = true;
    }
    if (it != vars.end() && !(it->second.empty() && has_fallback)) {
      out += it->second;
    } else if (has_fallback) {
      // The default may itself name variables.
      for (size_t k = 0; k < fallback.size();)
        k = fallback[k] == '$' ? expand_at(fallback, k, vars, out) : (out += fallback[k], k + 1);
    } else {
      out += s.substr(i, close - i + 1);
    }
    return close + 1;
  }
  size_t end = i + 1;
  while (end < s.size() && name_char(s[end])) ++end;
  const std::string name = s.substr(i + 1, end - i - 1);
  const auto it = vars.find(name);
  if (name.empty() || it == vars.end()) {
    out += s.substr(i, std::max<size_t>(end - i, 1));
    return std::max(end, i + 1);
  }
  out += it->second;
  return end;
}

// Splits one logical line into commands of words, with bash's quoting: '...' literal, "..." and bare words
// expanded, a backslash escaping the next character, `#` starting a comment at a word's start, and `;`,
// `&&`, `||` and `|` ending a command.
std::vector<Command> split_commands(const std::string& line, const Vars& vars) {
  std::vector<Command> commands(1);
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) commands.back().push_back(word);
    word.clear(), in_word = false;
  };
  for (size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      end_word(), ++i;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == ';' || c == '|' || c == '&') {
      end_word();
      if (!commands.back().empty()) commands.emplace_back();
      i += (i + 1 < line.size() && line[i + 1] == c) ? 2 : 1;
    } else if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      word += line.substr(i + 1, close == std::string::npos ? std::string::npos : close - i - 1);
      in_word = true;
      i = close == std::string::npos ? line.size() : close + 1;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < line.size() && line[i] != '"';) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          word += line[i + 1], i += 2;
        } else if (line[i] == '$') {
          i = expand_at(line, i, vars, word);
        } else {
          word += line[i++];
        }
      }
      ++i;
    } else if (c == '\\') {
      if (i + 1 < line.size()) word += line[i + 1];
      in_word = true, i += 2;
    } else if (c == '$') {
      in_word = true;
      i = expand_at(line, i, vars, word);
    } else {
      word += c, in_word = true, ++i;
    }
  }
  end_word();
  return commands;
}

// NAME=value words at the start of a command (after `export`): recorded; a pure assignment is no command.
bool record_assignments(const Command& command, Vars& vars) {
  static const std::regex assignment(R"(^([A-Za-z_][A-Za-z0-9_]*)=(.*)$)", std::regex::optimize);
  size_t i = !command.empty() && (command[0] == "export" || command[0] == "local") ? 1 : 0;
  std::smatch m;
  for (; i < command.size() && std::regex_match(command[i], m, assignment); ++i) vars[m[1]] = m[2];
  return i == command.size();
}

Json scalar(const std::string& text) {
  static const std::regex integer(R"(^[+-]?[0-9]+$)");
  static const std::regex number(R"(^[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?$)");
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text == "null" || text == "None") return nullptr;
  if (std::regex_match(text, integer)) return std::stoll(text);
  if (std::regex_match(text, number)) return std::stod(text);
  return text;
}

}  // namespace

namespace {

// Every command of the script in order, each with the variables assigned before it expanded.
std::vector<Command> commands_of(const std::string& script, const std::map<std::string, std::string>& env) {
  // Continuation lines join their successors.
  std::string joined;
  for (size_t i = 0; i < script.size(); ++i) {
    if (script[i] == '\\' && i + 1 < script.size() && script[i + 1] == '\n') {
      joined += ' ', ++i;
    } else if (script[i] == '\\' && i + 2 < script.size() && script[i + 1] == '\r' && script[i + 2] == '\n') {
      joined += ' ', i += 2;
    } else {
      joined += script[i];
    }
  }
  Vars vars(env.begin(), env.end());
  std::vector<Command> out;
  size_t line_start = 0;
  while (line_start <= joined.size()) {
    size_t line_end = joined.find('\n', line_start);
    if (line_end == std::string::npos) line_end = joined.size();
    for (Command& command : split_commands(joined.substr(line_start, line_end - line_start), vars))
      if (!record_assignments(command, vars)) out.push_back(std::move(command));
    line_start = line_end + 1;
  }
  return out;
}

// The flags that name a launch's config (Hydra's --config-path/--config-name, NeMo-RL's and AReaL's
// --config), with their short forms.
constexpr std::pair<const char*, const char*> kConfigFlags[] = {
    {"--config-name", "-cn"}, {"--config-path", "-cp"}, {"--config", ""}};

bool has(const std::vector<ConfigEntry>& entries, const std::string& key) {
  return std::any_of(entries.begin(), entries.end(), [&](const ConfigEntry& e) { return e.key == key; });
}

// Entries in order of first setting; a later setting of a key replaces its value in place.
void put(std::vector<ConfigEntry>& entries, const std::string& key, Json value) {
  for (ConfigEntry& e : entries)
    if (e.key == key) {
      e.value = std::move(value);
      return;
    }
  entries.push_back({key, std::move(value)});
}

}  // namespace

std::vector<ConfigEntry> read_launch_overrides(const std::string& script, const std::string& file,
                                               const std::map<std::string, std::string>& env) {
  // Dotted keys, or a top-level key in lower case (`allocation_mode=...`; an upper-case NAME=value is the
  // environment's).
  static const std::regex override_word(
      R"(^\+{0,2}([A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)+|[a-z_][a-z0-9_]*)=(.*)$)",
      std::regex::optimize);
  std::vector<ConfigEntry> best;
  int best_overrides = 0;
  for (const Command& command : commands_of(script, env)) {
    std::vector<ConfigEntry> entries;
    int overrides = 0;
    std::smatch m;
    for (size_t i = 0; i < command.size(); ++i) {
      const std::string& w = command[i];
      if (std::regex_match(w, m, override_word)) {
        put(entries, m[1], scalar(m[3])), ++overrides;
        continue;
      }
      if (w == "-m" && i + 1 < command.size()) {
        put(entries, "-m", command[++i]);
        continue;
      }
      if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0 && !has(entries, "--program")) {
        put(entries, "--program", w);
        continue;
      }
      for (const auto& [flag, short_flag] : kConfigFlags) {
        if (w.rfind(std::string(flag) + "=", 0) == 0) {
          put(entries, flag, w.substr(std::strlen(flag) + 1));
        } else if ((w == flag || (*short_flag && w == short_flag)) && i + 1 < command.size()) {
          put(entries, flag, command[++i]);
        } else {
          continue;
        }
        break;
      }
    }
    // A line naming its config is the launch even without overrides.
    if (std::any_of(std::begin(kConfigFlags), std::end(kConfigFlags),
                    [&](const auto& f) { return has(entries, f.first); }))
      ++overrides;
    if (overrides > best_overrides) best = std::move(entries), best_overrides = overrides;
  }
  if (best.empty())
    throw Error(file,
                "no command line passes key.path=value overrides or --config (as `python3 -m "
                "verl.trainer.main_ppo data.train_batch_size=...` does)");
  return best;
}

std::vector<ConfigEntry> read_launch_flags(const std::string& script, const std::string& file,
                                           const std::map<std::string, std::string>& env) {
  std::vector<ConfigEntry> best;
  int best_flags = 0;
  for (const Command& command : commands_of(script, env)) {
    // The program's own arguments: after `-m MODULE` (or a lone `--`, as `ray job submit ... -- python3 ...`
    // passes them), the last such mark.
    size_t i = 0;
    for (size_t k = 0; k < command.size(); ++k) {
      if (command[k] == "-m" && k + 1 < command.size()) i = k + 2;
      if (command[k] == "--") i = k + 1;
    }
    std::vector<ConfigEntry> entries;
    int flags = 0;
    for (; i < command.size(); ++i) {
      const std::string& w = command[i];
      if (w.size() < 3 || w.compare(0, 2, "--") != 0) continue;
      const size_t eq = w.find('=');
      if (eq != std::string::npos) {
        put(entries, w.substr(0, eq), scalar(w.substr(eq + 1)));
      } else if (i + 1 < command.size() && command[i + 1].compare(0, 2, "--") != 0) {
        put(entries, w, scalar(command[++i]));
      } else {
        put(entries, w, true);  // a switch
      }
      ++flags;
    }
    if (flags > best_flags) best = std::move(entries), best_flags = flags;
  }
  if (best.empty())
    throw Error(file,
                "no command line passes --flag value arguments (as `python3 -m "
                "openrlhf.cli.train_ppo_ray --pretrain ...` does)");
  return best;
}

const Json* LaunchSettings::find(const std::string& key) const {
  for (const ConfigEntry& e : entries_)
    if (e.key == key) {
      if (e.value.is_string() && e.value.get<std::string>().find('$') != std::string::npos) {
        const std::string v = e.value.get<std::string>();
        const size_t open = v.find("${");
        if (open != std::string::npos && v.find(':', open) < v.find('}', open) &&
            v.compare(open, 9, "${oc.env:") != 0)
          throw Error(key, "'" + v +
                               "' calls an OmegaConf resolver realign does not evaluate; set the key "
                               "on the command line");
        throw Error(key, "'" + v +
                             "' names a variable the script does not set; set it there or pass it as "
                             "--env NAME=VALUE");
      }
      return e.value.is_null() ? nullptr : &e.value;
    }
  return nullptr;
}

bool LaunchSettings::has(const std::string& key) const {
  for (const ConfigEntry& e : entries_)
    if (e.key == key) return true;
  return false;
}

int64_t LaunchSettings::integer(const std::string& key, int64_t fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number_integer()) throw Error(key, "must be an integer, got " + v->dump());
  return v->get<int64_t>();
}

double LaunchSettings::number(const std::string& key, double fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number()) throw Error(key, "must be a number, got " + v->dump());
  return v->get<double>();
}

bool LaunchSettings::flag(const std::string& key, bool fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw Error(key, "must be true or false, got " + v->dump());
  return v->get<bool>();
}

std::string LaunchSettings::text(const std::string& key, const std::string& fallback) const {
  const Json* v = find(key);
  if (!v) return fallback;
  return v->is_string() ? v->get<std::string>() : v->dump();
}

std::string model_for_path(const std::string& path) {
  // Compared without case, separators and the suffixes of fine-tuned and converted checkpoints.
  auto squeeze = [](std::string name) {
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (const char* suffix : {"-instruct", "-chat", "-hf", "-base", "-it", "-sft"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
          name.resize(name.size() - s.size()), dropped = true;
      }
    }
    if (name.rfind("meta-", 0) == 0) name = name.substr(5);
    std::string out;
    for (char c : name)
      if (c != '-' && c != '_' && c != '.') out += c;
    return out;
  };
  std::string last = path;
  while (!last.empty() && last.back() == '/') last.pop_back();
  last = last.substr(last.find_last_of('/') == std::string::npos ? 0 : last.find_last_of('/') + 1);
  const std::string wanted = squeeze(last);
  for (const std::string& builtin : builtin_model_names())
    if (squeeze(builtin) == wanted) return builtin;
  return path;
}

}  // namespace realign::engines
