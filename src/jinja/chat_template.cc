#include "jinja/chat_template.h"

#include <sys/stat.h>

#include "core/error.h"
#include "core/read_file.h"

namespace realign::jinja {

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void check_messages(const Json& messages, const std::string& where) {
  if (!messages.is_array() || messages.empty())
    throw Error(where + ": messages", "must be a non-empty list of {\"role\": ..., \"content\": ...}");
  for (size_t k = 0; k < messages.size(); ++k) {
    const std::string path = where + ": " + index_path("messages", k);
    const Json& m = messages[k];
    if (!m.is_object()) throw Error(path, "must be an object with \"role\" and \"content\"");
    if (!m.contains("role")) throw Error(path + ".role", "is missing (system, user, assistant, ...)");
    if (!m["role"].is_string() || m["role"].get<std::string>().empty())
      throw Error(path + ".role", "must be a non-empty string (system, user, assistant, ...)");
    if (!m.contains("content")) throw Error(path + ".content", "is missing");
    if (!m["content"].is_string() && !m["content"].is_null())
      throw Error(path + ".content", "must be a string (list-of-parts content is not supported)");
  }
}

ChatTemplate::ChatTemplate(const std::string& source, const Json& special_tokens, const std::string& where)
    : template_(std::make_shared<jinja::Template>(source, where)), special_tokens_(special_tokens) {}

std::optional<ChatTemplate> ChatTemplate::from_tokenizer_config(const std::string& dir_or_file) {
  const std::string path = is_dir(dir_or_file) ? dir_or_file + "/tokenizer_config.json" : dir_or_file;
  nlohmann::json config = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) throw Error(path, "not a JSON object");
  if (!config.contains("chat_template") || config["chat_template"].is_null()) return std::nullopt;
  const nlohmann::json& t = config["chat_template"];
  std::string source;
  if (t.is_string()) {
    source = t.get<std::string>();
  } else if (t.is_array()) {
    for (const auto& named : t)
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named["template"].is_string())
        source = named["template"].get<std::string>();
    if (source.empty())
      throw Error(path + ": chat_template", "is a list without a template named \"default\"");
  } else {
    throw Error(path + ": chat_template", "must be a string or a list of {\"name\", \"template\"}");
  }
  Json special = Json::object();
  for (const char* key :
       {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"}) {
    auto it = config.find(key);
    if (it == config.end()) continue;
    if (it->is_string())
      special[key] = *it;
    else if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
      special[key] = (*it)["content"];
  }
  return ChatTemplate(source, special, path + ": chat_template");
}

std::string ChatTemplate::render(const Json& messages, bool add_generation_prompt,
                                 const std::string& where) const {
  check_messages(messages, where);
  jinja::Dict context;
  context.emplace_back("messages", jinja::Value::from_json(messages));
  context.emplace_back("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  for (auto it = special_tokens_.begin(); it != special_tokens_.end(); ++it)
    context.emplace_back(it.key(), jinja::Value::string(it.value().get<std::string>()));
  try {
    return template_->render(context);
  } catch (const Error& e) {
    throw Error(where, std::string("chat template: ") + e.what());
  }
}

std::function<std::string(const Json&, bool, const std::string&)> chat_template_renderer(
    const std::string& dir_or_file) {
  std::optional<ChatTemplate> t = ChatTemplate::from_tokenizer_config(dir_or_file);
  if (!t) throw Error(dir_or_file, "has no chat_template in its tokenizer_config.json");
  auto shared = std::make_shared<ChatTemplate>(std::move(*t));
  return [shared](const Json& messages, bool add_generation_prompt, const std::string& where) {
    return shared->render(messages, add_generation_prompt, where);
  };
}

}  // namespace realign::jinja
