#include "tiny_tokenizer.h"

#include <fstream>

#include "core/json.h"

namespace realign::testing {

void write_tiny_tokenizer(const std::string& dir) {
  Json vocab = {{"<unk>", 0},   {"<s>", 1},      {"</s>", 2}, {"\u2581", 3},   {"<0xC3>", 30},
                {"<0xA9>", 31}, {"\u2581a", 32}, {"ab", 33},  {"\u2581ab", 34}};
  for (char c = 'a'; c <= 'z'; ++c) vocab[std::string(1, c)] = 4 + (c - 'a');
  Json added = Json::array();
  for (int id = 0; id < 3; ++id)
    added.push_back({{"id", id},
                     {"content", id == 0   ? "<unk>"
                                 : id == 1 ? "<s>"
                                           : "</s>"},
                     {"special", true},
                     {"normalized", false}});
  const Json tokenizer = {
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\u2581"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"unk_token", "<unk>"},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", {"a b", "\u2581 a", "\u2581a b"}}}}};
  std::ofstream(dir + "/tokenizer.json") << tokenizer.dump();
  std::ofstream(dir + "/tokenizer_config.json") << Json{
      {"add_bos_token", true},
      {"add_eos_token", false},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"},
      {"chat_template",
       "{{ bos_token }}{% for m in messages %}{{ m.role[0] + ' ' + m.content + ' ' }}{% endfor %}"
       "{% if add_generation_prompt %}a{% endif %}"}}.dump();
}

}  // namespace realign::testing
