#include "tensorfile/tensor_file.h"

#include <ATen/ATen.h>

#include <cstring>

#include "core/error.h"
#include "tensorfile/sharded_checkpoint.h"

namespace realign::tensorfile {

at::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return at::kDouble;
    case DType::kF32:
      return at::kFloat;
    case DType::kF16:
      return at::kHalf;
    case DType::kBF16:
      return at::kBFloat16;
    case DType::kI64:
      return at::kLong;
    case DType::kI32:
      return at::kInt;
    case DType::kI16:
      return at::kShort;
    case DType::kI8:
      return at::kChar;
    case DType::kU8:
      return at::kByte;
    case DType::kBool:
      return at::kBool;
  }
  throw Error("unknown dtype");
}

DType dtype_of(at::ScalarType type, const std::string& what) {
  switch (type) {
    case at::kDouble:
      return DType::kF64;
    case at::kFloat:
      return DType::kF32;
    case at::kHalf:
      return DType::kF16;
    case at::kBFloat16:
      return DType::kBF16;
    case at::kLong:
      return DType::kI64;
    case at::kInt:
      return DType::kI32;
    case at::kShort:
      return DType::kI16;
    case at::kChar:
      return DType::kI8;
    case at::kByte:
      return DType::kU8;
    case at::kBool:
      return DType::kBool;
    default:
      throw Error(what,
                  std::string("tensor type ") + c10::toString(type) + " cannot be stored in safetensors");
  }
}

at::Tensor to_tensor(const TensorView& view, std::optional<at::ScalarType> float_dtype) {
  // Copy through memcpy rather than from_blob: the map's bytes need not be aligned to the element size.
  at::Tensor t = at::empty(view.shape, at::TensorOptions().dtype(to_scalar_type(view.dtype)));
  if (view.nbytes > 0) std::memcpy(t.data_ptr(), view.data, view.nbytes);
  if (float_dtype && at::isFloatingType(t.scalar_type()) && t.scalar_type() != *float_dtype)
    t = t.to(*float_dtype);
  return t;
}

TensorMap load_tensors(const std::string& dir_or_file, std::optional<at::ScalarType> float_dtype) {
  ShardedCheckpoint ckpt(dir_or_file);
  TensorMap out;
  for (const TensorView* v : ckpt.tensors()) out.emplace(v->name, to_tensor(*v, float_dtype));
  return out;
}

namespace {

// Contiguous CPU copies in their on-disk types; `sources` points into `keep`.
void prepare(const TensorMap& tensors, DType float_dtype, std::vector<at::Tensor>* keep,
             std::vector<TensorSource>* sources) {
  if (float_dtype != DType::kF32 && float_dtype != DType::kF16 && float_dtype != DType::kBF16)
    throw Error("float_dtype_on_disk",
                to_string(float_dtype) + " is not a floating dtype (use F32, F16 or BF16)");
  keep->reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) throw Error(name, "tensor is undefined");
    DType dt = dtype_of(tensor.scalar_type(), name);
    at::Tensor t = tensor.to(at::kCPU);
    if (at::isFloatingType(t.scalar_type())) {
      dt = float_dtype;
      t = t.to(to_scalar_type(dt));
    }
    t = t.contiguous();
    keep->push_back(t);
    TensorSource s;
    s.name = name;
    s.dtype = dt;
    s.shape = t.sizes().vec();
    s.data = t.data_ptr();
    s.nbytes = t.numel() * t.element_size();
    sources->push_back(std::move(s));
  }
}

}  // namespace

void save_tensors(const std::string& path, const TensorMap& tensors, DType float_dtype_on_disk,
                  const std::map<std::string, std::string>& metadata) {
  std::vector<at::Tensor> keep;
  std::vector<TensorSource> sources;
  prepare(tensors, float_dtype_on_disk, &keep, &sources);
  write_safetensors(path, sources, metadata);
}

void save_tensors_sharded(const std::string& dir, const TensorMap& tensors, DType float_dtype_on_disk,
                          size_t max_shard_bytes, const std::map<std::string, std::string>& metadata) {
  std::vector<at::Tensor> keep;
  std::vector<TensorSource> sources;
  prepare(tensors, float_dtype_on_disk, &keep, &sources);
  write_sharded_safetensors(dir, sources, max_shard_bytes, metadata);
}

}  // namespace realign::tensorfile
