#include "data/addition_task.h"

#include <algorithm>

#include "core/check.h"
#include "core/rng.h"

namespace realign::data {
namespace {

int64_t random_number(Rng& rng, int digits) {
  int64_t lo = 1, hi = 10;
  for (int i = 1; i < digits; ++i) {
    lo *= 10;
    hi *= 10;
  }
  if (digits == 1) lo = 0;
  return lo + rng.uniform_int(hi - lo);
}

// Digits of the largest answer: max_digits, plus one for the carry.
int64_t answer_digits(const AdditionTask& t) { return t.max_digits + 1; }

struct Sum {
  std::string prompt, answer;
};

Sum make_sum(const AdditionTask& t, Rng& rng) {
  REALIGN_CHECK(t.min_digits >= 1 && t.max_digits >= t.min_digits && t.max_digits <= 17);
  const int da = t.min_digits + int(rng.uniform_int(t.max_digits - t.min_digits + 1));
  const int db = t.min_digits + int(rng.uniform_int(t.max_digits - t.min_digits + 1));
  const int64_t a = random_number(rng, da), b = random_number(rng, db);
  return Sum{std::to_string(a) + "+" + std::to_string(b) + "=", std::to_string(a + b)};
}

}  // namespace

std::vector<PromptRecord> AdditionTask::prompts(int64_t n, uint64_t offset) const {
  Rng rng(seed * 1000003ULL + offset);
  std::vector<PromptRecord> out;
  for (int64_t i = 0; i < n; ++i) {
    const Sum s = make_sum(*this, rng);
    out.push_back({s.prompt, s.answer});
  }
  return out;
}

std::vector<SftRecord> AdditionTask::sft_pairs(int64_t n, uint64_t offset) const {
  std::vector<SftRecord> out;
  for (const auto& p : prompts(n, offset)) out.push_back({p.prompt, p.answer + "\n"});
  return out;
}

std::vector<PreferenceRecord> AdditionTask::preference_pairs(int64_t n, uint64_t offset) const {
  Rng rng(seed * 7919ULL + offset + 1);
  std::vector<PreferenceRecord> out;
  for (const auto& p : prompts(n, offset)) {
    std::string wrong = p.answer;
    // Half the rejected answers are near misses; the other half are far misses (any number with up to as many
    // digits as the largest answer) and broken answers (a digit dropped, possibly leaving nothing, or one
    // added). With near misses only, a reward model never learns that such answers are wrong, and PPO against
    // it converges on one of them for every prompt.
    const int64_t kind = rng.uniform_int(4);
    if (kind == 0) {
      do wrong = std::to_string(random_number(rng, 1 + int(rng.uniform_int(answer_digits(*this)))));
      while (wrong == p.answer);
    } else if (kind == 1) {
      const size_t pos = size_t(rng.uniform_int(int64_t(wrong.size()) + 1));
      if (rng.bernoulli(0.5) && pos < wrong.size())
        wrong.erase(pos, 1);
      else
        wrong.insert(pos, 1, char('0' + rng.uniform_int(10)));
    } else if (rng.bernoulli(0.5)) {
      const size_t pos = size_t(rng.uniform_int(int64_t(wrong.size())));
      const char old = wrong[pos];
      do wrong[pos] = char('0' + rng.uniform_int(10));
      while (wrong[pos] == old || (pos == 0 && wrong[pos] == '0' && wrong.size() > 1));
    } else {
      const int64_t delta = 1 + rng.uniform_int(9);
      const int64_t value = std::stoll(p.answer);
      wrong = std::to_string(value >= delta && rng.bernoulli(0.5) ? value - delta : value + delta);
    }
    out.push_back({p.prompt, p.answer + "\n", wrong + "\n"});
  }
  return out;
}

std::string first_line(const std::string& response) {
  std::string line = response.substr(0, response.find('\n'));
  const auto b = line.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return line.substr(b, line.find_last_not_of(' ') - b + 1);
}

double addition_reward(const std::string& response, const std::string& answer, bool partial_credit) {
  const std::string got = first_line(response);
  if (got == answer) return 1.0;
  if (!partial_credit || got.empty() || got.find_first_not_of("0123456789") != std::string::npos) return 0.0;
  size_t matches = 0;
  for (size_t i = 0; i < answer.size() && i < got.size(); ++i)
    matches += answer[answer.size() - 1 - i] == got[got.size() - 1 - i];
  const double length_penalty = got.size() == answer.size() ? 1.0 : 0.5;
  return 0.5 * length_penalty * double(matches) / double(answer.size());
}

}  // namespace realign::data
