#include "engines/hydra_config.h"

#include <algorithm>
#include <filesystem>

#include "core/config_file.h"
#include "core/error.h"
#include "core/read_file.h"
#include "engines/launch_config.h"
#include "engines/script_reader.h"

namespace realign::engines {
namespace {

namespace fs = std::filesystem;

// As the script's words expanded (`--config-path=$(pwd)/config` is absolute by then); "" for another type.
std::string text_of(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const ConfigEntry& e : entries)
    if (e.key == key && e.value.is_string()) return e.value.get<std::string>();
  return "";
}

std::string without_yaml(const std::string& name) {
  const fs::path p(name);
  return p.extension() == ".yaml" || p.extension() == ".yml" ? fs::path(p).replace_extension().string()
                                                             : name;
}

// The directories a --config-path may mean, most likely first. Without one, "config": what veRL's programs
// and its recipes' declare in @hydra.main.
std::vector<fs::path> config_dirs(const std::vector<ConfigEntry>& overrides, const std::string& script) {
  std::string path = text_of(overrides, "--config-path");
  if (path.empty()) path = "config";
  if (fs::path(path).is_absolute()) return {fs::path(path)};
  // Hydra: relative to the program declaring @hydra.main, here its module's or file's directory.
  fs::path program;
  if (const std::string module = text_of(overrides, "-m"); !module.empty()) {
    std::string dirs = module.substr(0, module.rfind('.') == std::string::npos ? 0 : module.rfind('.'));
    std::replace(dirs.begin(), dirs.end(), '.', '/');
    program = dirs;
  } else {
    program = fs::path(text_of(overrides, "--program")).parent_path();
  }
  const fs::path beside = fs::path(script).parent_path();
  return {program / path, beside / program / path, fs::path(path), beside / path};
}

struct Loader {
  const std::vector<std::string>& engine_configs;
  HydraLaunch& launch;

  // `path`'s tree with the configs its defaults list names merged in list order, its own keys where `_self_`
  // stands (last when it is not listed), as Hydra 1.1+ composes.
  Json load(const fs::path& path, int depth) {
    if (depth > 16) throw Error(path.string(), "its defaults include one another in a loop");
    Json config = parse_yaml(read_file(path.string()), path.string());
    if (!config.is_object()) throw Error(path.string(), "a Hydra config must hold a mapping");
    config.erase("hydra");  // Hydra's own settings (search path, run directory)
    Json defaults = config.contains("defaults") ? config["defaults"] : Json::array();
    config.erase("defaults");
    if (!defaults.is_array()) throw Error(path.string(), "defaults: expected a list");
    if (std::find(defaults.begin(), defaults.end(), Json("_self_")) == defaults.end())
      defaults.push_back("_self_");
    Json merged = Json::object();
    for (const Json& d : defaults) {
      if (d == Json("_self_")) {
        merge_config(merged, config);
      } else if (!d.is_string()) {
        // Hydra's own groups (logging, launcher) do not touch the run's settings.
        if (d.is_object() && d.size() == 1 && d.begin().key().find("hydra/") != std::string::npos) continue;
        launch.notes.push_back("defaults: " + d.dump() + " in " + path.string() +
                               " (a config group's choice) is not read; what it sets is read as the "
                               "engine's defaults");
      } else if (const std::string name = without_yaml(d.get<std::string>());
                 std::count(engine_configs.begin(), engine_configs.end(), name) > 0) {
        launch.base = name;
      } else {
        const fs::path parent = path.parent_path() / (name + ".yaml");
        if (!fs::exists(parent))
          throw Error(path.string(), "defaults: '" + name + "' is not found beside it (" + parent.string() +
                                         ") nor one of the engine's own configs");
        merge_config(merged, load(parent, depth + 1));
      }
    }
    return merged;
  }
};

}  // namespace

HydraLaunch read_hydra_launch(const std::string& text, const std::string& file,
                              const std::map<std::string, std::string>& env,
                              const std::vector<std::string>& engine_configs) {
  const std::vector<ConfigEntry> overrides = read_launch_overrides(text, file, env);
  HydraLaunch launch;
  const std::string named = text_of(overrides, "--config-name");
  launch.config_name = named.empty() ? engine_configs.front() : without_yaml(named);
  launch.base = engine_configs.front();
  if (std::count(engine_configs.begin(), engine_configs.end(), launch.config_name) > 0) {
    launch.base = launch.config_name;
  } else {
    for (const fs::path& dir : config_dirs(overrides, file))
      for (const char* ext : {".yaml", ".yml"})
        if (launch.config_file.empty() && fs::exists(dir / (launch.config_name + ext)))
          launch.config_file = (dir / (launch.config_name + ext)).lexically_normal().string();
    if (launch.config_file.empty()) {
      launch.notes.push_back("--config-name: '" + named +
                             "' is not found from --config-path (run realign where the launch runs); "
                             "what it sets beyond the command line is read as the engine's defaults");
    } else {
      launch.entries = flatten_config(Loader{engine_configs, launch}.load(launch.config_file, 0));
    }
  }
  apply_overrides(launch.entries, overrides);
  resolve_interpolations(launch.entries, env);
  return launch;
}

}  // namespace realign::engines
