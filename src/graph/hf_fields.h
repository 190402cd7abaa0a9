// Reading one field of an HF config.json: errors name the file and the key ("config.json: num_experts").
#pragma once

#include <cstdint>
#include <string>

#include "core/json.h"

namespace realign::hf {

int64_t get_int(const Json& c, const char* key, const std::string& path);  // required
int64_t get_int_or(const Json& c, const char* key, int64_t fallback, const std::string& path);
double get_double_or(const Json& c, const char* key, double fallback, const std::string& path);
bool get_bool_or(const Json& c, const char* key, bool fallback, const std::string& path);
std::string get_string_or(const Json& c, const char* key, const std::string& fallback,
                          const std::string& path);

}  // namespace realign::hf
