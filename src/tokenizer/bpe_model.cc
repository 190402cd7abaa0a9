#include "tokenizer/bpe_model.h"

#include <cstdio>
#include <queue>

#include "core/error.h"

namespace realign::tokenizer {

namespace {
uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}
}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges,
                   const std::string& where, BpeUnknown unknown)
    : vocab_(std::move(vocab)), ignore_merges_(ignore_merges), unknown_(unknown), where_(where) {
  int32_t max_id = -1;
  for (const auto& [tok, id] : vocab_) {
    if (id < 0) throw Error(where, "vocab id of '" + tok + "' is negative");
    max_id = std::max(max_id, id);
  }
  tokens_.resize(max_id + 1);
  has_.resize(max_id + 1);
  for (const auto& [tok, id] : vocab_) {
    if (has_[id]) throw Error(where, "vocab id " + std::to_string(id) + " is used twice");
    tokens_[id] = tok;
    has_[id] = true;
  }
  if (unknown_.byte_fallback) {
    byte_ids_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      if (auto it = vocab_.find(name); it != vocab_.end()) byte_ids_[b] = it->second;
    }
  }
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [a, b] = merges[r];
    auto ia = vocab_.find(a), ib = vocab_.find(b), im = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end())
      throw Error(where, "merge " + std::to_string(r) + " ('" + a + "', '" + b +
                             "') uses or makes a token not in the vocab");
    // The first (lowest-rank) occurrence of a pair wins, as in HF.
    merges_.emplace(pair_key(ia->second, ib->second), Merge{static_cast<int32_t>(r), im->second});
  }
}

std::optional<int32_t> BpeModel::find(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::vector<int32_t> BpeModel::encode_word(const std::vector<std::string_view>& symbols,
                                           std::string_view whole) const {
  if (ignore_merges_) {
    // LLaMA-3: a word that is itself a token is emitted whole, without replaying the merges.
    if (auto id = find(whole)) return {*id};
  }
  // The initial symbols, as HF's BPE::merge_word: known characters, else their bytes, else (fused) unk.
  std::vector<int32_t> id;
  id.reserve(symbols.size());
  bool last_unk = false;
  for (std::string_view s : symbols) {
    if (auto t = find(s)) {
      id.push_back(*t);
      last_unk = false;
      continue;
    }
    if (unknown_.byte_fallback) {
      bool all = true;
      for (char c : s) all = all && byte_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        for (char c : s) id.push_back(byte_ids_[static_cast<uint8_t>(c)]);
        last_unk = false;
        continue;
      }
    }
    if (!unknown_.unk_id)
      throw Error(where_,
                  "symbol '" + std::string(s) + "' is not in the vocab (no byte fallback, no unk_token)");
    if (!(unknown_.fuse_unk && last_unk)) id.push_back(*unknown_.unk_id);
    last_unk = true;
  }
  const int n = static_cast<int>(id.size());
  std::vector<int> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  // (rank, position, merged id): lowest rank first, then leftmost, as HF's word merge queue.
  using Item = std::tuple<int32_t, int, int32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  auto push = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    auto it = merges_.find(pair_key(id[left], id[next[left]]));
    if (it != merges_.end()) queue.emplace(it->second.rank, left, it->second.merged);
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    auto [rank, pos, merged] = queue.top();
    queue.pop();
    if (!alive[pos] || next[pos] < 0) continue;
    auto it = merges_.find(pair_key(id[pos], id[next[pos]]));
    if (it == merges_.end() || it->second.merged != merged || it->second.rank != rank) continue;  // stale
    int right = next[pos];
    id[pos] = merged;
    alive[right] = false;
    next[pos] = next[right];
    if (next[pos] >= 0) prev[next[pos]] = pos;
    push(prev[pos]);
    push(pos);
  }
  std::vector<int32_t> out;
  for (int i = 0; i >= 0 && i < n; i = next[i]) out.push_back(id[i]);
  return out;
}

}  // namespace realign::tokenizer
