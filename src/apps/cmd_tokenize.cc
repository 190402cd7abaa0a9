// `realign tokenize`: what realign feeds a model for a text (the ids, with the special tokens transformers
// adds), and `--decode` for the way back.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>

#include "apps/commands.h"
#include "core/error.h"
#include "core/json.h"
#include "jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace realign::apps {
namespace {

std::string read_stdin() {
  std::ostringstream ss;
  ss << std::cin.rdbuf();
  return ss.str();
}

// Ids as a JSON array or separated by spaces, commas or newlines.
std::vector<int32_t> parse_ids(const std::string& text, int64_t vocab, const std::string& where) {
  std::string s = text;
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && s[first] == '[') {
    Json j = Json::parse(s, nullptr, false);
    if (j.is_discarded() || !j.is_array())
      throw Error(where, "starts with '[' but is not a JSON array of ids");
    s.clear();
    for (const Json& v : j) s += v.dump() + " ";
  }
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '\r' || c == '\t') c = ' ';
  std::vector<int32_t> ids;
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    if (end == tok.c_str() || *end != '\0' || v < 0 || v >= vocab)
      throw Error(where, "'" + tok + "' is not a token id in [0, " + std::to_string(vocab) + ")");
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

std::string render_messages(const std::string& model, const std::string& input, bool gen,
                            const std::string& where) {
  Json j = Json::parse(input, nullptr, false);
  if (j.is_discarded())
    throw Error(where, "with --messages, must be JSON: a list of messages or {\"messages\": [...]}");
  const Json messages = j.is_object() && j.contains("messages") ? j["messages"] : j;
  std::optional<jinja::ChatTemplate> t = jinja::ChatTemplate::from_tokenizer_config(model);
  if (!t) throw Error(model, "has no chat_template in its tokenizer_config.json");
  return t->render(messages, gen, where);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("tokenize", "Encode text with a model directory's tokenizer (or decode ids)");
  struct Args {
    std::string model, text;
    bool decode = false, no_special = false, skip_special = false, json = false, messages = false,
         gen = false;
  };
  auto a = std::make_shared<Args>();
  sub->add_option("--model", a->model, "HF model directory (tokenizer.json, tokenizer.model, ...) or file")
      ->required();
  sub->add_option("--text", a->text, "The text (default: all of stdin); with --decode, the ids");
  sub->add_flag("--decode", a->decode,
                "Read token ids (JSON array or separated by spaces/commas), print the text");
  sub->add_flag("--no-special-tokens", a->no_special,
                "Encode without the special tokens (BOS/EOS) that transformers adds for the model");
  sub->add_flag("--skip-special", a->skip_special, "With --decode: leave special tokens out of the text");
  sub->add_flag("--json", a->json, "Print {\"ids\", \"tokens\"} (or {\"text\"} with --decode)");
  sub->add_flag(
      "--messages", a->messages,
      "The input is a conversation (JSON: [{\"role\", \"content\"}, ...] or {\"messages\": [...]}), "
      "rendered with the model's chat template first, as for training");
  sub->add_flag("--add-generation-prompt", a->gen, "With --messages: end with the assistant's header");
  on_run(sub, [a, sub] {
    auto tok = tokenizer::load_tokenizer(a->model);
    const bool from_flag = sub->count("--text") > 0;
    const std::string input = from_flag ? a->text : read_stdin();
    const std::string where = from_flag ? "--text" : "stdin";
    if (a->decode) {
      const std::string text = tok->decode(parse_ids(input, tok->vocab_size(), where), a->skip_special);
      if (a->json)
        std::printf("%s\n",
                    Json{{"text", text}}.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
      else
        std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    std::vector<int32_t> ids;
    std::string rendered;
    if (a->messages) {
      rendered = render_messages(a->model, input, a->gen, where);
      // As training prompts: the special prefix unless the template printed it (no second BOS).
      ids = tok->encode(rendered);
      const std::vector<int32_t>& prefix = tok->special_prefix();
      const bool present =
          ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
      if (!a->no_special && !present) ids.insert(ids.begin(), prefix.begin(), prefix.end());
    } else {
      tokenizer::EncodeOptions o;
      o.add_special_tokens = !a->no_special;
      ids = tok->encode(input, o);
    }
    if (a->json) {
      Json tokens = Json::array();
      for (int32_t id : ids) tokens.push_back(tok->id_to_token(id));
      Json out = {{"ids", ids}, {"tokens", tokens}};
      if (a->messages) out["text"] = rendered;
      std::printf("%s\n", out.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
    } else {
      std::string line;
      for (int32_t id : ids) line += (line.empty() ? "" : " ") + std::to_string(id);
      std::printf("%s\n", line.c_str());
    }
    return 0;
  });
}

}  // namespace realign::apps
