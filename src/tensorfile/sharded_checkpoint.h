// Sharded safetensors checkpoints as HF writes them: model-00001-of-0000N.safetensors plus
// model.safetensors.index.json ({"metadata": {"total_size": ...}, "weight_map": {tensor: file}}), or a single
// model.safetensors when everything fits in one shard.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensorfile/safetensors.h"

namespace realign::tensorfile {

struct ShardIndex {
  int64_t total_size = 0;                         // metadata.total_size: bytes of tensor data
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name (relative to the dir)
  bool operator==(const ShardIndex& o) const {
    return total_size == o.total_size && weight_map == o.weight_map;
  }
};

// Reads and checks an index file (errors name the file and field).
ShardIndex read_shard_index(const std::string& path);
void write_shard_index(const std::string& path, const ShardIndex& index);

// Greedy split in the given order, as HF's shard_checkpoint does: a shard is closed when the next tensor
// would push it past `max_shard_bytes`; a tensor larger than the limit gets a shard of its own. Returns the
// index of the shard for each tensor.
std::vector<int> assign_shards(const std::vector<size_t>& tensor_bytes, size_t max_shard_bytes);

// Writes `tensors` into `dir` (which must exist): one "model.safetensors" when one shard suffices, otherwise
// model-0000i-of-0000N.safetensors and model.safetensors.index.json. Returns the files written.
std::vector<std::string> write_sharded_safetensors(const std::string& dir,
                                                   const std::vector<TensorSource>& tensors,
                                                   size_t max_shard_bytes,
                                                   const std::map<std::string, std::string>& metadata = {});

// A checkpoint directory (or a single .safetensors file) opened for reading: every shard mapped, every
// weight_map entry checked against the shard that should hold it.
class ShardedCheckpoint {
 public:
  explicit ShardedCheckpoint(const std::string& dir_or_file);

  // All tensors, sorted by name.
  std::vector<const TensorView*> tensors() const;
  const TensorView* find(const std::string& name) const;
  const TensorView& at(const std::string& name) const;
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }

 private:
  std::string where_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> by_name_;
};

}  // namespace realign::tensorfile
