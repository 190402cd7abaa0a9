#include "tensorfile/sharded_checkpoint.h"

#include <sys/stat.h>

#include <cstdio>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/read_file.h"

namespace realign::tensorfile {

namespace {

const char* kIndexName = "model.safetensors.index.json";
const char* kSingleName = "model.safetensors";

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string shard_name(int i, int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", i + 1, n);
  return buf;
}

}  // namespace

ShardIndex read_shard_index(const std::string& path) {
  Json j = Json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path, "not valid JSON");
  if (!j.is_object()) throw Error(path, "must hold a JSON object");
  ShardIndex index;
  auto md = j.find("metadata");
  if (md != j.end() && !md->is_null()) {
    if (!md->is_object()) throw Error(path + ": metadata", "must be an object");
    auto ts = md->find("total_size");
    if (ts != md->end()) index.total_size = json_to_int(*ts, path + ": metadata.total_size");
  }
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object()) throw Error(path, "lacks a \"weight_map\" object");
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    std::string file = json_to_string(it.value(), path + ": weight_map['" + it.key() + "']");
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      throw Error(path + ": weight_map['" + it.key() + "']",
                  "'" + file + "' is not a file name in the same directory");
    index.weight_map[it.key()] = file;
  }
  return index;
}

void write_shard_index(const std::string& path, const ShardIndex& index) {
  Json j;
  j["metadata"] = {{"total_size", index.total_size}};
  Json wm = Json::object();
  for (const auto& [k, v] : index.weight_map) wm[k] = v;
  j["weight_map"] = wm;
  write_text_file(path, j.dump(2) + "\n");
}

std::vector<int> assign_shards(const std::vector<size_t>& tensor_bytes, size_t max_shard_bytes) {
  std::vector<int> shard(tensor_bytes.size());
  int current = 0;
  size_t used = 0;
  bool empty = true;
  for (size_t i = 0; i < tensor_bytes.size(); ++i) {
    if (!empty && used + tensor_bytes[i] > max_shard_bytes) {
      ++current;
      used = 0;
      empty = true;
    }
    shard[i] = current;
    used += tensor_bytes[i];
    empty = false;
  }
  return shard;
}

std::vector<std::string> write_sharded_safetensors(const std::string& dir,
                                                   const std::vector<TensorSource>& tensors,
                                                   size_t max_shard_bytes,
                                                   const std::map<std::string, std::string>& metadata) {
  if (!is_dir(dir)) throw Error(dir, "not a directory");
  if (max_shard_bytes == 0) throw Error(dir, "max shard size must be positive");
  std::vector<size_t> bytes;
  for (const auto& t : tensors) bytes.push_back(t.nbytes);
  std::vector<int> shard = assign_shards(bytes, max_shard_bytes);
  int n = tensors.empty() ? 1 : shard.back() + 1;
  std::vector<std::vector<TensorSource>> groups(n);
  for (size_t i = 0; i < tensors.size(); ++i) groups[shard[i]].push_back(tensors[i]);
  std::vector<std::string> written;
  if (n == 1) {
    write_safetensors(dir + "/" + kSingleName, groups[0], metadata);
    written.push_back(dir + "/" + kSingleName);
    return written;
  }
  ShardIndex index;
  for (int s = 0; s < n; ++s) {
    std::string name = shard_name(s, n);
    write_safetensors(dir + "/" + name, groups[s], metadata);
    written.push_back(dir + "/" + name);
    for (const auto& t : groups[s]) {
      index.weight_map[t.name] = name;
      index.total_size += static_cast<int64_t>(t.nbytes);
    }
  }
  // The index goes last: a reader that finds it finds every shard complete.
  write_shard_index(dir + "/" + kIndexName, index);
  written.push_back(dir + "/" + kIndexName);
  return written;
}

ShardedCheckpoint::ShardedCheckpoint(const std::string& dir_or_file) : where_(dir_or_file) {
  if (!is_dir(dir_or_file)) {
    files_.push_back(std::make_unique<SafetensorsFile>(dir_or_file));
  } else if (exists(dir_or_file + "/" + kIndexName)) {
    const std::string index_path = dir_or_file + "/" + kIndexName;
    ShardIndex index = read_shard_index(index_path);
    std::map<std::string, SafetensorsFile*> by_file;
    for (const auto& [tensor, file] : index.weight_map) {
      if (by_file.count(file)) continue;
      files_.push_back(std::make_unique<SafetensorsFile>(dir_or_file + "/" + file));
      by_file[file] = files_.back().get();
    }
    for (const auto& [tensor, file] : index.weight_map)
      if (by_file[file]->find(tensor) == nullptr)
        throw Error(index_path + ": weight_map['" + tensor + "']",
                    "shard '" + file + "' holds no such tensor");
  } else if (exists(dir_or_file + "/" + kSingleName)) {
    files_.push_back(std::make_unique<SafetensorsFile>(dir_or_file + "/" + kSingleName));
  } else {
    throw Error(dir_or_file, std::string("holds neither ") + kIndexName + " nor " + kSingleName);
  }
  for (const auto& f : files_)
    for (const TensorView& t : f->tensors())
      if (!by_name_.emplace(t.name, &t).second)
        throw Error(f->path(), "tensor '" + t.name + "' also appears in another shard");
}

std::vector<const TensorView*> ShardedCheckpoint::tensors() const {
  std::vector<const TensorView*> out;
  for (const auto& [name, t] : by_name_) out.push_back(t);
  return out;
}

const TensorView* ShardedCheckpoint::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorView& ShardedCheckpoint::at(const std::string& name) const {
  const TensorView* t = find(name);
  if (t == nullptr) throw Error(where_, "checkpoint has no tensor named '" + name + "'");
  return *t;
}

}  // namespace realign::tensorfile
