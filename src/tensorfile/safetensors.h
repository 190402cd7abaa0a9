// safetensors: the HF tensor file format (8-byte little-endian header length, JSON header, raw data), read
// torch-free through a memory map with every header claim validated, and written atomically.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensorfile/dtype.h"
#include "tensorfile/mapped_file.h"

namespace realign::tensorfile {

// One tensor inside a mapped file. `data` points into the map (little-endian, row-major); it lives as long
// as the SafetensorsFile it came from.
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;

  int64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`; throws realign::Error naming the file and what is wrong.
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_->path(); }
  // Tensors in file order (by data offset).
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  // Throws Error naming the file when absent.
  const TensorView& at(const std::string& name) const;
  // The optional "__metadata__" string map.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::unique_ptr<MappedFile> file_;
  std::vector<TensorView> tensors_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// Validates a whole file image (header + data) already in memory; `path` names it in errors. The views point
// into `bytes`. This is what SafetensorsFile runs on its map, exposed for tests.
void parse_safetensors(const uint8_t* bytes, size_t size, const std::string& path,
                       std::vector<TensorView>* tensors, std::map<std::string, std::string>* metadata);

// A tensor to write: `data` holds exactly numel * dtype_size bytes, little-endian, row-major.
struct TensorSource {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

// Writes a safetensors file atomically. Tensors are laid out as HF does (larger element size first, then by
// name), the header padded with spaces to a multiple of 8 bytes. Throws Error on duplicate or bad tensors.
void write_safetensors(const std::string& path, const std::vector<TensorSource>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The header bytes (length prefix + padded JSON) write_safetensors would produce; exposed for tests.
std::string safetensors_header(const std::vector<TensorSource>& tensors,
                               const std::map<std::string, std::string>& metadata);

}  // namespace realign::tensorfile
