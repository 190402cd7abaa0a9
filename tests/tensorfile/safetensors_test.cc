#include "tensorfile/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign::tensorfile {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

// Builds a raw file from a header string and data bytes, the way a foreign writer might.
std::string raw_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string error_of(const std::string& path) {
  try {
    SafetensorsFile f(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Safetensors, WriteThenReadRoundTrips) {
  TempDir dir;
  std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::vector<uint16_t> b = {0x3f80, 0xc000};  // bf16 bit patterns
  std::vector<int64_t> c = {-1, 1LL << 40};
  std::vector<uint8_t> d = {1, 0, 1};
  std::vector<TensorSource> src = {
      {"w.a", DType::kF32, {2, 3}, a.data(), a.size() * 4},
      {"w.b", DType::kBF16, {2}, b.data(), b.size() * 2},
      {"c", DType::kI64, {2}, c.data(), c.size() * 8},
      {"mask", DType::kBool, {3}, d.data(), d.size()},
      {"empty", DType::kF16, {0, 4}, nullptr, 0},
      {"scalar", DType::kF32, {}, a.data(), 4},
  };
  write_safetensors(dir.file("m.safetensors"), src, {{"format", "pt"}});
  SafetensorsFile f(dir.file("m.safetensors"));
  ASSERT_EQ(f.tensors().size(), src.size());
  EXPECT_EQ(f.metadata().at("format"), "pt");
  for (const auto& s : src) {
    const TensorView& v = f.at(s.name);
    EXPECT_EQ(v.dtype, s.dtype) << s.name;
    EXPECT_EQ(v.shape, s.shape) << s.name;
    ASSERT_EQ(v.nbytes, s.nbytes) << s.name;
    if (s.nbytes) {
      EXPECT_EQ(std::memcmp(v.data, s.data, s.nbytes), 0) << s.name;
    }
    // HF layout keeps every tensor aligned to its element size (header is padded to 8 bytes).
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype), 0u) << s.name;
  }
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_THROW(f.at("nope"), Error);
  const std::string bytes = read_file(dir.file("m.safetensors"));
  uint64_t hlen = 0;
  std::memcpy(&hlen, bytes.data(), 8);
  EXPECT_EQ(hlen % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
}

TEST(Safetensors, ReadsAForeignFileWithoutPaddingOrMetadata) {
  TempDir dir;
  std::string data(12, '\0');
  float vals[3] = {1, 2, 3};
  std::memcpy(data.data(), vals, 12);
  write_file(dir.file("x.safetensors"),
             raw_file(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", data));
  SafetensorsFile f(dir.file("x.safetensors"));
  ASSERT_EQ(f.tensors().size(), 1u);
  float got[3];
  std::memcpy(got, f.at("x").data, 12);
  EXPECT_EQ(got[2], 3.0f);
}

TEST(Safetensors, ErrorsNameFileAndProblem) {
  TempDir dir;
  auto check = [&](const std::string& contents, const std::string& expect) {
    write_file(dir.file("model.safetensors"), contents);
    std::string err = error_of(dir.file("model.safetensors"));
    EXPECT_NE(err.find("model.safetensors: "), std::string::npos) << err;
    EXPECT_NE(err.find(expect), std::string::npos) << "expected '" << expect << "' in: " << err;
  };
  std::string d8(8, '\0');
  check("abc", "too short");
  check(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "exceeds the 100 MB limit");
  check(std::string("\x40\0\0\0\0\0\0\0", 8) + "{}", "runs past the end");
  check(raw_file("[1,2]", ""), "does not start with a JSON object");
  check(raw_file("{\"x\":", ""), "not valid JSON");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", d8),
        "tensor 'x' claims bytes [0,16) beyond file size");
  check(raw_file(R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", d8), "unsupported dtype 'C64'");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", d8), "needs 12");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})", d8), "non-negative");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", d8), "end before they begin");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", d8),
        "[4,8) at the end of the data section belong to no tensor");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", d8),
        "[0,4) of the data section");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                 d8),
        "overlap");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", d8),
        "unknown field 'extra'");
  check(raw_file(R"({"x":{"dtype":"F32","shape":[2]}})", d8), "lacks one of");
  check(raw_file(R"({"__metadata__":{"a":1}})", ""), "__metadata__['a'] must be a string");
  check(
      raw_file(R"({"x":{"dtype":"U8","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", d8),
      "needs more bytes than");
  EXPECT_NE(error_of(dir.file("missing.safetensors")).find("cannot open"), std::string::npos);
}

TEST(Safetensors, WriterRejectsBadTensorsAndLeavesNoFile) {
  TempDir dir;
  float v[2] = {1, 2};
  EXPECT_THROW(write_safetensors(dir.file("a.safetensors"), {{"x", DType::kF32, {3}, v, 8}}), Error);
  EXPECT_THROW(write_safetensors(dir.file("a.safetensors"),
                                 {{"x", DType::kF32, {2}, v, 8}, {"x", DType::kF32, {2}, v, 8}}),
               Error);
  EXPECT_THROW(write_safetensors(dir.file("a.safetensors"), {{"__metadata__", DType::kF32, {2}, v, 8}}),
               Error);
  EXPECT_NE(error_of(dir.file("a.safetensors")).find("cannot open"), std::string::npos);
}

TEST(Safetensors, AtomicWriteReplacesExistingFile) {
  TempDir dir;
  float v[2] = {1, 2}, w[1] = {5};
  write_safetensors(dir.file("a.safetensors"), {{"x", DType::kF32, {2}, v, 8}});
  SafetensorsFile old_file(dir.file("a.safetensors"));  // a reader holding the old map keeps seeing it
  write_safetensors(dir.file("a.safetensors"), {{"y", DType::kF32, {1}, w, 4}});
  SafetensorsFile new_file(dir.file("a.safetensors"));
  EXPECT_NE(old_file.find("x"), nullptr);
  EXPECT_EQ(new_file.find("x"), nullptr);
  ASSERT_NE(new_file.find("y"), nullptr);
  float got;
  std::memcpy(&got, old_file.at("x").data + 4, 4);
  EXPECT_EQ(got, 2.0f);
  // No temp files left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += (void(e), 1);
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace realign::tensorfile
