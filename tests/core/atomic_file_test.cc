#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "core/read_file.h"

namespace realign {
namespace {

TEST(AtomicFile, ReplacesTheFileAndLeavesNoTemporaryBehind) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "atomic_file_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  write_text_file(path, "first");
  write_text_file(path, "second\n");
  EXPECT_EQ(read_file(path), "second\n");
  write_file_atomically(path, [](const ChunkWriter& write) {
    write("ab", 2);
    write("c", 1);
  });
  EXPECT_EQ(read_file(path), "abc");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()),
            1);
  // A producer that fails leaves the old file as it was.
  EXPECT_THROW(write_file_atomically(path, [](const ChunkWriter&) { throw Error("x", "stop"); }), Error);
  EXPECT_EQ(read_file(path), "abc");
  EXPECT_THROW(write_text_file((dir / "missing" / "f").string(), "x"), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace realign
