#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace realign::tokenizer {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
}  // namespace

void AddedTokens::add(AddedToken token) {
  if (token.content.empty()) return;
  tokens_.push_back(std::move(token));
  auto& bucket = by_first_byte_[static_cast<uint8_t>(tokens_.back().content[0])];
  bucket.push_back(static_cast<int>(tokens_.size()) - 1);
  std::stable_sort(bucket.begin(), bucket.end(),  // longest first
                   [&](int a, int b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  by_id_[tokens_.back().id] = static_cast<int>(tokens_.size()) - 1;
}

std::vector<TextSegment> AddedTokens::split(std::string_view text, bool specials) const {
  std::vector<TextSegment> out;
  size_t start = 0;  // beginning of pending ordinary text
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* hit = nullptr;
    for (int k : by_first_byte_[static_cast<uint8_t>(text[i])]) {
      const AddedToken& t = tokens_[k];
      if (t.special && !specials) continue;
      if (text.compare(i, t.content.size(), t.content) == 0) {
        hit = &t;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    size_t b = i, e = i + hit->content.size();
    if (hit->lstrip)
      while (b > start && is_space(text[b - 1])) --b;
    if (hit->rstrip)
      while (e < text.size() && is_space(text[e])) ++e;
    if (b > start) out.push_back({text.substr(start, b - start), std::nullopt});
    out.push_back({text.substr(b, e - b), hit->id});
    start = i = e;
  }
  if (start < text.size()) out.push_back({text.substr(start), std::nullopt});
  return out;
}

const AddedToken* AddedTokens::find_id(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedTokens::find_content(std::string_view content) const {
  for (const auto& t : tokens_)
    if (t.content == content) return &t;
  return nullptr;
}

}  // namespace realign::tokenizer
