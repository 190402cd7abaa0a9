#include "runtime/json_broadcast.h"

#include <ATen/ATen.h>

#include <cstring>

namespace realign::runtime {

Json broadcast_json(comm::Group& group, const Json& value, int root) {
  const std::string text = group.rank() == root ? value.dump() : std::string();
  // Gloo broadcasts tensors of a size every rank knows: the length first, then the bytes.
  at::Tensor length = at::tensor({int64_t(text.size())}, at::kLong);
  group.broadcast(length, root);
  at::Tensor bytes = at::zeros({length.item<int64_t>()}, at::kByte);
  if (group.rank() == root) std::memcpy(bytes.data_ptr<uint8_t>(), text.data(), text.size());
  group.broadcast(bytes, root);
  return Json::parse(
      std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), size_t(bytes.numel())));
}

}  // namespace realign::runtime
