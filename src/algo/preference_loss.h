// Losses on preference pairs (chosen, rejected): DPO (Rafailov et al. 2023) on summed response log-probs, and
// the Bradley-Terry loss of reward-model training.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

struct PairLoss {
  at::Tensor loss;       // scalar, mean over pairs
  double accuracy;       // share of pairs ranked correctly
  double margin;         // mean (chosen - rejected) implicit reward / score
};

// logps: summed log-probs of each response under the policy / reference, shape (P). beta: KL strength.
// label_smoothing (cDPO) mixes in the flipped pair with weight ls.
PairLoss dpo_loss(const at::Tensor& chosen_logps, const at::Tensor& rejected_logps, const at::Tensor& ref_chosen_logps,
                  const at::Tensor& ref_rejected_logps, double beta, double label_smoothing = 0);

// -log sigmoid(r_chosen - r_rejected), scores (P).
PairLoss bradley_terry_loss(const at::Tensor& chosen_scores, const at::Tensor& rejected_scores);

}  // namespace realign::algo
