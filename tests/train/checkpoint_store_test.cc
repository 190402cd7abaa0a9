#include "train/checkpoint_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/temp_dir.h"

namespace realign::train {
namespace {
using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

std::string save(const std::string& root, int64_t step, const std::string& payload) {
  CheckpointWriter w(root, step);
  fs::create_directories(w.dir() + "/actor");
  write_file(w.dir() + "/actor/model.bin", payload);
  write_file(w.dir() + "/state.json", "{\"step\": " + std::to_string(step) + "}");
  return w.commit(Json{{"model", "llama-tiny"}});
}

TEST(CheckpointStore, CommitThenOpenVerifies) {
  TempDir tmp;
  EXPECT_FALSE(latest_checkpoint_step(tmp.path()).has_value());
  std::string dir = save(tmp.path(), 3, "weights-3");
  EXPECT_EQ(dir, tmp.path() + "/step-3");
  ASSERT_EQ(latest_checkpoint_step(tmp.path()), 3);
  CheckpointInfo info = open_checkpoint(tmp.path(), 3);
  EXPECT_EQ(info.metadata["model"], "llama-tiny");
  EXPECT_EQ(read_file(info.dir + "/actor/model.bin"), "weights-3");
  save(tmp.path(), 6, "weights-6");
  EXPECT_EQ(latest_checkpoint_step(tmp.path()), 6);
  // No temp directories are left behind.
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(CheckpointStore, CorruptFileIsNamed) {
  TempDir tmp;
  save(tmp.path(), 1, "weights");
  write_file(tmp.path() + "/step-1/actor/model.bin", "weightz");
  try {
    open_checkpoint(tmp.path(), 1);
    FAIL() << "corruption not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("actor/model.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  fs::remove(tmp.path() + "/step-1/state.json");
  EXPECT_THROW(open_checkpoint(tmp.path(), 1), Error);
}

TEST(CheckpointStore, FailedWriteLeavesLastGoodUntouched) {
  TempDir tmp;
  save(tmp.path(), 2, "good");
  {
    CheckpointWriter w(tmp.path(), 4);
    write_file(w.dir() + "/partial.bin", "half");
    // The writer throws before commit (e.g. a bad reward command mid-save): its destructor cleans up.
  }
  EXPECT_EQ(latest_checkpoint_step(tmp.path()), 2);
  EXPECT_FALSE(fs::exists(tmp.path() + "/step-4"));
  EXPECT_EQ(read_file(open_checkpoint(tmp.path(), 2).dir + "/actor/model.bin"), "good");
  // Re-saving the same step (after a resume) replaces it whole.
  save(tmp.path(), 2, "better");
  EXPECT_EQ(read_file(open_checkpoint(tmp.path(), 2).dir + "/actor/model.bin"), "better");
}

TEST(CheckpointStore, BadLatestPointerIsAnError) {
  TempDir tmp;
  write_file(tmp.path() + "/latest", "nonsense\n");
  EXPECT_THROW(latest_checkpoint_step(tmp.path()), Error);
}

}  // namespace
}  // namespace realign::train
