#include "cost/simulation_result.h"

namespace realign {

bool TimelineEvent::operator==(const TimelineEvent& o) const {
  return name == o.name && kind == o.kind && first_device == o.first_device && n_devices == o.n_devices &&
         start_s == o.start_s && end_s == o.end_s && bytes == o.bytes && iteration == o.iteration;
}

bool CallResult::operator==(const CallResult& o) const {
  return name == o.name && start_s == o.start_s && end_s == o.end_s && realloc_s == o.realloc_s &&
         data_s == o.data_s && peak_mem_bytes == o.peak_mem_bytes && busy_ranks == o.busy_ranks;
}

bool SimulationResult::operator==(const SimulationResult& o) const {
  return iteration_time_s == o.iteration_time_s && staleness == o.staleness && steps == o.steps &&
         steady_start_s == o.steady_start_s && calls == o.calls && timeline == o.timeline &&
         device_peak_mem_bytes == o.device_peak_mem_bytes && device_home_bytes == o.device_home_bytes &&
         device_turn_peak_mem_bytes == o.device_turn_peak_mem_bytes && device_idle_fraction == o.device_idle_fraction &&
         realloc_bytes == o.realloc_bytes && offload_bytes == o.offload_bytes && fits == o.fits &&
         oom_report == o.oom_report;
}

Json to_json(const Timeline& t) {
  Json events = Json::array();
  for (const auto& e : t.events)
    events.push_back(Json{{"name", e.name},
                          {"kind", e.kind},
                          {"first_device", e.first_device},
                          {"n_devices", e.n_devices},
                          {"start_s", e.start_s},
                          {"end_s", e.end_s},
                          {"bytes", e.bytes},
                          {"iteration", e.iteration}});
  return Json{{"version", Timeline::kVersion}, {"n_devices", t.n_devices}, {"events", events}};
}

Timeline timeline_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  const int64_t version = r.get_int("version");
  if (version != Timeline::kVersion)
    throw Error(r.path_of("version"), "timeline version " + std::to_string(version) + " is not " +
                                          std::to_string(Timeline::kVersion));
  Timeline t;
  t.n_devices = int(r.get_positive("n_devices"));
  const Json& events = r.at("events");
  if (!events.is_array()) throw Error(r.path_of("events"), "must be a list, got " + json_type_name(events));
  for (size_t i = 0; i < events.size(); ++i) {
    ObjectReader er(events[i], index_path(r.path_of("events"), i));
    TimelineEvent e;
    e.name = er.get_string("name");
    e.kind = er.get_string("kind");
    if (e.kind != "call" && e.kind != "realloc" && e.kind != "load" && e.kind != "data" && e.kind != "host")
      throw Error(er.path_of("kind"), "'" + e.kind + "' is not one of call, realloc, load, data, host");
    e.first_device = int(er.get_int("first_device"));
    e.n_devices = int(er.get_positive("n_devices"));
    if (e.first_device < 0 || e.first_device + e.n_devices > t.n_devices)
      throw Error(er.path_of("first_device"), "devices " + std::to_string(e.first_device) + ".." +
                                                  std::to_string(e.first_device + e.n_devices - 1) +
                                                  " are outside the timeline's " +
                                                  std::to_string(t.n_devices));
    e.start_s = er.get_double("start_s");
    e.end_s = er.get_double("end_s");
    if (e.end_s < e.start_s) throw Error(er.path_of("end_s"), "ends before it starts");
    e.bytes = er.get_double("bytes", 0.0);
    e.iteration = er.get_positive("iteration", 1);
    er.finish();
    t.events.push_back(std::move(e));
  }
  r.finish();
  return t;
}

Json to_json(const SimulationResult& r) {
  Json calls = Json::array();
  for (const auto& c : r.calls)
    calls.push_back(Json{{"name", c.name},
                         {"start_s", c.start_s},
                         {"end_s", c.end_s},
                         {"realloc_s", c.realloc_s},
                         {"data_s", c.data_s},
                         {"peak_mem_bytes", c.peak_mem_bytes},
                         {"busy_ranks", c.busy_ranks}});
  return Json{{"iteration_time_s", r.iteration_time_s},
              {"staleness", r.staleness},
              {"steps", r.steps},
              {"steady_start_s", r.steady_start_s},
              {"fits", r.fits},
              {"oom_report", r.oom_report},
              {"realloc_bytes", r.realloc_bytes},
              {"offload_bytes", r.offload_bytes},
              {"calls", calls},
              {"device_peak_mem_bytes", r.device_peak_mem_bytes},
              {"device_idle_fraction", r.device_idle_fraction},
              {"timeline", to_json(r.timeline)}};
}

SimulationResult simulation_result_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  SimulationResult s;
  s.iteration_time_s = r.get_double("iteration_time_s");
  s.staleness = r.get_int("staleness", 0);
  if (s.staleness < 0) throw Error(r.path_of("staleness"), "must not be negative");
  s.steps = r.get_positive("steps", 1);
  s.steady_start_s = r.get_double("steady_start_s", 0.0);
  s.fits = r.get_bool("fits");
  s.oom_report = r.get_string("oom_report");
  s.realloc_bytes = r.get_double("realloc_bytes");
  s.offload_bytes = r.get_double("offload_bytes", 0.0);
  const Json& calls = r.at("calls");
  if (!calls.is_array()) throw Error(r.path_of("calls"), "must be a list");
  for (size_t i = 0; i < calls.size(); ++i) {
    ObjectReader cr(calls[i], index_path(r.path_of("calls"), i));
    CallResult c;
    c.name = cr.get_string("name");
    c.start_s = cr.get_double("start_s");
    c.end_s = cr.get_double("end_s");
    c.realloc_s = cr.get_double("realloc_s");
    c.data_s = cr.get_double("data_s");
    c.peak_mem_bytes = cr.get_double("peak_mem_bytes");
    c.busy_ranks = cr.get_double("busy_ranks", 0.0);
    cr.finish();
    s.calls.push_back(std::move(c));
  }
  auto doubles = [&](const char* key) {
    const Json& a = r.at(key);
    if (!a.is_array()) throw Error(r.path_of(key), "must be a list");
    std::vector<double> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(json_to_double(a[i], index_path(r.path_of(key), i)));
    return out;
  };
  s.device_peak_mem_bytes = doubles("device_peak_mem_bytes");
  s.device_idle_fraction = doubles("device_idle_fraction");
  s.timeline = timeline_from_json(r.at("timeline"), r.path_of("timeline"));
  r.finish();
  return s;
}

}  // namespace realign
