// Timeline as an SVG Gantt chart: one row per device, one bar per event, a colour per call (reallocation and
// data moves drawn as lighter, hatched bars of their call's colour), a legend wrapped into rows within the
// picture and a time axis with 1-2-5 ticks in one unit.
#pragma once

#include <string>

#include "cost/simulation_result.h"

namespace realign {

std::string timeline_svg(const Timeline& timeline, const std::string& title = "");
// Two timelines on one time scale: the estimate above, the measurement below.
std::string timeline_comparison_svg(const Timeline& estimated, const Timeline& measured,
                                    const std::string& title = "");

}  // namespace realign
