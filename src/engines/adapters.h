// The engine adapters realign ships (verl.cc, openrlhf.cc, areal.cc).
#pragma once

#include <memory>

#include "engines/engine.h"

namespace realign::engines {

std::unique_ptr<Engine> make_verl();
std::unique_ptr<Engine> make_openrlhf();
std::unique_ptr<Engine> make_areal();

}  // namespace realign::engines
