#include "tensorfile/hf_config_file.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign::tensorfile {
namespace {

TEST(HfConfigFile, WriteThenReadGivesTheSameSpec) {
  testing::TempDir dir;
  for (const std::string name : {"llama-tiny", "gpt2-tiny", "qwen2.5-0.5b", "llama3-8b"}) {
    ModelSpec spec = builtin_model(name);
    write_hf_config(dir.path(), spec, "bfloat16");
    ModelSpec back = read_hf_config(dir.path());
    back.name = spec.name;  // the reader names a spec after its file
    EXPECT_EQ(back, spec) << name;
    EXPECT_NE(testing::read_file(dir.file("config.json")).find("\"torch_dtype\": \"bfloat16\""),
              std::string::npos);
  }
  EXPECT_NO_THROW(read_hf_config(dir.file("config.json")));
}

TEST(HfConfigFile, ErrorsNameTheFile) {
  testing::TempDir dir;
  try {
    read_hf_config(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: cannot open"), std::string::npos) << e.what();
  }
  testing::write_file(dir.file("config.json"), R"({"model_type": "llama", "hidden_size": 64})");
  try {
    read_hf_config(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace realign::tensorfile
