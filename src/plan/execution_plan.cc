#include "plan/execution_plan.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "core/config_file.h"
#include "graph/param_layout.h"

namespace realign {

std::string to_string(ContextParallel kind) { return kind == ContextParallel::kUlysses ? "ulysses" : "ring"; }

ContextParallel context_parallel_from_string(const std::string& text, const std::string& path) {
  if (text == "ring") return ContextParallel::kRing;
  if (text == "ulysses") return ContextParallel::kUlysses;
  throw Error(path, "'" + text + "' is no kind of context parallelism (ring, ulysses)");
}

std::string to_string(const Strategy& s) {
  return "d" + std::to_string(s.dp) + "t" + std::to_string(s.tp) + "p" + std::to_string(s.pp) +
         (s.cp != 1 ? "c" + std::to_string(s.cp) : std::string()) +
         (s.ep != 1 ? "e" + std::to_string(s.ep) : std::string()) + " x" + std::to_string(s.micro_batches) +
         (s.zero1 ? " zero1" : "") + (s.recompute ? " recompute" : "") +
         (s.cp_kind == ContextParallel::kUlysses ? " ulysses" : "");
}

namespace {

DeviceMesh mesh_from_json(const Json& j, const std::string& path) {
  if (j.is_object()) {
    ObjectReader r(j, path);
    DeviceMesh m{int(r.get_int("first")), int(r.get_positive("size"))};
    r.finish();
    return m;
  }
  const std::string s = json_to_string(j, path);
  const auto dash = s.find('-');
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 7 || t.find_first_not_of("0123456789") != std::string::npos)
      throw Error(path,
                  "a mesh is written 'first-last' (e.g. \"0-7\") or one device (\"3\"), got '" + s + "'");
    return std::stoi(t);
  };
  if (dash == std::string::npos) return DeviceMesh{number(s), 1};
  const int a = number(s.substr(0, dash)), b = number(s.substr(dash + 1));
  if (b < a) throw Error(path, "mesh '" + s + "' ends before it starts");
  return DeviceMesh{a, b - a + 1};
}

// Empty when `s`'s context parallelism can split the call's sequences, else why not (starting "cp").
std::string context_parallel_problem(const Mfc& mfc, const ModelSpec& spec, const Strategy& s) {
  if (s.cp < 1) return "cp " + std::to_string(s.cp) + " must be positive";
  if (s.cp == 1) return "";
  const std::string cp = "cp " + std::to_string(s.cp);
  // Serving engines (and realign's generation) decode one token a step: there is no sequence to split.
  if (mfc.kind() == MfcKind::kGenerate)
    return cp + " applies to train and inference calls only; " + mfc.name + " is a generate call";
  if (mfc.seq_len() % s.cp != 0)
    return cp + " does not divide the " + std::to_string(mfc.seq_len()) + " tokens of " + mfc.name +
           "'s sequences (prompt and response)";
  if (s.cp_kind == ContextParallel::kUlysses) {
    // Ulysses trades the sequence split for a head split: each rank's query heads divide by cp; its KV
    // heads divide by cp or cp by them (veRL repeats them up to cp: models/transformers/monkey_patch.py).
    const int64_t heads = spec.n_heads / s.tp, kv = std::max<int64_t>(1, spec.n_kv_heads / s.tp);
    if (heads % s.cp != 0)
      return cp + " (Ulysses) does not divide the " + std::to_string(heads) + " attention heads" +
             (s.tp > 1 ? " per tp rank" : "") + " of " + spec.name +
             ": Ulysses splits heads over the cp ranks";
    if (kv % s.cp != 0 && s.cp % kv != 0)
      return cp + " (Ulysses) and the " + std::to_string(kv) + " KV heads" +
             (s.tp > 1 ? " per tp rank" : "") + " of " + spec.name + " do not divide one another";
  }
  return "";
}

}  // namespace

Json to_json(const ExecutionPlan& plan) {
  Json j;
  j["name"] = plan.name;
  j["mfcs"] = Json::array();
  for (const auto& a : plan.assignments) {
    Json m = {{"name", a.mfc},       {"mesh", to_string(a.mesh)},
              {"dp", a.strategy.dp}, {"tp", a.strategy.tp},
              {"pp", a.strategy.pp}, {"micro_batches", a.strategy.micro_batches}};
    if (a.strategy.ep != 1) m["ep"] = a.strategy.ep;  // absent for dense models: their plans are unchanged
    if (a.strategy.cp != 1) m["cp"] = a.strategy.cp;  // likewise absent without context parallelism
    if (a.strategy.cp_kind != ContextParallel::kRing) m["cp_kind"] = to_string(a.strategy.cp_kind);
    if (a.strategy.zero1) m["zero1"] = true;
    if (a.strategy.recompute) m["recompute"] = true;
    j["mfcs"].push_back(m);
  }
  if (!plan.disjoint.empty()) j["disjoint"] = plan.disjoint;
  for (Role role : plan.offload) j["offload"].push_back(to_string(role));
  return j;
}

ExecutionPlan plan_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  ExecutionPlan plan;
  plan.name = r.get_string("name", "");
  const Json& mfcs = r.at("mfcs");
  if (!mfcs.is_array()) throw Error(r.path_of("mfcs"), "expected a list of calls");
  for (size_t i = 0; i < mfcs.size(); ++i) {
    const std::string p = index_path(r.path_of("mfcs"), i);
    ObjectReader m(mfcs[i], p);
    MfcAssignment a;
    a.mfc = m.get_string("name");
    a.mesh = mesh_from_json(m.at("mesh"), m.path_of("mesh"));
    a.strategy.dp = int(m.get_positive("dp"));
    a.strategy.tp = int(m.get_positive("tp"));
    a.strategy.pp = int(m.get_positive("pp"));
    a.strategy.ep = int(m.get_positive("ep", 1));
    a.strategy.cp = int(m.get_positive("cp", 1));
    if (m.find("cp_kind"))
      a.strategy.cp_kind = context_parallel_from_string(m.get_string("cp_kind"), m.path_of("cp_kind"));
    a.strategy.micro_batches = int(m.get_positive("micro_batches", 1));
    a.strategy.zero1 = m.get_bool("zero1", false);
    a.strategy.recompute = m.get_bool("recompute", false);
    if (a.strategy.dp > 1 << 20 || a.strategy.tp > 1 << 20 || a.strategy.pp > 1 << 20 ||
        a.strategy.ep > 1 << 20 || a.strategy.cp > 1 << 20 || a.strategy.micro_batches > 1 << 20)
      throw Error(p, "parallel degrees are limited to 2^20");
    m.finish();
    plan.assignments.push_back(a);
  }
  if (const Json* d = r.find("disjoint")) plan.disjoint = disjoint_from_json(*d, r.path_of("disjoint"));
  if (const Json* o = r.find("offload")) {
    if (!o->is_array()) throw Error(r.path_of("offload"), "expected a list of model names");
    for (size_t i = 0; i < o->size(); ++i) {
      const std::string p = index_path(r.path_of("offload"), i);
      plan.offload.push_back(role_from_string(json_to_string((*o)[i], p), p));
    }
  }
  r.finish();
  return plan;
}

std::vector<std::vector<std::string>> disjoint_from_json(const Json& d, const std::string& path) {
  if (!d.is_array()) throw Error(path, "expected a list of lists of call names");
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < d.size(); ++i) {
    const std::string p = index_path(path, i);
    if (!d[i].is_array()) throw Error(p, "expected a list of call names");
    std::vector<std::string> group;
    for (size_t k = 0; k < d[i].size(); ++k) group.push_back(json_to_string(d[i][k], index_path(p, k)));
    out.push_back(group);
  }
  return out;
}

ExecutionPlan load_plan_file(const std::string& file) {
  ExecutionPlan plan = plan_from_json(load_config_file(file), file);
  if (plan.name.empty()) plan.name = file;
  return plan;
}

void save_plan_file(const ExecutionPlan& plan, const std::string& file) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw Error(file, "cannot write plan file");
    out << to_json(plan).dump(2) << "\n";
    if (!out) throw Error(file, "failed writing plan file");
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) throw Error(file, "cannot move plan file into place");
}

std::string strategy_problem(const Mfc& mfc, const ModelSpec& spec, const Cluster& cluster, int mesh_size,
                             const Strategy& s, bool serving_engine) {
  if (int64_t(s.dp) * s.tp * s.pp * s.cp != mesh_size)
    return std::string(s.cp == 1 ? "dp*tp*pp" : "dp*tp*pp*cp") + " = " + std::to_string(s.dp) + "*" +
           std::to_string(s.tp) + "*" + std::to_string(s.pp) + (s.cp == 1 ? "" : "*" + std::to_string(s.cp)) +
           " = " + std::to_string(int64_t(s.dp) * s.tp * s.pp * s.cp) + " does not equal the mesh's " +
           std::to_string(mesh_size) + " devices";
  if (std::string cp_issue = context_parallel_problem(mfc, spec, s); !cp_issue.empty()) return cp_issue;
  if (mfc.kind() != MfcKind::kTrain && (s.zero1 || s.recompute))
    return std::string(s.zero1 ? "zero1" : "recompute") + " applies to train calls only; " + mfc.name +
           " is a " + to_string(mfc.kind()) + " call";
  const int dpn = cluster.devices_per_node;
  // A serving engine's generation may run a replica's tensor parallelism over whole nodes (NeMo-RL's vLLM,
  // veRL's, OpenRLHF's and AReaL's servers each start one across nodes; each adapter cites where, and
  // docs/engines.md lists them); its all-reduces then cross the NIC (cost/call_cost.cc). Every other call,
  // and every call of realign's own runtime, keeps tp within a node.
  if (serving_engine && mfc.kind() == MfcKind::kGenerate && s.tp > dpn) {
    if (s.tp % dpn != 0)
      return "tp " + std::to_string(s.tp) + " spans nodes of " + std::to_string(dpn) +
             " devices but not whole ones: a serving engine's replica across nodes takes whole nodes (a "
             "multiple of " +
             std::to_string(dpn) + ")";
  } else if (s.tp > dpn || (mesh_size >= dpn && dpn % s.tp != 0)) {
    return "tp " + std::to_string(s.tp) + " must stay within one node of " + std::to_string(dpn) + " devices";
  }
  const std::string tp_issue =
      tp_incompatibility(spec, s.tp, serving_engine && mfc.kind() == MfcKind::kGenerate);
  if (!tp_issue.empty()) return tp_issue + " of " + spec.name;
  if (s.pp > spec.n_layers)
    return "pp " + std::to_string(s.pp) + " exceeds " + spec.name + "'s " + std::to_string(spec.n_layers) +
           " layers";
  // Megatron carves expert-parallel groups out of each stage's tp x cp x dp ranks (the layout's replicas).
  if (std::string ep_issue = expert_parallel_problem(spec, s.replicas(), s.tp, s.ep); !ep_issue.empty())
    return ep_issue;
  // Every dp rank needs a row of every optimizer step (a train call's mini-batch is a segment of the batch
  // shared out over dp), so the smallest step counts.
  const int64_t seqs_per_step = mfc.min_seqs_per_step();
  if (s.dp > seqs_per_step)
    return "dp " + std::to_string(s.dp) + " exceeds the " + std::to_string(seqs_per_step) + " sequences of " +
           (mfc.kind() == MfcKind::kTrain ? "a training step (" + std::to_string(mfc.n_seqs) + " in " +
                                                std::to_string(mfc.mini_batches) + " mini-batches)"
                                          : std::string("the call"));
  const int64_t per_rank = seqs_per_step / s.dp;
  if (s.micro_batches > per_rank)
    return std::to_string(s.micro_batches) + " micro-batches exceed the " + std::to_string(per_rank) +
           " sequences per data-parallel rank";
  return "";
}

void validate_plan(const DataflowGraph& graph, const Cluster& cluster, ExecutionPlan& plan,
                   const std::string& path, bool serving_engine) {
  std::vector<MfcAssignment> ordered(graph.mfcs.size());
  std::vector<bool> seen(graph.mfcs.size(), false);
  std::vector<std::string> origin(graph.mfcs.size());
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const auto& a = plan.assignments[i];
    const std::string p = index_path(path + ".mfcs", i);
    const int idx = graph.mfc_index(a.mfc);
    if (idx < 0) {
      std::string known;
      for (const auto& m : graph.mfcs) known += (known.empty() ? "" : ", ") + m.name;
      throw Error(p + ".name", "no call named '" + a.mfc + "' in the " + to_string(graph.algorithm) +
                                   " graph (" + known + ")");
    }
    if (seen[idx]) throw Error(p + ".name", "call '" + a.mfc + "' is assigned twice");
    seen[idx] = true;
    origin[idx] = p;
    const std::string mesh_issue = mesh_problem(a.mesh, cluster);
    if (!mesh_issue.empty()) throw Error(p + ".mesh", mesh_issue);
    const Mfc& mfc = graph.mfcs[idx];
    const ModelSpec& spec = graph.model(mfc.model).spec;
    std::string issue = strategy_problem(mfc, spec, cluster, a.mesh.size, a.strategy, serving_engine);
    if (!issue.empty()) {
      // Name the field most responsible for the problem.
      std::string field = ".dp";
      if (issue.rfind("tp", 0) == 0)
        field = ".tp";
      else if (issue.rfind("pp", 0) == 0)
        field = ".pp";
      else if (issue.rfind("ep", 0) == 0)
        field = ".ep";
      else if (issue.rfind("cp", 0) == 0)
        field = ".cp";
      else if (issue.find("micro-batches") != std::string::npos)
        field = ".micro_batches";
      else if (issue.rfind("dp*tp*pp", 0) == 0)
        field = "";
      else if (issue.rfind("zero1", 0) == 0)
        field = ".zero1";
      else if (issue.rfind("recompute", 0) == 0)
        field = ".recompute";
      throw Error(p + field, issue);
    }
    ordered[idx] = a;
  }
  for (size_t i = 0; i < graph.mfcs.size(); ++i)
    if (!seen[i]) throw Error(path + ".mfcs", "call '" + graph.mfcs[i].name + "' has no assignment");
  for (size_t g = 0; g < plan.disjoint.size(); ++g) {
    const std::string p = index_path(path + ".disjoint", g);
    std::vector<int> idx;
    for (size_t k = 0; k < plan.disjoint[g].size(); ++k) {
      const int m = graph.mfc_index(plan.disjoint[g][k]);
      if (m < 0) throw Error(index_path(p, k), "no call named '" + plan.disjoint[g][k] + "'");
      idx.push_back(m);
    }
    for (size_t a = 0; a < idx.size(); ++a)
      for (size_t b = a + 1; b < idx.size(); ++b)
        if (ordered[idx[a]].mesh.overlaps(ordered[idx[b]].mesh))
          throw Error(origin[idx[b]] + ".mesh",
                      "'" + ordered[idx[b]].mfc + "' on devices " + to_string(ordered[idx[b]].mesh) +
                          " overlaps '" + ordered[idx[a]].mfc + "' on " + to_string(ordered[idx[a]].mesh) +
                          ", which " + p + " keeps apart");
  }
  for (size_t i = 0; i < plan.offload.size(); ++i) {
    const std::string p = index_path(path + ".offload", i);
    const Role role = plan.offload[i];
    const std::string name = to_string(role);
    std::string untrained;
    for (const auto& m : graph.models)
      if (!m.trained) untrained += (untrained.empty() ? "" : ", ") + to_string(m.role);
    const auto m = std::find_if(graph.models.begin(), graph.models.end(),
                                [&](const ModelRole& r) { return r.role == role; });
    const std::string valid =
        untrained.empty() ? "this graph has none" : "models never trained: " + untrained;
    if (m == graph.models.end()) throw Error(p, "no model named '" + name + "' (" + valid + ")");
    if (m->trained)
      throw Error(p, "'" + name + "' is trained: its optimizer state stays on its devices (" + valid + ")");
    if (std::count(plan.offload.begin(), plan.offload.end(), role) > 1)
      throw Error(p, "'" + name + "' is listed twice");
  }
  plan.assignments = std::move(ordered);
}

}  // namespace realign
