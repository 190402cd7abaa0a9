#include "tensorfile/dtype.h"

namespace realign::tensorfile {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[] = {
    {DType::kF64, "F64", 8}, {DType::kF32, "F32", 4},   {DType::kF16, "F16", 2}, {DType::kBF16, "BF16", 2},
    {DType::kI64, "I64", 8}, {DType::kI32, "I32", 4},   {DType::kI16, "I16", 2}, {DType::kI8, "I8", 1},
    {DType::kU8, "U8", 1},   {DType::kBool, "BOOL", 1},
};
}  // namespace

size_t dtype_size(DType dtype) { return kInfo[static_cast<int>(dtype)].size; }

std::string to_string(DType dtype) { return kInfo[static_cast<int>(dtype)].name; }

std::optional<DType> dtype_from_string(const std::string& name) {
  for (const auto& info : kInfo)
    if (name == info.name) return info.dtype;
  return std::nullopt;
}

}  // namespace realign::tensorfile
