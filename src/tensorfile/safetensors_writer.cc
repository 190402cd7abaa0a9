#include <algorithm>
#include <set>

#include "core/atomic_file.h"
#include "core/json.h"
#include "tensorfile/safetensors.h"

namespace realign::tensorfile {

namespace {

// HF order: larger elements first (so every tensor stays aligned to its element size), then by name.
std::vector<const TensorSource*> layout_order(const std::vector<TensorSource>& tensors) {
  std::vector<const TensorSource*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const TensorSource* a, const TensorSource* b) {
    size_t sa = dtype_size(a->dtype), sb = dtype_size(b->dtype);
    if (sa != sb) return sa > sb;
    return a->name < b->name;
  });
  return order;
}

void validate(const std::vector<TensorSource>& tensors) {
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (t.name == "__metadata__") throw Error(t.name, "'__metadata__' is reserved in safetensors");
    if (!names.insert(t.name).second) throw Error(t.name, "tensor name appears twice");
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) throw Error(t.name, "negative dimension in shape");
      numel *= static_cast<uint64_t>(d);
    }
    if (numel * dtype_size(t.dtype) != t.nbytes)
      throw Error(t.name, std::to_string(t.nbytes) + " bytes given but the shape of " + to_string(t.dtype) +
                              " needs " + std::to_string(numel * dtype_size(t.dtype)));
    if (t.nbytes > 0 && t.data == nullptr) throw Error(t.name, "no data pointer");
  }
}

}  // namespace

std::string safetensors_header(const std::vector<TensorSource>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  validate(tensors);
  Json header = Json::object();
  if (!metadata.empty()) {
    Json m = Json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  uint64_t offset = 0;
  for (const TensorSource* t : layout_order(tensors)) {
    header[t->name] = {
        {"dtype", to_string(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->nbytes}}};
    offset += t->nbytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json;
}

void write_safetensors(const std::string& path, const std::vector<TensorSource>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::string header;
  try {
    header = safetensors_header(tensors, metadata);
  } catch (const Error& e) {
    throw Error(path, std::string("cannot write: ") + e.what());
  }
  write_file_atomically(path, [&](const ChunkWriter& write) {
    write(header.data(), header.size());
    for (const TensorSource* t : layout_order(tensors))
      if (t->nbytes > 0) write(t->data, t->nbytes);
  });
}

}  // namespace realign::tensorfile
