#include "graph/role.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "core/error.h"

namespace realign {
namespace {

// Config keys, plan files, checkpoint slots and metrics spell roles by these names: they must not drift.
TEST(Role, NamesAreTheFileFormatsNames) {
  EXPECT_EQ(to_string(Role::kActor), "actor");
  EXPECT_EQ(to_string(Role::kCritic), "critic");
  EXPECT_EQ(to_string(Role::kRef), "ref");
  EXPECT_EQ(to_string(Role::kReward), "reward");
  std::ostringstream os;
  os << Role::kReward;
  EXPECT_EQ(os.str(), "reward");
}

TEST(Role, NamesRoundTripAndAreDistinct) {
  const std::vector<Role> roles = all_roles();
  ASSERT_EQ(roles.size(), 4u);
  std::set<std::string> names;
  for (Role r : roles) {
    EXPECT_EQ(role_from_string(to_string(r), "models"), r);
    names.insert(to_string(r));
  }
  EXPECT_EQ(names.size(), roles.size());
}

// Maps keyed by Role iterate as maps keyed by the name did, so listings keep their order.
TEST(Role, OrderFollowsTheNames) {
  const std::vector<Role> roles = all_roles();
  for (size_t i = 1; i < roles.size(); ++i) {
    EXPECT_LT(roles[i - 1], roles[i]);
    EXPECT_LT(to_string(roles[i - 1]), to_string(roles[i]));
  }
}

TEST(Role, UnknownNameIsRefusedNamingTheFieldAndTheRoles) {
  for (const std::string bad : {"Actor", "policy", "", "actor "}) {
    try {
      role_from_string(bad, "plan.offload[2]");
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.path(), "plan.offload[2]");
      EXPECT_EQ(std::string(e.what()), "plan.offload[2]: unknown model role '" + bad +
                                           "'; choose one of actor, critic, ref, reward");
    }
  }
}

}  // namespace
}  // namespace realign
