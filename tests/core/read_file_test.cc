#include "core/read_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/error.h"

namespace realign {
namespace {

TEST(ReadFile, ReturnsEveryByte) {
  const std::string path = ::testing::TempDir() + "read_file_test_" + std::to_string(::getpid());
  // A NUL byte and a bare CR: the read is binary, nothing is translated or cut.
  const std::string bytes("a\0b\r\nc", 6);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  EXPECT_EQ(read_file(path), bytes);
  std::remove(path.c_str());
}

TEST(ReadFile, MissingFileNamesItAndWhy) {
  try {
    read_file("/nonexistent/tokenizer.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "/nonexistent/tokenizer.json");
    EXPECT_NE(std::string(e.what()).find("cannot open: No such file"), std::string::npos) << e.what();
  }
}

TEST(ReadFile, DirectoryIsAnError) { EXPECT_THROW(read_file("/"), Error); }

}  // namespace
}  // namespace realign
