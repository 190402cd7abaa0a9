// The engine adapters realign ships (verl.cc, openrlhf.cc, areal.cc, nemo_rl.cc).
#pragma once

#include <memory>

#include "engines/engine.h"

namespace realign::engines {

std::unique_ptr<Engine> make_verl();
std::unique_ptr<Engine> make_openrlhf();
std::unique_ptr<Engine> make_areal();
std::unique_ptr<Engine> make_nemo_rl();

}  // namespace realign::engines
