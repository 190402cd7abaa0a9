// Config files: YAML or JSON on disk, one Json in memory, adjusted by "a.b.c=value" overrides.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign {

// Parses YAML (a superset of JSON). Errors name the file and line.
Json parse_yaml(const std::string& text, const std::string& source_name);
Json load_config_file(const std::string& path);

// Applies "key.sub[2].leaf=value" overrides; the value is read as YAML ("8", "true", "[1,2]", "llama2-7b").
// Intermediate objects are created as needed; indexing into a missing list entry is an error.
void apply_override(Json& config, const std::string& assignment);
void apply_overrides(Json& config, const std::vector<std::string>& assignments);

}  // namespace realign
