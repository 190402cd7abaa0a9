// ChatTemplate: a model's chat_template (tokenizer_config.json) rendered for a conversation as transformers'
// apply_chat_template does: variables messages, bos_token, eos_token, add_generation_prompt (and the other
// special tokens the config names).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/json.h"
#include "jinja/template.h"

namespace realign::jinja {

class ChatTemplate {
 public:
  // `source`: the template text; `special_tokens`: name -> text (bos_token, eos_token, ...). Errors name
  // `where`.
  ChatTemplate(const std::string& source, const Json& special_tokens, const std::string& where);
  // The chat_template of tokenizer_config.json in `dir_or_file` (a model directory or the file itself):
  // nullopt when the config has none. A list of named templates uses the one named "default".
  static std::optional<ChatTemplate> from_tokenizer_config(const std::string& dir_or_file);

  // `messages`: [{"role": ..., "content": ...}, ...] (checked: errors name `where` and messages[i].field).
  std::string render(const Json& messages, bool add_generation_prompt, const std::string& where) const;

 private:
  std::shared_ptr<jinja::Template> template_;
  Json special_tokens_;
};

// A function rendering conversations with the chat template of `dir_or_file` (a model directory or its
// tokenizer_config.json), in the shape data::RenderConversation takes. Throws Error when there is none.
std::function<std::string(const Json& messages, bool add_generation_prompt, const std::string& where)>
chat_template_renderer(const std::string& dir_or_file);

// Checks the shape of a conversation: a non-empty list of objects, each with a "role" string and a "content"
// string (or null, for tool-call turns). Errors name `where` and the field (messages[2].role).
void check_messages(const Json& messages, const std::string& where);

}  // namespace realign::jinja
