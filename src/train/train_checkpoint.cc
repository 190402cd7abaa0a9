#include "train/detail/train_checkpoint.h"

#include <ATen/ATen.h>

#include <filesystem>

#include "core/error.h"
#include "model/checkpoint.h"
#include "tensorfile/tensor_file.h"
#include "train/checkpoint_store.h"

namespace realign::train {
namespace {

const char* const kInFlightFile = "in_flight.safetensors";

const char* head_name(HeadKind h) { return h == HeadKind::kValue ? "value" : "language_model"; }

void require_full(const ModelSlot& s) {
  if (s.model->tp().size() != 1 || s.model->parallel().n_stages != 1)
    throw Error(to_string(s.role),
                "checkpoints of a tensor- or pipeline-parallel layout are not supported yet (tp = pp = 1)");
}

}  // namespace

void save_train_checkpoint(const std::string& root, int64_t step, const std::vector<ModelSlot>& slots,
                           const Json& loop_state, const std::map<std::string, at::Tensor>& in_flight) {
  CheckpointWriter writer(root, step);
  if (!in_flight.empty())
    tensorfile::save_tensors(writer.dir() + "/" + kInFlightFile, in_flight, tensorfile::DType::kF32);
  Json models = Json::object();
  for (const ModelSlot& s : slots) {
    require_full(s);
    std::map<std::string, at::Tensor> full;
    for (const auto& [name, t] : s.model->named_params()) full[name] = t.detach();
    model::save_hf_checkpoint(writer.dir() + "/" + to_string(s.role), s.model->spec(), s.model->head(), full,
                              tensorfile::DType::kF32);
    Json entry{{"spec", to_json(s.model->spec())}, {"head", head_name(s.model->head())}};
    if (s.optim) {
      tensorfile::save_tensors(writer.dir() + "/" + to_string(s.role) + ".optim.safetensors",
                               s.optim->state_tensors(), tensorfile::DType::kF32);
      entry["optim_steps"] = s.optim->steps_done();
    }
    models[to_string(s.role)] = entry;
  }
  writer.commit(Json{{"models", models}, {"loop", loop_state}});
}

Json load_train_checkpoint(const std::string& root, int64_t step, const std::vector<ModelSlot>& slots,
                           std::map<std::string, at::Tensor>* in_flight) {
  CheckpointInfo info = open_checkpoint(root, step);
  const Json& models = info.metadata.value("models", Json::object());
  const std::string where = info.dir;
  // Check every model before loading any, so a mismatch leaves the run's models untouched.
  for (const ModelSlot& s : slots) {
    require_full(s);
    if (!models.contains(to_string(s.role)))
      throw Error(where, "has no '" + to_string(s.role) +
                             "' model: it was written by a run with another algorithm or stages");
    const Json& entry = models[to_string(s.role)];
    Json want = to_json(s.model->spec());
    if (entry.value("spec", Json()) != want || entry.value("head", "") != head_name(s.model->head()))
      throw Error(where, "the checkpoint's '" + to_string(s.role) + "' model is " +
                             entry.value("spec", Json()).dump() + " (" + entry.value("head", "") +
                             " head) but the config asks for " + want.dump() + " (" +
                             head_name(s.model->head()) + " head): a checkpoint from another model");
    if (s.optim && !entry.contains("optim_steps"))
      throw Error(where, "has no optimizer state for '" + to_string(s.role) + "'");
  }
  for (const ModelSlot& s : slots) {
    std::map<std::string, at::Tensor> full =
        model::load_hf_full(info.dir + "/" + to_string(s.role), s.model->spec(), s.model->head(), at::kFloat);
    s.model->load_shards(full, true);
    if (s.optim) {
      tensorfile::TensorMap state =
          tensorfile::load_tensors(info.dir + "/" + to_string(s.role) + ".optim.safetensors");
      s.optim->load_state(state, models[to_string(s.role)]["optim_steps"].get<int64_t>());
    }
  }
  in_flight->clear();
  if (std::filesystem::exists(info.dir + "/" + kInFlightFile))
    *in_flight = tensorfile::load_tensors(info.dir + "/" + kInFlightFile);
  return info.metadata.value("loop", Json::object());
}

}  // namespace realign::train
