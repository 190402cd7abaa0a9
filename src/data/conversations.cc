#include "data/conversations.h"

#include "core/error.h"

namespace realign::data {

namespace {

void need_template(const RenderConversation& render, const std::string& where) {
  if (!render)
    throw Error(where + ": messages",
                "conversation records need a chat template (data.chat_template: a model directory or its "
                "tokenizer_config.json with a chat_template); or write {\"prompt\": ...} records");
}

}  // namespace

std::string conversation_prompt(const Json& messages, const RenderConversation& render,
                                const std::string& where) {
  need_template(render, where);
  return render(messages, /*add_generation_prompt=*/true, where);
}

std::pair<std::string, std::string> conversation_answer(const Json& messages, const std::string& answer,
                                                        const RenderConversation& render,
                                                        const std::string& where) {
  need_template(render, where);
  std::string prompt = render(messages, /*add_generation_prompt=*/true, where);
  Json full = messages;
  full.push_back(Json{{"role", "assistant"}, {"content", answer}});
  std::string whole = render(full, /*add_generation_prompt=*/false, where);
  if (whole.size() <= prompt.size() || whole.compare(0, prompt.size(), prompt) != 0)
    throw Error(where + ": messages",
                "the chat template does not render the conversation with its answer as the prompt (with the "
                "generation prompt) followed by the answer, so the response cannot be cut out");
  return {std::move(prompt), whole.substr(prompt.size())};
}

}  // namespace realign::data
