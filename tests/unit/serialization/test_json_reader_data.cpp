// Initializer data in graph documents: number lists per dtype (ranges and
// rounding), base64 bytes (NaN and infinities bit-exact) and size checks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "serialization/base64.hpp"
#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using namespace json_reader_test;

Tensor initializer(const std::string& dtype, const std::string& shape, const std::string& data) {
  const GraphDef def = parse_graph_def(with_initializer(dtype, shape, data));
  return def.initializers.at(0).value;
}

// An initializer "w" of `dtype`, `shape` and `data` (JSON text) and the
// message of the reader's InvalidGraph for it.
struct Refusal {
  std::string dtype, shape, data, message;
};

void expect_refused(const std::vector<Refusal>& refusals) {
  for (const Refusal& r : refusals)
    EXPECT_EQ(error_of(with_initializer(r.dtype, r.shape, r.data)), r.message) << r.dtype << " " << r.shape;
}

template <typename T> std::string base64_of(std::initializer_list<T> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return R"({"base64": ")" + encode_base64(bytes) + "\"}";
}

std::uint16_t bits16(half v) { return std::bit_cast<std::uint16_t>(v); }
std::uint16_t bits16(bfloat16 v) { return std::bit_cast<std::uint16_t>(v); }

// ----------------------------------------------------------- number lists

TEST(JsonReaderData, Float32NumbersWithNineDigitsReadBackBitExact) {
  const float values[] = {0.1f,
                          1.0f / 3.0f,
                          -2.5f,
                          -0.0f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          std::nextafter(1.0f, 2.0f),
                          16777215.0f,
                          3.14159274f,
                          1e-40f};
  std::string list = "[";
  for (float v : values) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    // JSON "-0" is the integer zero, which has no sign: a float needs "-0.0".
    const std::string text = std::string(buf) == "-0" ? "-0.0" : buf;
    list += (list.size() > 1 ? ", " : "") + text;
  }
  list += "]";
  const Tensor t = initializer("float32", "[12]", list);
  for (std::size_t i = 0; i < std::size(values); ++i)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(t.values<float>()[i]), std::bit_cast<std::uint32_t>(values[i]))
        << i << " from " << list;
}

TEST(JsonReaderData, Float32RoundsToNearestEven) {
  // 16777217 = 2^24 + 1 lies between two floats: ties to even gives 2^24.
  const Tensor t = initializer("float32", "[4]", "[16777217, 16777219, 1e-46, 3.4028235677973362e38]");
  EXPECT_EQ(t.values<float>()[0], 16777216.0f);
  EXPECT_EQ(t.values<float>()[1], 16777220.0f);
  EXPECT_EQ(t.values<float>()[2], 0.0f);  // below half the smallest subnormal
  EXPECT_EQ(t.values<float>()[3], std::numeric_limits<float>::max());
  // From half-way between FLT_MAX and 2^128 on, rounding reaches infinity: refused.
  EXPECT_EQ(error_of(with_initializer("float32", "[1]", "[3.4028235677973366e38]")),
            "initializers[0] (w).data[0]: expected a number within the float32 range, got 3.4028235677973366e+38");
  EXPECT_EQ(error_of(with_initializer("float32", "[2]", "[1, -1e39]")),
            "initializers[0] (w).data[1]: expected a number within the float32 range, got -1e+39");
}

TEST(JsonReaderData, Float16AndBfloat16RoundOnceFromTheNumber) {
  // 1 + 2^-11 + 2^-30 is just above the float16 midpoint between 1 and 1 + 2^-10;
  // rounding to float32 first would land on the midpoint and tie down to 1.
  const Tensor h = initializer("float16", "[5]",
                               "[1.000488282740116119384765625, 1.00048828125, 65519, -65504, 5.96e-8]");
  EXPECT_EQ(bits16(h.values<half>()[0]), 0x3c01);
  EXPECT_EQ(bits16(h.values<half>()[1]), 0x3c00);  // exactly the midpoint: to even
  EXPECT_EQ(bits16(h.values<half>()[2]), 0x7bff);  // 65504
  EXPECT_EQ(bits16(h.values<half>()[3]), 0xfbff);
  EXPECT_EQ(bits16(h.values<half>()[4]), 0x0001);  // the smallest subnormal
  EXPECT_EQ(error_of(with_initializer("float16", "[1]", "[65520]")),
            "initializers[0] (w).data[0]: expected a number within the float16 range, got 65520");

  // bfloat16: 1 + 2^-8 + 2^-30 rounds up to 1 + 2^-7.
  const Tensor b = initializer("bfloat16", "[4]",
                               "[1.003906250931322574615478515625, 1.00390625, 4629700416936869889, "
                               "4629700416936869888]");
  EXPECT_EQ(bits16(b.values<bfloat16>()[0]), 0x3f81);
  EXPECT_EQ(bits16(b.values<bfloat16>()[1]), 0x3f80);
  // 2^62 + 2^54 + 1 is above the midpoint 2^62 + 2^54 (which ties to 2^62).
  EXPECT_EQ(bits16(b.values<bfloat16>()[2]), 0x5e81);
  EXPECT_EQ(bits16(b.values<bfloat16>()[3]), 0x5e80);
  EXPECT_EQ(error_of(with_initializer("bfloat16", "[1]", "[3.4e38]")),
            "initializers[0] (w).data[0]: expected a number within the bfloat16 range, got 3.4e+38");
}

TEST(JsonReaderData, Float64) {
  const Tensor t = initializer("float64", "[2, 2]", "[0.1, -1e308, 9007199254740993, 5e-324]");
  EXPECT_EQ(t.values<double>()[0], 0.1);
  EXPECT_EQ(t.values<double>()[1], -1e308);
  EXPECT_EQ(t.values<double>()[2], 9007199254740992.0);  // 2^53 + 1 ties to even
  EXPECT_EQ(t.values<double>()[3], std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(error_of(with_initializer("float64", "[1]", "[\"0.5\"]")),
            "initializers[0] (w).data[0]: expected a number within the float64 range, got '0.5'");
}

TEST(JsonReaderData, IntegersMustBeJsonIntegersInRange) {
  const Tensor i8 = initializer("int8", "[2]", "[-128, 127]");
  EXPECT_EQ(i8.values<std::int8_t>()[0], -128);
  EXPECT_EQ(i8.values<std::int8_t>()[1], 127);
  const Tensor u8 = initializer("uint8", "[2]", "[0, 255]");
  EXPECT_EQ(u8.values<std::uint8_t>()[1], 255);
  const Tensor i64 = initializer("int64", "[2]", "[-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(i64.values<std::int64_t>()[0], std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(i64.values<std::int64_t>()[1], std::numeric_limits<std::int64_t>::max());

  expect_refused({
      {"int8", "[2]", "[1, 128]",
       "initializers[0] (w).data[1]: expected an integer in [-128, 127], got 128"},
      {"uint8", "[1]", "[-1]",
       "initializers[0] (w).data[0]: expected an integer in [0, 255], got -1"},
      {"int8", "[1]", "[1.0]",
       "initializers[0] (w).data[0]: expected an integer in [-128, 127], got 1.0"},
      {"uint8", "[1]", "[true]",
       "initializers[0] (w).data[0]: expected an integer in [0, 255], got true"},
      {"int64", "[1]", "[9223372036854775808]",
       "initializers[0] (w).data[0]: expected an integer in [-9223372036854775808, "
       "9223372036854775807], got 9223372036854775808"},
  });
}

TEST(JsonReaderData, ValueCountMustMatchTheShape) {
  expect_refused({
      {"float32", "[2, 2]", "[1, 2, 3]",
       "initializers[0] (w).data: expected 4 values for shape [2, 2], got 3"},
      {"float32", "[]", "[]",
       "initializers[0] (w).data: expected 1 values for shape [], got 0"},
      // A huge shape with little data is refused before anything is allocated.
      {"float64", "[1000000000000]", "[1]",
       "initializers[0] (w).data: expected 1000000000000 values for shape [1000000000000], got 1"},
      {"float32", "[1]", "[[1]]",
       "initializers[0] (w).data[0]: expected a number within the float32 range, got [1]"},
  });
  const Tensor scalar = initializer("float32", "[]", "[7]");
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.values<float>()[0], 7.0f);
}

TEST(JsonReaderData, InitializerStructure) {
  EXPECT_EQ(error_of(with_initializer("float32", "[null, 2]", "[]")),
            "initializers[0] (w).shape: expected a list of non-negative integers, got [null, 2]");
  EXPECT_EQ(error_of(with_initializer("complex64", "[1]", "[1]")),
            "initializers[0] (w).dtype: expected one of float32, float64, float16, bfloat16, int8, uint8, "
            "int64, got 'complex64'");
  EXPECT_EQ(error_of(with_initializer("float32", "[1]", R"("AAAAAA==")")),
            R"(initializers[0] (w).data: expected a list of numbers or {"base64": "..."}, got 'AAAAAA==')");
  EXPECT_EQ(error_of(with_initializer("float32", "[1]", "[1]", R"(, "trainable": "yes")")),
            "initializers[0] (w).trainable: expected true or false, got 'yes'");
  EXPECT_EQ(error_of(with_initializer("float32", "[1]", "[1]", R"(, "frozen": true)")),
            "initializers[0] (w).frozen: unknown key 'frozen' (known: name, dtype, shape, data, init, trainable)");
  EXPECT_EQ(error_of(doc(kInputs, R"([{"name": "w", "dtype": "float32", "shape": [1]}])")),
            "initializers[0] (w): missing required key 'data' (or 'init', an initialisation rule)");
  EXPECT_EQ(error_of<ShapeMismatch>(with_initializer("int64", "[2305843009213693952]", "[]")),
            "initializers[0] (w).shape: byte count of [2305843009213693952] int64 values overflows int64");
  EXPECT_EQ(error_of<ShapeMismatch>(with_initializer("int8", "[4294967296, 4294967296]", "[]")),
            "initializers[0] (w).shape: element count of [4294967296, 4294967296] overflows int64");
  const GraphDef def = parse_graph_def(with_initializer("float32", "[1]", "[1]", R"(, "trainable": true)"));
  EXPECT_TRUE(def.initializers[0].trainable);
}

// ------------------------------------------------------------------ base64

TEST(JsonReaderData, Base64KeepsNanPayloadsAndInfinitiesBitExact) {
  const std::uint32_t f32[] = {0x7fc00001u, 0xffc12345u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000001u};
  std::vector<std::byte> bytes(sizeof f32);
  std::memcpy(bytes.data(), f32, sizeof f32);
  const Tensor t = initializer("float32", "[2, 3]", R"({"base64": ")" + encode_base64(bytes) + "\"}");
  ASSERT_EQ(t.nbytes(), sizeof f32);
  EXPECT_EQ(std::memcmp(t.raw(), f32, sizeof f32), 0);

  const Tensor d = initializer("float64", "[2]", base64_of<std::uint64_t>({0x7ff8000000000abcULL, 0xfff0000000000000ULL}));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(d.values<double>()[0]), 0x7ff8000000000abcULL);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(d.values<double>()[1]), 0xfff0000000000000ULL);

  const Tensor h = initializer("float16", "[3]", base64_of<std::uint16_t>({0x7e01, 0xfc00, 0x3c00}));
  EXPECT_EQ(bits16(h.values<half>()[0]), 0x7e01);
  EXPECT_EQ(bits16(h.values<half>()[1]), 0xfc00);
  const Tensor b = initializer("bfloat16", "[2]", base64_of<std::uint16_t>({0x7fc1, 0x3f80}));
  EXPECT_EQ(bits16(b.values<bfloat16>()[0]), 0x7fc1);
  EXPECT_EQ(static_cast<float>(b.values<bfloat16>()[1]), 1.0f);

  const Tensor i = initializer("int64", "[2]", base64_of<std::int64_t>({-2, 1LL << 60}));
  EXPECT_EQ(i.values<std::int64_t>()[0], -2);
  EXPECT_EQ(i.values<std::int64_t>()[1], 1LL << 60);
  // Little-endian on the wire: AQI= is the bytes 01 02.
  const Tensor u = initializer("uint8", "[2]", R"({"base64": "AQI="})");
  EXPECT_EQ(u.values<std::uint8_t>()[0], 1);
  EXPECT_EQ(u.values<std::uint8_t>()[1], 2);
  EXPECT_EQ(initializer("float32", "[0, 3]", R"({"base64": ""})").numel(), 0);
}

TEST(JsonReaderData, Base64LengthAndAlphabetAreChecked) {
  expect_refused({
      {"float32", "[2, 2]", R"({"base64": "AAAAAAAAAAAAAAAAAAAA"})",
       "initializers[0] (w).data.base64: expected 24 base64 characters (16 bytes: 4 float32 values "
       "for shape [2, 2]), got 20"},
      {"uint8", "[3]", R"({"base64": "AA*A"})",
       "initializers[0] (w).data.base64: invalid base64 at character 2: character code 42 is not in "
       "the base64 alphabet"},
      // Right length, but the padding makes it 4 bytes short of 6 (int16 values do not exist: uint8).
      {"uint8", "[3]", R"({"base64": "AA=="})",
       "initializers[0] (w).data.base64: decodes to 1 bytes, expected 3 bytes: 3 uint8 values for shape [3]"},
      {"uint8", "[1]", R"({"base64": "AQ==", "endian": "little"})",
       "initializers[0] (w).data.endian: unknown key 'endian' (known: base64)"},
      {"uint8", "[1]", R"({"base64": [1]})",
       "initializers[0] (w).data.base64: expected a base64 string, got [1]"},
      {"uint8", "[1]", R"({})",
       "initializers[0] (w).data: missing required key 'base64'"},
      // A huge shape is compared by length, never decoded or allocated.
      {"float64", "[1000000000000]", R"({"base64": "AAAA"})",
       "initializers[0] (w).data.base64: expected 10666666666668 base64 characters (8000000000000 "
       "bytes: 1000000000000 float64 values for shape [1000000000000]), got 4"},
  });
}

}  // namespace
}  // namespace nodeflow
