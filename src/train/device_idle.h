// The share of a step that a group of devices spent idle, read off the step's measured timeline: what the
// asynchronous schedule buys shows as the generation's and the updates' devices idling less.
#pragma once

#include "cost/simulation_result.h"
#include "plan/layout.h"

namespace realign::train {

// 1 - (time each device of `devices` was inside some event of `timeline`, summed) / (span_s x devices), in
// [0, 1]; events that overlap on a device count once.
double idle_share(const Timeline& timeline, const Layout& devices, double span_s);

}  // namespace realign::train
