// The graph-document writer: layout, key order, numbers that read back to the
// same bits, base64 above the inline limit and for non-finite values, and what
// it refuses.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>
#include <random>

#include "serialization/json_reader.hpp"
#include "serialization/json_text.hpp"
#include "serialization/json_writer.hpp"
#include "support/error_of.hpp"
#include "support/graph_compare.hpp"

namespace nodeflow {
namespace {

using Ints = std::vector<std::int64_t>;

GraphDef tiny_graph() {
  GraphDef d;
  d.name = "tiny";
  d.inputs.push_back({"x", {DType::Float32, {kDynamicDim, 1, 4, 4}}});
  d.initializers.push_back({"w", Tensor::from<float>({2}, {0.1f, -0.0f}), true});
  d.initializers.push_back(
      {"k", Tensor::from<std::int64_t>({2}, {std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max()})});
  NodeDef p;
  p.op_type = "MaxPool";
  p.name = "p";
  p.inputs = {"x"};
  p.specified_outputs_name = std::vector<std::string>{"y"};
  p.attributes = {{"strides", Ints{1, 1}}, {"kernel_shape", Ints{2, 2}}};
  p.training = false;
  p.lda_coeff = 0.5;
  NodeDef a;
  a.op_type = "AveragePool";
  a.name = "a";
  a.inputs = {"y"};
  a.attributes = {{"kernel_shape", Ints{1, 1}}, {"auto_pad", std::string("VALID")}};
  d.nodes = {p, a};
  d.outputs = {"a"};
  return d;
}

TEST(JsonWriter, WritesTheDocumentInItsFixedLayout) {
  const std::string expected = R"({
  "format": "nodeflow.graph",
  "version": 1,
  "name": "tiny",
  "inputs": [
    {"name": "x", "dtype": "float32", "shape": [null, 1, 4, 4]}
  ],
  "outputs": ["a"],
  "initializers": [
    {"name": "w", "dtype": "float32", "shape": [2], "trainable": true, "data": [0.1, -0.0]},
    {"name": "k", "dtype": "int64", "shape": [2], "trainable": false, "data": [-9223372036854775808, 9223372036854775807]}
  ],
  "nodes": [
    {"op_type": "MaxPool", "name": "p", "inputs": ["x"], "specified_outputs_name": ["y"], "attributes": {"kernel_shape": [2, 2], "strides": [1, 1]}, "training": false, "lda_coeff": 0.5},
    {"op_type": "AveragePool", "name": "a", "inputs": ["y"], "attributes": {"auto_pad": "VALID", "kernel_shape": [1, 1]}}
  ]
}
)";
  EXPECT_EQ(write_graph_json(tiny_graph()), expected);
}

TEST(JsonWriter, WritesEmptyListsOnOneLine) {
  EXPECT_EQ(write_graph_json(GraphDef{}),
            "{\n  \"format\": \"nodeflow.graph\",\n  \"version\": 1,\n  \"name\": \"\",\n"
            "  \"inputs\": [],\n  \"outputs\": [],\n  \"initializers\": [],\n  \"nodes\": []\n}\n");
}

TEST(JsonWriter, DocumentReadsBackToTheSameDescriptionAndGraph) {
  const GraphDef d = tiny_graph();
  const std::string text = write_graph_json(d);
  EXPECT_TRUE(testing::same_graph_def(parse_graph_def(text), d));
  const Graph g = load_graph(text);
  EXPECT_EQ(g.info("a").shape, (Shape{kDynamicDim, 1, 3, 3}));
  EXPECT_EQ(write_graph_json(g.def()), text);
}

std::string float_text(auto v) {
  std::string out;
  json_text::append_float(out, v);
  return out;
}

TEST(JsonWriter, FloatsUseTheFewestDigitsAndAlwaysLookLikeFloats) {
  EXPECT_EQ(float_text(0.1f), "0.1");
  EXPECT_EQ(float_text(1.0f), "1.0");
  EXPECT_EQ(float_text(-0.0f), "-0.0");
  EXPECT_EQ(float_text(16777216.0f), "16777216.0");
  EXPECT_EQ(float_text(std::numeric_limits<float>::denorm_min()), "1e-45");
  EXPECT_EQ(float_text(std::numeric_limits<float>::max()), "3.4028235e+38");
  EXPECT_EQ(float_text(0.1), "0.1");
  EXPECT_EQ(float_text(-0.0), "-0.0");
  EXPECT_EQ(float_text(1e300), "1e+300");
  EXPECT_EQ(float_text(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(float_text(static_cast<double>(0.1f)), "0.10000000149011612");
  // float16 0.1 is 0.0999755859375: "0.1" is the shortest text that reads back to it.
  EXPECT_EQ(float_text(half(0.1f)), "0.1");
  EXPECT_EQ(float_text(half(65504.0f)), "6.55e+04");
  EXPECT_EQ(float_text(half(-0.0f)), "-0.0");
  EXPECT_EQ(float_text(bfloat16(3.0f)), "3.0");
  EXPECT_EQ(float_text(bfloat16(0.1f)), "0.1");
}

TEST(JsonWriter, EscapesStringsAndRefusesInvalidUtf8) {
  std::string out;
  EXPECT_TRUE(json_text::append_string(out, "a\"b\\c\n\t\x01\x7f \xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001\x7f \xc3\xa9 \xf0\x9f\x98\x80\"");
  for (const char* bad :
       {"\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\x80"}) {
    std::string rejected = "unchanged";
    EXPECT_FALSE(json_text::append_string(rejected, bad)) << bad;
    EXPECT_EQ(rejected, "unchanged");
  }
}

TEST(JsonWriter, NamesWithAnyValidTextRoundTrip) {
  GraphDef d;
  // C1 controls (U+0085, U+009B) and U+2028 are not control characters of
  // docs/graph-format.md, "Names".
  d.name = "quote \" backslash \\ slash / unicode \xe2\x88\x91 \xc2\x85\xc2\x9b \xe2\x80\xa8";
  d.inputs.push_back({"in \"1\"\\", {DType::UInt8, {3}}});
  d.outputs = {"in \"1\"\\"};
  const std::string text = write_graph_json(d);
  EXPECT_TRUE(testing::same_graph_def(parse_graph_def(text), d));
}

TEST(JsonWriter, EscapesControlCharactersTheReaderThenRefuses) {
  GraphDef d;
  d.name = "newline \n tab \t unit separator \x1f";
  const std::string text = write_graph_json(d);
  EXPECT_NE(text.find(R"("newline \n tab \t unit separator \u001f")"), std::string::npos) << text;
  EXPECT_THROW(parse_graph_def(text), InvalidGraph);
}

TEST(JsonWriter, RefusesWhatJsonCannotCarryNamingThePath) {
  const auto error_of = [](const GraphDef& d) {
    return testing::error_of<Error>([&] { write_graph_json(d); });
  };
  GraphDef d = tiny_graph();
  d.nodes[1].name = "bad\xff";
  EXPECT_EQ(error_of(d), "nodes[1].name: expected UTF-8 text (JSON cannot carry other bytes)");

  d = tiny_graph();
  d.nodes[0].lda_coeff = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(d), "nodes[0] (p).lda_coeff: expected a finite number");

  d = tiny_graph();
  d.nodes[0].op_type = "LpPool";
  d.nodes[0].attributes["ratios"] = std::vector<double>{1.0, std::nan("")};
  EXPECT_EQ(
      error_of(d),
      "nodes[0] (p).attributes.ratios[1]: expected a finite number (JSON has no NaN or infinity)");

  d = tiny_graph();
  d.initializers[1].value = Tensor();
  EXPECT_EQ(error_of(d), "initializers[1] (k).data: initializer has no value");
  EXPECT_THROW(write_graph_json(d), InvalidGraph);
}

Tensor one_initializer_round_trip(const Tensor& t, const JsonWriteOptions& options,
                                  std::string* text = nullptr) {
  GraphDef d;
  d.initializers.push_back({"t", t, false});
  const std::string doc = write_graph_json(d, options);
  if (text) *text = doc;
  return parse_graph_def(doc).initializers.at(0).value;
}

TEST(JsonWriter, Base64AboveTheInlineLimit) {
  std::vector<float> values(65);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 3.0f;
  std::string text;
  const Tensor t65 = Tensor::from<float>({65}, values);
  EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t65, {}, &text), t65));
  EXPECT_NE(text.find("\"data\": {\"base64\": \""), std::string::npos);

  values.pop_back();
  const Tensor t64 = Tensor::from<float>({64}, values);
  EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t64, {}, &text), t64));
  EXPECT_NE(text.find("\"data\": [0.0, 0.33333334, 0.6666667, 1.0,"), std::string::npos) << text;

  // Little-endian bytes of 1.0f: 00 00 80 3f.
  JsonWriteOptions all_base64;
  all_base64.inline_limit = 0;
  one_initializer_round_trip(Tensor::from<float>({1}, {1.0f}), all_base64, &text);
  EXPECT_NE(text.find("\"data\": {\"base64\": \"AACAPw==\"}"), std::string::npos) << text;
}

TEST(JsonWriter, NonFiniteValuesTravelAsBase64WithTheirPayloads) {
  const float quiet = std::bit_cast<float>(0x7fc12345u);
  const float signaling = std::bit_cast<float>(0xff800001u);
  const Tensor t =
      Tensor::from<float>({4}, {1.0f, quiet, signaling, -std::numeric_limits<float>::infinity()});
  std::string text;
  EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t, {}, &text), t));
  EXPECT_NE(text.find("base64"), std::string::npos);

  const Tensor h = Tensor::from<half>({2}, {half(1.0f), std::numeric_limits<half>::infinity()});
  EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(h, {}, &text), h));
  EXPECT_NE(text.find("base64"), std::string::npos);
}

template <typename Bits, typename T>
Tensor every_finite_value() {
  std::vector<T> values;
  for (std::uint32_t b = 0; b <= std::numeric_limits<Bits>::max(); ++b) {
    const Bits bits = static_cast<Bits>(b);
    const T v = Eigen::numext::bit_cast<T>(bits);
    if (std::isfinite(static_cast<float>(v))) values.push_back(v);
  }
  return Tensor::from<T>({static_cast<std::int64_t>(values.size())}, values);
}

JsonWriteOptions inline_everything() {
  JsonWriteOptions o;
  o.inline_limit = std::numeric_limits<std::size_t>::max();
  return o;
}

TEST(JsonWriter, EveryFiniteFloat16AndBFloat16ReadsBackAsTheSameBits) {
  for (const Tensor& t :
       {every_finite_value<std::uint16_t, half>(), every_finite_value<std::uint16_t, bfloat16>()}) {
    std::string text;
    EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t, inline_everything(), &text), t))
        << dtype_name(t.dtype());
    EXPECT_EQ(text.find("base64"), std::string::npos);
  }
}

template <typename T, typename Bits>
Tensor random_finite(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> values;
  while (values.size() < n) {
    const auto v = std::bit_cast<T>(static_cast<Bits>(rng()));
    if (std::isfinite(v)) values.push_back(v);
  }
  // Edges that random bits rarely hit.
  for (T v : {T(0), -T(0), std::numeric_limits<T>::denorm_min(),
              -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(),
              std::nextafter(std::numeric_limits<T>::min(), T(0)), std::numeric_limits<T>::max(),
              std::numeric_limits<T>::lowest(), std::numeric_limits<T>::epsilon()})
    values.push_back(v);
  for (Bits b = 1; b < 5000; b += 7) values.push_back(std::bit_cast<T>(b));  // subnormals
  return Tensor::from<T>({static_cast<std::int64_t>(values.size())}, values);
}

TEST(JsonWriter, RandomFloat32AndFloat64ReadBackBitForBitAsNumbers) {
  for (const Tensor& t : {random_finite<float, std::uint32_t>(200000, 1),
                          random_finite<double, std::uint64_t>(200000, 2)}) {
    std::string text;
    EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t, inline_everything(), &text), t))
        << dtype_name(t.dtype());
    EXPECT_EQ(text.find("base64"), std::string::npos);
  }
}

TEST(JsonWriter, RandomBitsIncludingNaNAndInfinitiesReadBackAsBase64) {
  std::mt19937_64 rng(3);
  Tensor f(DType::Float32, {1000});
  for (float& v : f.values<float>()) v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
  Tensor d(DType::Float64, {1000});
  for (double& v : d.values<double>()) v = std::bit_cast<double>(rng());
  f.values<float>()[0] = std::bit_cast<float>(0x7f800001u);  // NaN with the smallest payload
  d.values<double>()[0] = std::bit_cast<double>(0xfff8000000000001ull);
  for (const Tensor& t : {f, d})
    EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t, {}), t));
}

TEST(JsonWriter, IntegerTensorsKeepTheirExtremes) {
  for (const Tensor& t :
       {Tensor::from<std::int8_t>({3}, {-128, 0, 127}), Tensor::from<std::uint8_t>({2}, {0, 255}),
        Tensor::from<std::int64_t>({2}, {std::numeric_limits<std::int64_t>::min(), -1})}) {
    std::string text;
    EXPECT_TRUE(testing::same_bits(one_initializer_round_trip(t, {}, &text), t));
    EXPECT_EQ(text.find("base64"), std::string::npos);
  }
}

TEST(JsonWriter, FloatAttributesAndScalarsReadBackExactly) {
  GraphDef d = tiny_graph();
  d.nodes[0].lda_coeff = 0.1 + 0.2;  // 0.30000000000000004
  d.nodes[1].op_type = "LpPool";
  d.nodes[1].attributes = {{"kernel_shape", Ints{1, 1}}, {"p", std::int64_t{3}}};
  const std::string text = write_graph_json(d);
  EXPECT_NE(text.find("\"lda_coeff\": 0.30000000000000004"), std::string::npos) << text;
  const GraphDef back = parse_graph_def(text);
  EXPECT_TRUE(testing::same_graph_def(back, d));
  EXPECT_EQ(write_graph_json(back), text);
}

}  // namespace
}  // namespace nodeflow
