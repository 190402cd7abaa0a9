#include "tensorfile/tensor_file.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign::tensorfile {
namespace {

using testing::TempDir;

TensorMap sample() {
  TensorMap m;
  m["a"] = at::arange(12, at::kFloat).reshape({3, 4}) * 0.5 - 1;
  m["b"] = (at::arange(5, at::kFloat) / 3).to(at::kBFloat16);
  m["c"] = at::tensor(std::vector<int64_t>{-7, int64_t(1) << 40}, at::kLong);
  return m;
}

TEST(TensorFile, SavesInTheChosenFloatTypeAndLoadsBack) {
  TempDir dir;
  TensorMap m = sample();
  m["t"] = at::arange(6, at::kDouble).reshape({2, 3}).t();  // non-contiguous, f64
  m["mask"] = at::tensor(std::vector<int64_t>{1, 0, 1}).to(at::kBool);
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    save_tensors(dir.file("m.safetensors"), m, dt, {{"format", "pt"}});
    TensorMap back = load_tensors(dir.file("m.safetensors"));
    ASSERT_EQ(back.size(), m.size());
    for (const auto& [name, t] : m) {
      const at::Tensor& b = back.at(name);
      at::ScalarType want = at::isFloatingType(t.scalar_type()) ? to_scalar_type(dt) : t.scalar_type();
      EXPECT_EQ(b.scalar_type(), want) << name;
      EXPECT_EQ(b.sizes(), t.sizes()) << name;
      EXPECT_TRUE(at::equal(b, t.to(want))) << name;
    }
    // Conversion on load applies to floating tensors only.
    TensorMap f32 = load_tensors(dir.file("m.safetensors"), at::kFloat);
    EXPECT_EQ(f32.at("b").scalar_type(), at::kFloat);
    EXPECT_EQ(f32.at("c").scalar_type(), at::kLong);
  }
  EXPECT_THROW(save_tensors(dir.file("x.safetensors"), m, DType::kI32), Error);
  TensorMap bad;
  bad["z"] = at::zeros({2}, at::kComplexFloat);
  EXPECT_THROW(save_tensors(dir.file("x.safetensors"), bad, DType::kF32), Error);
}

TEST(TensorFile, ShardedDirectoryRoundTrips) {
  TempDir dir;
  TensorMap m;
  for (int i = 0; i < 5; ++i) m["layers." + std::to_string(i) + ".w"] = at::randn({8, 8});
  save_tensors_sharded(dir.path(), m, DType::kF32, 600);  // 256 bytes each -> 3 shards
  EXPECT_TRUE(std::filesystem::exists(dir.file("model.safetensors.index.json")));
  TensorMap back = load_tensors(dir.path());
  ASSERT_EQ(back.size(), 5u);
  for (const auto& [name, t] : m) EXPECT_TRUE(at::equal(back.at(name), t)) << name;
}

// Cross-check with an independent Python implementation of the format (struct + json + torch): Python
// checks the file we wrote and writes its own, which we read. One Python start keeps the test short.
TEST(TensorFile, AgreesWithAnIndependentPythonReaderAndWriter) {
  TempDir dir;
  TensorMap want = sample();
  std::vector<at::Tensor> keep;
  std::vector<TensorSource> src;
  for (const auto& [name, t] : want) {  // each in its own type: a F32, b BF16, c I64
    keep.push_back(t.contiguous());
    src.push_back({name, dtype_of(t.scalar_type(), name), t.sizes().vec(), keep.back().data_ptr(),
                   static_cast<size_t>(t.numel() * t.element_size())});
  }
  write_safetensors(dir.file("ours.safetensors"), src);
  const std::string script = std::string(REALIGN_SOURCE_DIR) + "/tests/tensorfile/py_safetensors.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.file("ours.safetensors") + " " +
                         dir.file("py.safetensors"))
                            .c_str()),
            0);
  TensorMap from_py = load_tensors(dir.file("py.safetensors"));
  ASSERT_EQ(from_py.size(), want.size());
  for (const auto& [name, t] : want) {
    EXPECT_EQ(from_py.at(name).scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(at::equal(from_py.at(name), t)) << name;
  }
}

}  // namespace
}  // namespace realign::tensorfile
