// UTF-8 helpers for the tokenizers: validation with the offending offset, and code point encoding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace realign {

// The byte offset of the first invalid sequence (overlong, surrogate, > U+10FFFF, truncated), or nullopt.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Decodes the code point starting at text[pos] (which must be valid UTF-8) and advances pos.
uint32_t next_code_point(std::string_view text, size_t& pos);

void append_utf8(std::string& out, uint32_t code_point);

}  // namespace realign
