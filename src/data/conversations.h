// Conversation records ({"messages": [{"role", "content"}, ...]}) turned into the prompt and response text a
// model is trained on, through the model's chat template (given as a function, so data stays free of io).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "core/json.h"

namespace realign::data {

// Renders `messages` with the chat template; `where` names the record (file:line) in errors.
using RenderConversation =
    std::function<std::string(const Json& messages, bool add_generation_prompt, const std::string& where)>;

// The prompt of a conversation: all its turns and the generation prompt (the assistant's header).
std::string conversation_prompt(const Json& messages, const RenderConversation& render,
                                const std::string& where);

// The prompt (turns before the answer, with the generation prompt) and the response text (what the template
// adds for the assistant's `answer`, end-of-turn tokens included). Throws Error when the template does not
// render the conversation with the answer as the prompt followed by more text.
std::pair<std::string, std::string> conversation_answer(const Json& messages, const std::string& answer,
                                                        const RenderConversation& render,
                                                        const std::string& where);

}  // namespace realign::data
