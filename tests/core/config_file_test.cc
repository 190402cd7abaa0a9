#include "core/config_file.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(ParseYaml, MapsScalarsToJsonTypes) {
  Json j = parse_yaml("a: 1\nb: 2.5\nc: true\nd: hello\ne: '12'\nf: [1, 2]\ng: ~\n", "t.yaml");
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], 2.5);
  EXPECT_EQ(j["c"], true);
  EXPECT_EQ(j["d"], "hello");
  EXPECT_EQ(j["e"], "12");
  EXPECT_EQ(j["f"].size(), 2u);
  EXPECT_TRUE(j["g"].is_null());
}

TEST(ParseYaml, JsonIsYaml) {
  Json j = parse_yaml(R"({"x": {"y": [1, 2, 3]}})", "t.json");
  EXPECT_EQ(j["x"]["y"][2], 3);
}

TEST(ParseYaml, SyntaxErrorNamesFileAndLine) {
  try {
    parse_yaml("a: 1\nb: [1, 2\n", "bad.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "bad.yaml");
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos);
  }
}

TEST(ParseYaml, DuplicateKeyIsAnError) { EXPECT_THROW(parse_yaml("a: 1\na: 2\n", "d.yaml"), Error); }

TEST(Overrides, SetNestedCreatesAndReplaces) {
  Json j = parse_yaml("ppo: {batch: 8}\nmodels: [{name: actor}]\n", "t");
  apply_overrides(j, {"ppo.batch=16", "ppo.new.deep=true", "models[0].name=critic", "top=[1,2]"});
  EXPECT_EQ(j["ppo"]["batch"], 16);
  EXPECT_EQ(j["ppo"]["new"]["deep"], true);
  EXPECT_EQ(j["models"][0]["name"], "critic");
  EXPECT_EQ(j["top"].size(), 2u);
}

TEST(Overrides, BadOverridesAreErrors) {
  Json j = parse_yaml("a: 1\nl: [1]\n", "t");
  EXPECT_THROW(apply_override(j, "noequals"), Error);
  EXPECT_THROW(apply_override(j, "=3"), Error);
  EXPECT_THROW(apply_override(j, "a.b=3"), Error);
  EXPECT_THROW(apply_override(j, "l[5]=3"), Error);
  EXPECT_THROW(apply_override(j, "l[x]=3"), Error);
  EXPECT_THROW(apply_override(j, "a..b=3"), Error);
}

TEST(LoadConfigFile, MissingFileNamesIt) {
  try {
    load_config_file("/nonexistent/cfg.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "/nonexistent/cfg.yaml");
  }
}

}  // namespace
}  // namespace realign
