// Fuzz: random mutations and truncations of valid files, and headers that lie, must either parse into views
// that stay inside the buffer and tile the data section, or throw realign::Error. Never crash.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "tensorfile/safetensors.h"
#include "testing/temp_dir.h"

namespace realign::tensorfile {
namespace {

std::string valid_file(std::mt19937_64& rng) {
  static const DType kTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                                 DType::kI32, DType::kI16, DType::kI8,  DType::kU8,   DType::kBool};
  int n = static_cast<int>(rng() % 5);
  std::vector<std::string> storage;
  std::vector<TensorSource> src;
  storage.reserve(n);
  for (int i = 0; i < n; ++i) {
    TensorSource t;
    t.name = "t" + std::to_string(i);
    t.dtype = kTypes[rng() % 10];
    int rank = static_cast<int>(rng() % 3);
    size_t numel = 1;
    for (int r = 0; r < rank; ++r) {
      t.shape.push_back(static_cast<int64_t>(rng() % 4));
      numel *= t.shape.back();
    }
    t.nbytes = numel * dtype_size(t.dtype);
    storage.emplace_back(t.nbytes, '\0');
    for (auto& c : storage.back()) c = static_cast<char>(rng());
    t.data = storage.back().data();
    src.push_back(t);
  }
  std::map<std::string, std::string> md;
  if (rng() % 2) md["format"] = "pt";
  std::string out = safetensors_header(src, md);
  // Data in layout order: rebuild the order the writer uses by parsing the header we just made.
  std::vector<TensorView> views;
  std::map<std::string, std::string> meta;
  std::string zeros = out;
  size_t total = 0;
  for (const auto& t : src) total += t.nbytes;
  zeros.append(total, '\0');
  parse_safetensors(reinterpret_cast<const uint8_t*>(zeros.data()), zeros.size(), "gen", &views, &meta);
  for (const auto& v : views)
    for (const auto& t : src)
      if (t.name == v.name) out.append(static_cast<const char*>(t.data), t.nbytes);
  return out;
}

// Checks the reader's promises on whatever it accepted.
void check_accepted(const std::vector<uint8_t>& buf, const std::vector<TensorView>& views) {
  uint64_t sum = 0;
  const uint8_t* end = buf.data() + buf.size();
  const uint8_t* cursor = nullptr;
  for (const auto& v : views) {
    ASSERT_EQ(static_cast<uint64_t>(v.numel()) * dtype_size(v.dtype), v.nbytes);
    ASSERT_GE(v.data, buf.data() + 8);
    ASSERT_LE(v.data + v.nbytes, end);
    if (cursor != nullptr) {
      ASSERT_EQ(v.data, cursor);
    }
    cursor = v.data + v.nbytes;
    for (size_t i = 0; i < v.nbytes; ++i) sum += v.data[i];  // touch every byte
  }
  if (cursor != nullptr) {
    ASSERT_EQ(cursor, end);
  }
  (void)sum;
}

void mutate(std::string& s, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    switch (rng() % 7) {
      case 0:
        s[pos] = static_cast<char>(rng());
        break;  // random byte
      case 1:
        s.resize(rng() % (s.size() + 1));
        break;  // truncate
      case 2:
        s.insert(pos, 1, static_cast<char>(rng()));
        break;  // insert
      case 3:
        s.erase(pos, 1 + rng() % 4);
        break;  // delete
      case 4:
        if (pos < 8) s[pos] = static_cast<char>(rng());
        break;   // header length
      case 5: {  // digits: lying numbers
        size_t d = s.find_first_of("0123456789", 8 + rng() % (s.size() > 8 ? s.size() - 8 : 1));
        if (d != std::string::npos) s[d] = static_cast<char>('0' + rng() % 10);
        break;
      }
      case 6: {  // swap a dtype name
        static const char* kNames[] = {"F32", "F16", "I64", "U8", "BOOL", "F64", "XX"};
        size_t d = s.find("\"dtype\":\"");
        if (d != std::string::npos) {
          size_t q = s.find('"', d + 9);
          if (q != std::string::npos) s.replace(d + 9, q - d - 9, kNames[rng() % 7]);
        }
        break;
      }
    }
  }
}

// Headers written from scratch with arbitrary (often lying) claims, data of random length.
std::string lying_file(std::mt19937_64& rng) {
  static const char* kNames[] = {"F32", "F16", "BF16", "I64", "U8", "BOOL", "F64", "I8"};
  std::string h = "{";
  int n = static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    if (i) h += ",";
    auto num = [&]() -> std::string {
      switch (rng() % 6) {
        case 0:
          return std::to_string(rng());  // huge
        case 1:
          return "-" + std::to_string(rng() % 10);
        case 2:
          return "1.5";
        default:
          return std::to_string(rng() % 24);
      }
    };
    h += "\"t" + std::to_string(i) + "\":{\"dtype\":\"" + kNames[rng() % 8] + "\",\"shape\":[";
    int rank = static_cast<int>(rng() % 3);
    for (int r = 0; r < rank; ++r) h += (r ? "," : "") + num();
    h += "],\"data_offsets\":[" + num() + "," + num() + "]}";
  }
  h += "}";
  std::string out(8, '\0');
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  out += h;
  out.append(rng() % 40, 'x');
  return out;
}

TEST(SafetensorsFuzz, MutatedAndLyingFilesNeverCrash) {
  std::mt19937_64 rng(20261123);
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = valid_file(rng);
    if (iter % 4 == 3)
      s = lying_file(rng);
    else if (iter % 4 != 0)
      mutate(s, rng);
    // An exactly sized heap buffer, so a reader overrun would leave it (and trip ASan builds).
    std::vector<uint8_t> buf(s.begin(), s.end());
    std::vector<TensorView> views;
    std::map<std::string, std::string> meta;
    try {
      parse_safetensors(buf.data(), buf.size(), "fuzz.safetensors", &views, &meta);
      ++accepted;
      check_accepted(buf, views);
    } catch (const Error& e) {
      ++rejected;
      ASSERT_EQ(std::string(e.what()).rfind("fuzz.safetensors: ", 0), 0u) << e.what();
      ASSERT_NE(iter % 4, 0) << "a valid file was rejected: " << e.what();
    }
  }
  // Both outcomes must actually occur, or the fuzzer is not exercising the reader.
  EXPECT_GT(accepted, 5000);
  EXPECT_GT(rejected, 5000);
}

TEST(SafetensorsFuzz, MutatedFilesOnDiskNeverCrash) {
  testing::TempDir dir;
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 100; ++iter) {
    std::string s = valid_file(rng);
    mutate(s, rng);
    testing::write_file(dir.file("f.safetensors"), s);
    try {
      SafetensorsFile f(dir.file("f.safetensors"));
      std::vector<uint8_t> buf(s.begin(), s.end());
      for (const auto& v : f.tensors())
        ASSERT_EQ(static_cast<uint64_t>(v.numel()) * dtype_size(v.dtype), v.nbytes);
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("f.safetensors: "), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace realign::tensorfile
