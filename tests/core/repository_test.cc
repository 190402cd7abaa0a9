// The repository holds every input its code reads: nothing under src, bench, tests or scripts reads the
// shared folder beside a checkout (published data the project uses lives in data/published, with its
// sources), so a fresh clone builds, tests and reruns its benchmarks alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/read_file.h"

namespace realign {
namespace {

TEST(Repository, NothingReadsTheFolderBesideTheCheckout) {
  const std::string beside = std::string("..") + "/shared";  // spelt apart, so this file does not match
  int files = 0;
  for (const char* dir : {"src", "bench", "tests", "scripts"})
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::string(REALIGN_SOURCE_DIR) + "/" + dir)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      EXPECT_EQ(read_file(entry.path().string()).find(beside), std::string::npos) << entry.path();
    }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace realign
