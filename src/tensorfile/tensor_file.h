// The torch side of tensorfile: safetensors files and sharded checkpoint directories loaded into
// name -> at::Tensor (copied out of the map) and saved from one, with a chosen on-disk floating dtype. Names
// pass through unchanged; mapping HF names to realign's canonical names is the model's business.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>

#include "tensorfile/dtype.h"
#include "tensorfile/safetensors.h"

namespace realign::tensorfile {

using TensorMap = std::map<std::string, at::Tensor>;

at::ScalarType to_scalar_type(DType dtype);
// Throws Error naming `what` for types safetensors cannot hold (complex, quantized, ...).
DType dtype_of(at::ScalarType type, const std::string& what);

// A CPU tensor holding a copy of the view's bytes; floating tensors converted to `float_dtype` when given
// (integer and bool tensors keep their type).
at::Tensor to_tensor(const TensorView& view, std::optional<at::ScalarType> float_dtype = std::nullopt);

// A .safetensors file or a checkpoint directory (index + shards, or model.safetensors).
TensorMap load_tensors(const std::string& dir_or_file,
                       std::optional<at::ScalarType> float_dtype = std::nullopt);

// Saves floating tensors as `float_dtype_on_disk` (kF32, kF16 or kBF16); others keep their type. Tensors may
// live on any device and be non-contiguous.
void save_tensors(const std::string& path, const TensorMap& tensors, DType float_dtype_on_disk,
                  const std::map<std::string, std::string>& metadata = {});
// Same into a directory, split into shards of at most `max_shard_bytes` (see write_sharded_safetensors).
void save_tensors_sharded(const std::string& dir, const TensorMap& tensors, DType float_dtype_on_disk,
                          size_t max_shard_bytes, const std::map<std::string, std::string>& metadata = {});

}  // namespace realign::tensorfile
