#include "core/json.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(ObjectReader, ReadsTypedFieldsWithDefaults) {
  Json j = Json::parse(R"({"a": 3, "b": "x", "c": true, "d": 2.5})");
  ObjectReader r(j, "cfg");
  EXPECT_EQ(r.get_int("a"), 3);
  EXPECT_EQ(r.get_string("b"), "x");
  EXPECT_TRUE(r.get_bool("c"));
  EXPECT_DOUBLE_EQ(r.get_double("d"), 2.5);
  EXPECT_EQ(r.get_int("missing", 7), 7);
  r.finish();
}

TEST(ObjectReader, UnknownKeyNamesPathAndValidKeys) {
  Json j = Json::parse(R"({"batch": 3, "bacth_size": 4})");
  ObjectReader r(j, "ppo");
  r.get_int("batch");
  try {
    r.finish();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "ppo.bacth_size");
    EXPECT_NE(std::string(e.what()).find("valid keys here are: batch"), std::string::npos) << e.what();
  }
}

TEST(ObjectReader, WrongTypeNamesPath) {
  Json j = Json::parse(R"({"n": "eight", "m": -1, "f": 1.5})");
  ObjectReader r(j, "x");
  try {
    r.get_int("n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "x.n");
  }
  EXPECT_THROW(r.get_positive("m"), Error);
  EXPECT_THROW(r.get_int("f"), Error);
  EXPECT_THROW(r.get_int("absent"), Error);
}

TEST(ObjectReader, RejectsNonObject) { EXPECT_THROW(ObjectReader(Json::array(), "root"), Error); }

}  // namespace
}  // namespace realign
