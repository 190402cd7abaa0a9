// BpeModel: a BPE vocabulary and ranked merges over token strings, applying merges to one pre-tokenized word
// the way HF tokenizers does (lowest rank first, leftmost first among equal ranks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace realign::tokenizer {

// What becomes of a character that is not in the vocabulary.
struct BpeUnknown {
  bool byte_fallback = false;     // its UTF-8 bytes as <0xAB> tokens (SentencePiece-style BPE)
  std::optional<int32_t> unk_id;  // else the unknown token ...
  bool fuse_unk = false;          // ... one for a run of unknown characters
};

class BpeModel {
 public:
  // `where` names the source file in errors.
  BpeModel(std::unordered_map<std::string, int32_t> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges,
           const std::string& where, BpeUnknown unknown = {});

  // `symbols`: the word as initial tokens (one per character). Throws Error when a symbol is not in the
  // vocabulary and `unknown` offers no way out.
  std::vector<int32_t> encode_word(const std::vector<std::string_view>& symbols,
                                   std::string_view whole) const;

  std::optional<int32_t> find(std::string_view token) const;
  const std::string& token(int32_t id) const { return tokens_[id]; }
  // One more than the largest id.
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  bool has_id(int32_t id) const { return id >= 0 && id < size() && has_[id]; }

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;
  std::vector<bool> has_;
  std::unordered_map<uint64_t, Merge> merges_;
  bool ignore_merges_;
  BpeUnknown unknown_;
  std::vector<int32_t> byte_ids_;  // <0xAB> token ids when byte_fallback (-1 where absent)
  std::string where_;
};

}  // namespace realign::tokenizer
