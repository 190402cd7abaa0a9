#include "train/thread_budget.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace realign::train {
namespace {

TEST(ThreadBudget, AutomaticGivesEachWorkerItsShareOfTheCores) {
  EXPECT_EQ(thread_budget(0, 2, 1).threads, 2);
  EXPECT_EQ(thread_budget(0, 2, 4).threads, 1);  // never 0
  EXPECT_EQ(thread_budget(0, 16, 4).threads, 4);
  EXPECT_EQ(thread_budget(0, 16, 4).warning, "");
}

TEST(ThreadBudget, AnExplicitCountThatOversubscribesIsKeptWithAWarningNamingTheFigures) {
  const ThreadBudget b = thread_budget(2, 2, 4);
  EXPECT_EQ(b.threads, 2);
  EXPECT_NE(b.warning.find("train.threads = 2"), std::string::npos) << b.warning;
  EXPECT_NE(b.warning.find("4 workers"), std::string::npos) << b.warning;
  EXPECT_NE(b.warning.find("8 threads on 2 cores"), std::string::npos) << b.warning;
  EXPECT_EQ(thread_budget(2, 4, 2).warning, "");  // 4 threads on 4 cores: fine
}

TEST(ThreadBudget, LocalWorkersComeFromTorchrunsEnvironment) {
  ::setenv("LOCAL_WORLD_SIZE", "3", 1);
  EXPECT_EQ(local_workers_from_env(8), 3);
  ::setenv("LOCAL_WORLD_SIZE", "x", 1);
  EXPECT_EQ(local_workers_from_env(8), 8);
  ::unsetenv("LOCAL_WORLD_SIZE");
  EXPECT_EQ(local_workers_from_env(8), 8);
}

}  // namespace
}  // namespace realign::train
