// Executes a DataPlan over comm: a batch of per-sample, variable-length tensors keyed by field name
// (prompts, sequences, log-probs, values, rewards) moves from the producer layout's dp ranks to the ranks of
// the consumer layout, by sample index. Each sender packs the samples of one destination into one message
// (a small header first, since the receiver does not know the lengths); samples a rank already holds are
// reused without copying the tensors.
//
// Contract: as realloc_executor.h (group rank r is device r; every rank in either layout calls it with the
// same plan). A sample's fields may have any dtype and shape; samples need not share field sets.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "comm/group.h"
#include "realloc/data_plan.h"

namespace realign {

using Sample = std::map<std::string, at::Tensor>;  // field name -> tensor (any shape and dtype)
using SampleSet = std::map<int64_t, Sample>;       // sample index -> its fields

struct DataMoveStats {
  int64_t bytes_sent = 0;  // payload and headers
  int64_t bytes_received = 0;
  int64_t samples_sent = 0;
  int64_t samples_received = 0;
  int64_t messages = 0;  // sent or received by this rank (size headers and bodies)
};

// `held`: at least the samples this rank holds as a producer (samples_of(plan.producer)); extra ones are
// ignored. Returns exactly the samples it needs as a consumer (empty outside the consumer layout). Throws
// realign::Error naming the sample when a held one is missing.
SampleSet redistribute_samples(comm::Group& group, const DataPlan& plan, const SampleSet& held,
                               DataMoveStats* stats = nullptr);

// Several batches at once, each with its own plan (e.g. every input of the calls that run next, each from
// its producer's layout): whatever one rank sends another, over all the plans, travels in one message, so
// the whole set costs one round of size headers and one of bodies. held[k] and the result's [k] belong to
// plans[k]. `per_plan` (optional) gets, per plan, the payload bytes and samples of its own samples (not the
// headers, which `stats` counts).
std::vector<SampleSet> redistribute_samples(comm::Group& group, const std::vector<DataPlan>& plans,
                                            const std::vector<const SampleSet*>& held,
                                            DataMoveStats* stats = nullptr,
                                            std::vector<DataMoveStats>* per_plan = nullptr);

}  // namespace realign
