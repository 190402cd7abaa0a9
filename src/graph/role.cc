#include "graph/role.h"

#include "core/error.h"

namespace realign {

std::string to_string(Role role) {
  switch (role) {
    case Role::kActor:
      return "actor";
    case Role::kCritic:
      return "critic";
    case Role::kRef:
      return "ref";
    case Role::kReward:
      return "reward";
  }
  return "?";
}

std::vector<Role> all_roles() { return {Role::kActor, Role::kCritic, Role::kRef, Role::kReward}; }

Role role_from_string(const std::string& name, const std::string& field) {
  std::string known;
  for (Role r : all_roles()) {
    if (to_string(r) == name) return r;
    known += (known.empty() ? "" : ", ") + to_string(r);
  }
  throw Error(field, "unknown model role '" + name + "'; choose one of " + known);
}

}  // namespace realign
