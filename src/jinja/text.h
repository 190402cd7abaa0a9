// String operations of templates as @huggingface/jinja computes them: by code point where JavaScript's
// strings do (length, indexing, slicing), JavaScript's Unicode trim, ASCII-only case changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace realign::jinja {

std::vector<uint32_t> code_points(const std::string& s);
// The UTF-8 text of code points [b, e) of `cps`.
std::string from_code_points(const std::vector<uint32_t>& cps, size_t b, size_t e);
// JavaScript's trim/trimStart/trimEnd (Unicode White_Space and the BOM).
std::string trim(const std::string& s, bool left, bool right);
std::string ascii_case(std::string s, bool upper);
// Python's str.replace: at most `count` replacements (all when negative); an empty `from` changes nothing.
std::string replace_str(const std::string& s, const std::string& from, const std::string& to, int64_t count);
// Python's str.title (every_word) or str.capitalize.
std::string title(const std::string& s, bool every_word);

}  // namespace realign::jinja
