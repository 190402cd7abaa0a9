#include <algorithm>
#include <cstring>
#include <limits>

#include "core/json.h"
#include "tensorfile/safetensors.h"

namespace realign::tensorfile {

namespace {

// HF's own reader refuses headers above 100 MB; so do we, before parsing anything.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

std::string range(uint64_t a, uint64_t b) { return "[" + std::to_string(a) + "," + std::to_string(b) + ")"; }

}  // namespace

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void parse_safetensors(const uint8_t* bytes, size_t size, const std::string& path,
                       std::vector<TensorView>* tensors, std::map<std::string, std::string>* metadata) {
  tensors->clear();
  metadata->clear();
  if (size < 8)
    throw Error(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > kMaxHeaderBytes)
    throw Error(path, "header length " + std::to_string(header_len) + " exceeds the 100 MB limit");
  if (header_len > size - 8)
    throw Error(path, "header length " + std::to_string(header_len) + " runs past the end of the " +
                          std::to_string(size) + "-byte file");
  if (header_len < 2 || bytes[8] != '{') throw Error(path, "header does not start with a JSON object");
  const char* hbegin = reinterpret_cast<const char*>(bytes + 8);
  // std::map-backed json: ordered_json's linear key lookup is quadratic on headers with many tensors.
  nlohmann::json header =
      nlohmann::json::parse(hbegin, hbegin + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) throw Error(path, "header is not valid JSON");
  if (!header.is_object()) throw Error(path, "header is not a JSON object");

  const uint8_t* data = bytes + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(path, "__metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          throw Error(path,
                      "__metadata__['" + m.key() + "'] must be a string, got " + json_type_name(m.value()));
        (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!v.is_object()) throw Error(path, where + " must be an object, got " + json_type_name(v));
    for (auto f = v.begin(); f != v.end(); ++f)
      if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
        throw Error(path, where + " has unknown field '" + f.key() + "' (valid: dtype, shape, data_offsets)");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || sh == v.end() || off == v.end())
      throw Error(path, where + " lacks one of dtype, shape, data_offsets");
    if (!dt->is_string()) throw Error(path, where + ": dtype must be a string");
    TensorView t;
    t.name = name;
    auto dtype = dtype_from_string(dt->get<std::string>());
    if (!dtype)
      throw Error(path, where + ": unsupported dtype '" + dt->get<std::string>() +
                            "' (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
    t.dtype = *dtype;
    if (!sh->is_array()) throw Error(path, where + ": shape must be a list");
    // numel * element size must fit in the file, so any product above the data size is already wrong;
    // checking as we go keeps the multiplication from overflowing.
    uint64_t numel = 1;
    bool too_big = false;
    for (const nlohmann::json& d : *sh) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
        throw Error(path, where + ": shape entries must be non-negative integers, got " + d.dump());
      uint64_t dim = d.get<uint64_t>();
      if (dim > uint64_t(std::numeric_limits<int64_t>::max()))
        throw Error(path, where + ": shape entry " + std::to_string(dim) + " is too large");
      t.shape.push_back(static_cast<int64_t>(dim));
      if (dim == 0) {
        numel = 0;
      } else if (!too_big && numel != 0) {
        if (numel > data_size / dim)
          too_big = true;
        else
          numel *= dim;
      }
    }
    if (too_big && numel != 0)
      throw Error(path, where + ": shape " + sh->dump() + " needs more bytes than the file's " +
                            std::to_string(data_size) + "-byte data section");
    if (!off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      throw Error(path, where + ": data_offsets must be two non-negative integers [begin, end]");
    uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (begin > end)
      throw Error(path, where + ": data_offsets " + range(begin, end) + " end before they begin");
    if (end > data_size)
      throw Error(path, where + " claims bytes " + range(begin, end) + " beyond file size " +
                            std::to_string(size) + " (data section holds " + std::to_string(data_size) +
                            " bytes)");
    const uint64_t want = numel * dtype_size(t.dtype);  // numel <= data_size, so no overflow
    if (end - begin != want)
      throw Error(path, where + ": data_offsets " + range(begin, end) + " hold " +
                            std::to_string(end - begin) + " bytes but shape " + sh->dump() + " of " +
                            to_string(t.dtype) + " needs " + std::to_string(want));
    t.data = data + begin;
    t.nbytes = static_cast<size_t>(want);
    tensors->push_back(std::move(t));
  }

  // The data section must be tiled exactly: sorted by offset, each tensor starts where the previous ended,
  // the last one ends at the end of the file.
  std::sort(tensors->begin(), tensors->end(), [&](const TensorView& a, const TensorView& b) {
    if (a.data != b.data) return a.data < b.data;
    return a.nbytes < b.nbytes;
  });
  uint64_t cursor = 0;
  const TensorView* prev = nullptr;
  for (const TensorView& t : *tensors) {
    uint64_t begin = static_cast<uint64_t>(t.data - data);
    if (begin < cursor)
      throw Error(path, "tensor '" + t.name + "' bytes " + range(begin, begin + t.nbytes) +
                            " overlap tensor '" + prev->name + "'");
    if (begin > cursor)
      throw Error(path, "bytes " + range(cursor, begin) +
                            " of the data section belong to no tensor (before '" + t.name + "')");
    cursor = begin + t.nbytes;
    prev = &t;
  }
  if (cursor != data_size)
    throw Error(path,
                "bytes " + range(cursor, data_size) + " at the end of the data section belong to no tensor");
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(std::make_unique<MappedFile>(path)) {
  parse_safetensors(file_->data(), file_->size(), path, &tensors_, &metadata_);
  for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorView& SafetensorsFile::at(const std::string& name) const {
  const TensorView* t = find(name);
  if (t == nullptr) throw Error(path(), "no tensor named '" + name + "'");
  return *t;
}

}  // namespace realign::tensorfile
