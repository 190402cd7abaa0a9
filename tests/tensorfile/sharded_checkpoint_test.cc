#include "tensorfile/sharded_checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign::tensorfile {
namespace {

using testing::TempDir;

TEST(AssignShards, GreedyWithOversizedTensorsAlone) {
  EXPECT_EQ(assign_shards({4, 4, 4, 4}, 8), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(assign_shards({4, 20, 4, 3}, 8), (std::vector<int>{0, 1, 2, 2}));
  EXPECT_EQ(assign_shards({}, 8), (std::vector<int>{}));
  EXPECT_EQ(assign_shards({1, 1, 1}, 100), (std::vector<int>{0, 0, 0}));
}

struct Model {
  std::vector<std::vector<float>> data;
  std::vector<TensorSource> tensors;
};

Model make_model(int n) {
  Model m;
  m.data.resize(n);
  for (int i = 0; i < n; ++i) {
    m.data[i].resize(10 + i);
    for (size_t k = 0; k < m.data[i].size(); ++k) m.data[i][k] = static_cast<float>(i * 100 + k);
    m.tensors.push_back({"layers." + std::to_string(i) + ".w",
                         DType::kF32,
                         {static_cast<int64_t>(10 + i)},
                         m.data[i].data(),
                         m.data[i].size() * 4});
  }
  return m;
}

TEST(ShardedCheckpoint, WritesShardsAndIndexAndReadsThemBack) {
  TempDir dir;
  Model m = make_model(6);
  auto files = write_sharded_safetensors(dir.path(), m.tensors, 100);
  // Tensors of 40, 44, 48, 52, 56, 60 bytes in 100-byte shards: {40,44} {48,52} {56} {60}.
  ASSERT_EQ(files.size(), 5u);  // 4 shards + index
  EXPECT_EQ(files.back(), dir.file("model.safetensors.index.json"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("model-00001-of-00004.safetensors")));
  ShardIndex index = read_shard_index(dir.file("model.safetensors.index.json"));
  EXPECT_EQ(index.weight_map.at("layers.3.w"), "model-00002-of-00004.safetensors");
  EXPECT_EQ(index.weight_map.at("layers.5.w"), "model-00004-of-00004.safetensors");
  EXPECT_EQ(index.total_size, 40 + 44 + 48 + 52 + 56 + 60);
  ShardedCheckpoint ckpt(dir.path());
  EXPECT_EQ(ckpt.files().size(), 4u);
  ASSERT_EQ(ckpt.tensors().size(), 6u);
  for (const auto& t : m.tensors) {
    const TensorView& v = ckpt.at(t.name);
    ASSERT_EQ(v.nbytes, t.nbytes);
    EXPECT_EQ(std::memcmp(v.data, t.data, t.nbytes), 0);
  }
  EXPECT_THROW(ckpt.at("missing"), Error);
}

TEST(ShardedCheckpoint, SingleShardWritesModelSafetensors) {
  TempDir dir;
  Model m = make_model(3);
  auto files = write_sharded_safetensors(dir.path(), m.tensors, 1 << 20);
  EXPECT_EQ(files, std::vector<std::string>{dir.file("model.safetensors")});
  ShardedCheckpoint ckpt(dir.path());
  EXPECT_EQ(ckpt.tensors().size(), 3u);
  ShardedCheckpoint single(dir.file("model.safetensors"));
  EXPECT_EQ(single.tensors().size(), 3u);
}

TEST(ShardedCheckpoint, IndexRoundTripsAndBadIndexesAreNamed) {
  TempDir dir;
  ShardIndex idx;
  idx.total_size = 123;
  idx.weight_map = {{"a", "s1.safetensors"}, {"b", "s2.safetensors"}};
  write_shard_index(dir.file("i.json"), idx);
  EXPECT_EQ(read_shard_index(dir.file("i.json")), idx);

  auto expect_error = [&](const std::string& json, const std::string& what) {
    testing::write_file(dir.file("model.safetensors.index.json"), json);
    try {
      ShardedCheckpoint c(dir.path());
      FAIL() << "accepted " << json;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("{", "not valid JSON");
  expect_error(R"({"metadata":{}})", "lacks a \"weight_map\"");
  expect_error(R"({"weight_map":{"a":"../x.safetensors"}})", "not a file name in the same directory");
  expect_error(R"({"weight_map":{"a":"gone.safetensors"}})", "gone.safetensors: cannot open");
  Model m = make_model(1);
  write_safetensors(dir.file("s.safetensors"), m.tensors);
  expect_error(R"({"weight_map":{"other":"s.safetensors"}})",
               "weight_map['other']: shard 's.safetensors' holds no such tensor");
  Model two = make_model(2);
  two.tensors[1].name = "extra";
  write_safetensors(dir.file("t.safetensors"), two.tensors);  // holds layers.0.w too
  expect_error(R"({"weight_map":{"layers.0.w":"s.safetensors","extra":"t.safetensors"}})",
               "also appears in another shard");
}

TEST(ShardedCheckpoint, EmptyDirectoryIsAnError) {
  TempDir dir;
  EXPECT_THROW(ShardedCheckpoint c(dir.path()), Error);
}

}  // namespace
}  // namespace realign::tensorfile
