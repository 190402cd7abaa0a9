#include "cost/host_scaling.h"

#include <cstdio>

#include "core/error.h"

namespace realign {

double host_speed_ratio(const HardwareProfile& profile, double probe_s) {
  if (profile.host_probe_s.value <= 0) return 1.0;
  if (!(probe_s > 0)) throw Error("host probe", "a probe time must be positive seconds");
  return probe_s / profile.host_probe_s.value;
}

HardwareProfile scaled_to_host(const HardwareProfile& profile, double probe_s, const std::string& host) {
  if (profile.host_probe_s.value <= 0) return profile;
  const double ratio = host_speed_ratio(profile, probe_s);
  char why[200];
  std::snprintf(why, sizeof why,
                "scaled x%.3f to %s by its host probe (%.3f ms here, %.3f ms where fitted); ", ratio,
                host.c_str(), probe_s * 1e3, profile.host_probe_s.value * 1e3);
  HardwareProfile p = profile;
  auto scale = [&](Coefficient& c, double factor) {
    c.value *= factor;
    c.source = why + c.source;
  };
  for (Coefficient* rate : {&p.gemm_efficiency, &p.attention_efficiency}) scale(*rate, 1.0 / ratio);
  scale(p.layer_launch_overhead_s, ratio);
  p.host_probe_s = {probe_s, "measured on " + host + " at the start of this command"};
  return p;
}

}  // namespace realign
