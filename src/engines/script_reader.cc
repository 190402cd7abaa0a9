#include "engines/script_reader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <map>
#include <regex>

#include "core/error.h"
#include "engines/script_commands.h"

namespace realign::engines {
namespace {

using Command = std::vector<std::string>;

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

// Every command of the script in order, its words expanded (script_commands.h), with their lines.
std::vector<ScriptCommand> commands_of(const std::string& script, const std::string& file,
                                       const std::map<std::string, std::string>& env) {
  return script_commands(script, file, env);
}

// The flags that name a launch's config (Hydra's --config-path/--config-name, NeMo-RL's and AReaL's
// --config), with their short forms.
constexpr std::pair<const char*, const char*> kConfigFlags[] = {
    {"--config-name", "-cn"}, {"--config-path", "-cp"}, {"--config", ""}};

bool has(const std::vector<ConfigEntry>& entries, const std::string& key) {
  return std::any_of(entries.begin(), entries.end(), [&](const ConfigEntry& e) { return e.key == key; });
}

// Entries in order of first setting; a later setting of a key replaces its value (and where it is) in place.
// `at`: the command, `word` the index of the word that sets it.
void put(std::vector<ConfigEntry>& entries, const std::string& key, Json value, const ScriptCommand& at,
         size_t word) {
  const int line = word < at.lines.size() ? at.lines[word] : at.line;
  for (ConfigEntry& e : entries)
    if (e.key == key) {
      e.value = std::move(value), e.file = at.from, e.line = line;
      return;
    }
  entries.push_back({key, std::move(value), at.from, line});
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
  for (const ScriptCommand& c : commands_of(script, file, env)) {
    const Command& command = c.words;
    std::vector<ConfigEntry> entries;
    int overrides = 0;
    std::smatch m;
    for (size_t i = 0; i < command.size(); ++i) {
      const std::string& w = command[i];
      if (std::regex_match(w, m, override_word)) {
        put(entries, m[1], scalar(m[3]), c, i), ++overrides;
        continue;
      }
      if (w == "-m" && i + 1 < command.size()) {
        put(entries, "-m", command[i + 1], c, i), ++i;
        continue;
      }
      if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0 && !has(entries, "--program")) {
        put(entries, "--program", w, c, i);
        continue;
      }
      for (const auto& [flag, short_flag] : kConfigFlags) {
        if (w.rfind(std::string(flag) + "=", 0) == 0) {
          put(entries, flag, w.substr(std::strlen(flag) + 1), c, i);
        } else if ((w == flag || (*short_flag && w == short_flag)) && i + 1 < command.size()) {
          put(entries, flag, command[i + 1], c, i), ++i;
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
  for (const ScriptCommand& c : commands_of(script, file, env)) {
    const Command& command = c.words;
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
        put(entries, w.substr(0, eq), scalar(w.substr(eq + 1)), c, i);
      } else if (i + 1 < command.size() && command[i + 1].compare(0, 2, "--") != 0) {
        put(entries, w, scalar(command[i + 1]), c, i), ++i;
      } else {
        put(entries, w, true, c, i);  // a switch
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

namespace {

// Why a value still holds a `$` construct (shell_words.h leaves what it cannot know as written, and OmegaConf
// interpolations reach here unresolved), in the words of the construct itself.
std::string unresolved(const std::string& v) {
  static const std::regex resolver(R"(\$\{([A-Za-z_][A-Za-z0-9_.]*):[^-=+?])");
  static const std::regex variable(R"(\$\{?#?([A-Za-z_][A-Za-z0-9_]*))");
  std::smatch m;
  const size_t command = std::min(v.find("$("), v.find('`'));
  if (command != std::string::npos && v.compare(command, 3, "$((") != 0)
    return "'" + v + "' takes a command's output (" +
           v.substr(command, v.find_first_of(")`", command + 1) + 1 - command) +
           "), and realign runs no command; set the value in the script, or give the variable it is read "
           "from "
           "with --env NAME=VALUE";
  if (std::regex_search(v, m, resolver) && m[1] != "oc.env") {
    const std::string name = m[1];
    if (name == "add" || name == "mul" || name == "div" || name == "max")
      return "'" + v + "' calls NeMo-RL's resolver " + name +
             " over values realign cannot read as two numbers; set the key on the command line";
    return "'" + v + "' calls the OmegaConf resolver " + name +
           ", which realign does not evaluate; set the key on the command line";
  }
  static const std::regex argument(R"(\$\{?([0-9]+)\}?)");
  if (std::regex_search(v, m, argument))
    return "'" + v + "' is the script's argument $" + std::string(m[1]) +
           ", and import reads the script as run without arguments; write the value in the script";
  const std::string arithmetic = v.find("$((") != std::string::npos ? "arithmetic over " : "";
  if (std::regex_search(v, m, variable))
    return "'" + v + "' is " + arithmetic + "${" + std::string(m[1]) +
           "}, which the script does not set (nor --env); set it there or pass --env " + std::string(m[1]) +
           "=VALUE";
  return "'" + v + "' holds a shell construct realign does not expand (" + v.substr(v.find('$')) +
         "); set the value in the script";
}

}  // namespace

const Json* LaunchSettings::find(const std::string& key) const {
  for (const ConfigEntry& e : entries_)
    if (e.key == key) {
      if (e.value.is_string() && e.value.get<std::string>().find('$') != std::string::npos)
        throw Error(key, unresolved(e.value.get<std::string>()));
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

}  // namespace realign::engines
