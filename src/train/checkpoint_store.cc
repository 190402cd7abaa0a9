#include "train/checkpoint_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/read_file.h"
#include "train/run_dir.h"

namespace realign::train {
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "manifest.json";

void fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw Error(path, "cannot open for fsync");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error(path, "fsync failed");
}

struct FileSum {
  uint64_t bytes = 0;
  std::string fnv;
};

FileSum checksum_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot read checkpoint file");
  Fnv1a64 h;
  std::vector<char> buf(1 << 20);
  FileSum s;
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    std::streamsize n = in.gcount();
    if (n <= 0) break;
    h.update(buf.data(), size_t(n));
    s.bytes += uint64_t(n);
  }
  s.fnv = h.hex();
  return s;
}

}  // namespace

std::string checkpoint_dir_name(int64_t step) { return "step-" + std::to_string(step); }

CheckpointWriter::CheckpointWriter(std::string checkpoints_root, int64_t step)
    : root_(std::move(checkpoints_root)), step_(step) {
  tmp_ = root_ + "/.tmp-" + checkpoint_dir_name(step) + "-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp_, ec);
  fs::create_directories(tmp_, ec);
  if (ec) throw Error(tmp_, "cannot create the checkpoint directory: " + ec.message());
}

CheckpointWriter::~CheckpointWriter() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

std::string CheckpointWriter::commit(const Json& metadata) {
  Json files = Json::object();
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(tmp_)) {
    if (!entry.is_regular_file()) continue;
    names.push_back(fs::relative(entry.path(), tmp_).string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string path = tmp_ + "/" + name;
    fsync_path(path, false);
    FileSum s = checksum_file(path);
    files[name] = Json{{"bytes", s.bytes}, {"fnv1a64", s.fnv}};
  }
  Json manifest{{"step", step_}, {"files", files}, {"metadata", metadata}};
  write_text_file(tmp_ + "/" + kManifest, manifest.dump(2) + "\n");
  for (const auto& entry : fs::recursive_directory_iterator(tmp_))
    if (entry.is_directory()) fsync_path(entry.path().string(), true);
  fsync_path(tmp_, true);

  std::string final_dir = root_ + "/" + checkpoint_dir_name(step_);
  std::string old_dir = final_dir + ".old";
  std::error_code ec;
  fs::remove_all(old_dir, ec);
  if (fs::exists(final_dir)) fs::rename(final_dir, old_dir);  // a re-save of the same step (after a resume)
  fs::rename(tmp_, final_dir);
  fsync_path(root_, true);
  write_text_file(root_ + "/latest", checkpoint_dir_name(step_) + "\n");
  fs::remove_all(old_dir, ec);
  committed_ = true;
  return final_dir;
}

std::optional<int64_t> latest_checkpoint_step(const std::string& root) {
  std::string pointer = root + "/latest";
  if (!fs::exists(pointer)) return std::nullopt;
  std::string text = read_file(pointer);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.rfind("step-", 0) != 0) throw Error(pointer, "expected 'step-N', found '" + text + "'");
  try {
    return std::stoll(text.substr(5));
  } catch (const std::exception&) {
    throw Error(pointer, "expected 'step-N', found '" + text + "'");
  }
}

CheckpointInfo open_checkpoint(const std::string& root, int64_t step) {
  CheckpointInfo info;
  info.step = step;
  info.dir = root + "/" + checkpoint_dir_name(step);
  std::string manifest_path = info.dir + "/" + kManifest;
  if (!fs::exists(manifest_path))
    throw Error(info.dir, "checkpoint has no manifest.json (incomplete write?)");
  Json manifest;
  try {
    manifest = Json::parse(read_file(manifest_path));
  } catch (const Json::exception& e) {
    throw Error(manifest_path, std::string("not valid JSON: ") + e.what());
  }
  if (!manifest.contains("files") || !manifest["files"].is_object())
    throw Error(manifest_path, "no 'files' object");
  for (const auto& [name, expect] : manifest["files"].items()) {
    std::string path = info.dir + "/" + name;
    if (!fs::exists(path)) throw Error(path, "listed in the checkpoint manifest but missing");
    FileSum s = checksum_file(path);
    if (s.bytes != expect.value("bytes", uint64_t(0)) || s.fnv != expect.value("fnv1a64", std::string()))
      throw Error(path, "checksum mismatch (expected " + expect.value("fnv1a64", std::string()) + ", " +
                            std::to_string(expect.value("bytes", uint64_t(0))) + " bytes; found " + s.fnv +
                            ", " + std::to_string(s.bytes) + " bytes): the checkpoint is corrupt");
  }
  info.metadata = manifest.value("metadata", Json::object());
  return info;
}

}  // namespace realign::train
