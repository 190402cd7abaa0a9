// Calls that share one layout (an engine that runs them in one worker): the search moves them together, so
// their candidate lists are aligned index by index.
#pragma once

#include <string>
#include <vector>

#include "search/candidates.h"

namespace realign {

// Aligns the candidate lists of each tied group (SearchOptions::tied; the first call leads): a follower's
// k-th candidate has the leader's k-th mesh and (dp, tp, pp, ep), with a strategy of its own there
// (micro-batches, ZeRO-1, recomputation) allowed by `options`' filters. Each leader candidate gives two rows:
// every follower at its fastest (fitting on its own first), and every follower at its leanest, when that
// differs. A leader candidate that some follower cannot take is dropped from every list of the group; a group
// left with no candidate leaves its lists empty.
void tie_candidates(const DataflowGraph& graph, const Cluster& cluster, PlanEvaluator& evaluator,
                    const std::vector<std::vector<std::string>>& tied, const CandidateOptions& options,
                    std::vector<std::vector<MfcAssignment>>& candidates);

}  // namespace realign
