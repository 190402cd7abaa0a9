// The part a model plays in an algorithm: the policy being trained (actor), its value model (critic), the
// frozen reference policy (ref) and the reward model. Config keys (models.actor), plan files, checkpoint
// slots and metric names spell a role by to_string; code holds the typed value.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign {

enum class Role { kActor, kCritic, kRef, kReward };

std::string to_string(Role role);  // "actor", "critic", "ref", "reward"
// Throws Error at `field` (a config path) naming the valid names when `name` is none of them.
Role role_from_string(const std::string& name, const std::string& field);
std::vector<Role> all_roles();  // in to_string's alphabetical order, as maps keyed by Role iterate

inline std::ostream& operator<<(std::ostream& os, Role role) { return os << to_string(role); }
// No implicit JSON conversion (nlohmann's would write the enum's number): files spell a role by to_string,
// and reading one goes through role_from_string, which names the field.
void to_json(Json& j, Role role) = delete;
void from_json(const Json& j, Role& role) = delete;

}  // namespace realign
