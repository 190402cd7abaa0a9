// Checkpoints under <run>/checkpoints: step-N/ directories written atomically and a "latest" pointer.
// A save writes into .tmp-step-N/, fsyncs every file, writes manifest.json (bytes and FNV-1a 64 checksum per
// file, plus the caller's metadata), fsyncs it and the directory, renames it to step-N/ and only then
// replaces "latest". A failure anywhere leaves the previous checkpoint and pointer untouched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json.h"

namespace realign::train {

class CheckpointWriter {
 public:
  CheckpointWriter(std::string checkpoints_root, int64_t step);
  ~CheckpointWriter();  // removes the temp directory when commit() was not reached
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Where the caller writes its files (flat or in subdirectories) before commit().
  const std::string& dir() const { return tmp_; }
  // Checksums, manifest, fsync, rename, then the "latest" pointer. Returns the final directory.
  std::string commit(const Json& metadata);

 private:
  std::string root_, tmp_;
  int64_t step_;
  bool committed_ = false;
};

struct CheckpointInfo {
  int64_t step = 0;
  std::string dir;
  Json metadata;  // what the writer passed to commit()
};

// The checkpoint "latest" names, or nullopt when there is none yet.
std::optional<int64_t> latest_checkpoint_step(const std::string& checkpoints_root);

// Opens step-N and verifies every file of its manifest (size and checksum). Throws Error naming the file
// that is missing or corrupt.
CheckpointInfo open_checkpoint(const std::string& checkpoints_root, int64_t step);

std::string checkpoint_dir_name(int64_t step);  // "step-12"

}  // namespace realign::train
