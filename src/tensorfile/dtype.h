// DType: the element types a safetensors file may hold, with their on-disk names ("BF16") and sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace realign::tensorfile {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

size_t dtype_size(DType dtype);
// The safetensors spelling: "F32", "BF16", "BOOL", ...
std::string to_string(DType dtype);
std::optional<DType> dtype_from_string(const std::string& name);

}  // namespace realign::tensorfile
