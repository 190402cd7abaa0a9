// A CPU profile carried from the machine it was fitted on to the machine at hand. CPU machines of one kind
// differ by up to 2x in how fast they run realign's small-model work (the same plan: 86 ms per iteration on
// one 2-core Intel Xeon, 47-59 ms on 2-core AMD EPYCs), so a profile fitted on one misprices another. The
// host probe (profile/host_probe.h) times a fixed piece of that work on both; its ratio scales what a
// worker computes on its cores.
#pragma once

#include <string>

#include "cost/hardware_profile.h"

namespace realign {

// `profile` with its compute rates (gemm_efficiency, attention_efficiency) divided and its per-layer fixed
// cost (layer_launch_overhead_s) multiplied by probe_s / profile.host_probe_s; each scaled coefficient's
// source says so. Those are the groups that moved together between two machines' fits of the same 20-60
// plans (an AMD EPYC's compute x0.49 and per-layer cost x0.50 of an Intel Xeon's). The fits left the rest
// where it was or moved it otherwise (per call x1.00, per optimizer step x0.98, per iteration 22.1 ms
// against 20.3 ms, per decoding step x1.24, the Gloo link's bandwidth x0.45), so it is not what the probe's
// ratio tells: the links, memory terms, the workers' sharing of cores and the other fixed costs stay as
// fitted. host_probe_s becomes probe_s: the result describes this machine. A profile without a probe (the
// GPU profiles) is returned unchanged.
HardwareProfile scaled_to_host(const HardwareProfile& profile, double probe_s, const std::string& host);

// probe_s / profile.host_probe_s, or 1 where the profile records no probe.
double host_speed_ratio(const HardwareProfile& profile, double probe_s);

}  // namespace realign
