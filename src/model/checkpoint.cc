#include "model/checkpoint.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "model/hf_names.h"
#include "model/init.h"
#include "model/shard.h"
#include "tensorfile/hf_config_file.h"
#include "tensorfile/sharded_checkpoint.h"
#include "tensorfile/tensor_file.h"

namespace realign::model {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ")";
  return os.str();
}

const tensorfile::TensorView* find_hf(const tensorfile::ShardedCheckpoint& ckpt, const ModelSpec& spec,
                                      const std::string& name) {
  if (const tensorfile::TensorView* v = ckpt.find(name)) return v;
  if (spec.family == ModelFamily::kGpt2) return ckpt.find(strip_gpt2_prefix(name));
  return nullptr;
}

// This rank's part of an expert stack: only the experts it holds are read (each HF tensor one at a time).
at::Tensor load_expert_shard(const std::string& dir, const tensorfile::ShardedCheckpoint& ckpt, const ParamInfo& p,
                             const HfSource& src, const RankSlice& slice) {
  const Range experts = ep_shard_range(p, slice.ep_rank, slice.ep);
  const std::vector<int64_t> one(p.shape.begin() + 1, p.shape.end());
  std::vector<at::Tensor> parts;
  for (int64_t e = experts.begin; e < experts.end; ++e) {
    const std::string& name = src.stacked[size_t(e)];
    const tensorfile::TensorView* view = ckpt.find(name);
    if (view == nullptr)
      throw Error(dir, "checkpoint lacks tensor '" + name + "' (realign parameter " + p.name + ")");
    if (view->shape != one)
      throw Error(dir, "tensor '" + name + "' has shape " + shape_str(view->shape) + ", expected " +
                           shape_str(one) + " for this config.json");
    at::Tensor t = tensorfile::to_tensor(*view, at::kFloat);
    if (slice.ep == 1 && p.split_dim > 0) {  // the expert's tp slice of its inner dimension
      const Range r = tp_shard_range(p, slice.tp_rank, slice.tp_size);
      t = t.narrow(p.split_dim - 1, r.begin, r.size());
    }
    parts.push_back(t.contiguous().clone());
  }
  return at::stack(parts);
}

}  // namespace

std::map<std::string, at::Tensor> load_hf_shards(const std::string& dir, const ModelSpec& spec, HeadKind head,
                                                 const RankSlice& slice, at::ScalarType dtype,
                                                 const LoadOptions& options) {
  tensorfile::ShardedCheckpoint ckpt(dir);
  std::map<std::string, at::Tensor> out;
  // GPT-2's fused c_attn feeds three canonical tensors: keep the last one copied out.
  std::string cached_name;
  at::Tensor cached;
  for (const ParamInfo& p : model_params(spec, head)) {
    if (!stage_holds(p, slice.stage, slice.pp, spec.n_layers)) continue;
    const HfSource src = hf_source(spec, p.name);
    if (!src.stacked.empty()) {
      out[p.name] = load_expert_shard(dir, ckpt, p, src, slice).to(dtype).contiguous();
      continue;
    }
    const tensorfile::TensorView* view = find_hf(ckpt, spec, src.name);
    if (view == nullptr) {
      if (p.name.rfind("value_head.", 0) == 0 && options.init_missing_value_head) {
        out[p.name] = shard_of(init_param(p, spec, options.value_head_seed), p, slice.tp_rank, slice.tp_size)
                          .to(dtype)
                          .clone();
        continue;
      }
      throw Error(dir, "checkpoint lacks tensor '" + src.name + "' (realign parameter " + p.name + ")");
    }
    if (view->name != cached_name) {
      cached = tensorfile::to_tensor(*view, at::kFloat);
      cached_name = view->name;
    }
    if (!at::isFloatingType(cached.scalar_type()))
      throw Error(dir, "tensor '" + view->name + "' is not floating point");
    at::Tensor full;
    // Check the shape claims before slicing, so a lying checkpoint gives an error rather than a CHECK.
    bool usable = !src.transpose || cached.dim() == 2;
    if (usable && src.fused_part >= 0)
      usable = cached.dim() >= 1 && (src.transpose ? cached.size(1) : cached.size(0)) % src.fused_parts == 0;
    if (usable) full = canonical_from_hf(src, cached);
    if (!full.defined() || full.sizes().vec() != p.shape)
      throw Error(dir, "tensor '" + view->name + "' has shape " + shape_str(view->shape) + ", which does not give " +
                           p.name + " of shape " + shape_str(p.shape) + " for this config.json");
    out[p.name] = shard_of(full, p, slice.tp_rank, slice.tp_size).to(dtype).contiguous().clone();
  }
  return out;
}

std::map<std::string, at::Tensor> load_hf_full(const std::string& dir, const ModelSpec& spec, HeadKind head,
                                               at::ScalarType dtype, const LoadOptions& options) {
  return load_hf_shards(dir, spec, head, RankSlice{}, dtype, options);
}

void save_hf_checkpoint(const std::string& dir, const ModelSpec& spec, HeadKind head,
                        const std::map<std::string, at::Tensor>& full, tensorfile::DType on_disk,
                        size_t max_shard_bytes) {
  for (const ParamInfo& p : model_params(spec, head)) {
    auto it = full.find(p.name);
    if (it == full.end()) throw Error(p.name, "missing from the parameters to save");
    if (it->second.sizes().vec() != p.shape)
      throw Error(p.name, "has shape " + shape_str(it->second.sizes().vec()) + ", expected " + shape_str(p.shape));
  }
  if (full.size() != model_params(spec, head).size())
    throw Error(dir, "parameters to save include names the model does not have");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "cannot create directory: " + ec.message());
  const char* torch_dtype = on_disk == tensorfile::DType::kBF16  ? "bfloat16"
                            : on_disk == tensorfile::DType::kF16 ? "float16"
                                                                 : "float32";
  tensorfile::save_tensors_sharded(dir, to_hf_tensors(spec, full), on_disk, max_shard_bytes,
                                   {{"format", "pt"}});
  tensorfile::write_hf_config(dir, spec, torch_dtype);
}

}  // namespace realign::model
