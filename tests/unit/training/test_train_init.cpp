// Initialisation rules (PyTorch's torch.nn.init definitions): fans, bounds,
// moments, determinism and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/init_rules.hpp"
#include "core/random.hpp"
#include "serialization/json_reader.hpp"
#include "support/error_of.hpp"

namespace nodeflow::training {
namespace {

struct Moments {
  double mean = 0, std = 0, min = 1e300, max = -1e300;
};

Moments moments(const Tensor& t) {
  Moments m;
  const auto v = t.values<float>();
  for (float x : v) {
    m.mean += x;
    m.min = std::min<double>(m.min, x);
    m.max = std::max<double>(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (float x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(v.size()));
  return m;
}

InitRule rule(InitKind kind, std::uint64_t seed = 1) {
  InitRule r;
  r.kind = kind;
  r.seed = seed;
  return r;
}

TEST(InitRules, FansFollowPyTorch) {
  // Conv weight [out 16, in 6, 5, 5]: fan_in = 6 * 25, fan_out = 16 * 25.
  const Fans conv = compute_fans({16, 6, 5, 5});
  EXPECT_EQ(conv.fan_in, 150);
  EXPECT_EQ(conv.fan_out, 400);
  const Fans linear = compute_fans({120, 400});
  EXPECT_EQ(linear.fan_in, 400);
  EXPECT_EQ(linear.fan_out, 120);
  EXPECT_THROW(compute_fans({10}), ShapeMismatch);
}

TEST(InitRules, HeNormalHasStdSqrtTwoOverFanIn) {
  // 200 x 300 values: the sample std is within 1% of sqrt(2 / 300) with overwhelming probability.
  const Moments m = moments(make_initialized(rule(InitKind::HeNormal), DType::Float32, {200, 300}));
  EXPECT_NEAR(m.mean, 0.0, 0.002);
  EXPECT_NEAR(m.std, std::sqrt(2.0 / 300.0), 0.01 * std::sqrt(2.0 / 300.0));
  InitRule fan_out = rule(InitKind::HeNormal);
  fan_out.mode = FanMode::FanOut;
  const Moments o = moments(make_initialized(fan_out, DType::Float32, {200, 300}));
  EXPECT_NEAR(o.std, std::sqrt(2.0 / 200.0), 0.01 * std::sqrt(2.0 / 200.0));
}

TEST(InitRules, UniformRulesStayWithinTheirBounds) {
  const double he_bound = std::sqrt(6.0 / 150.0);
  const Moments he =
      moments(make_initialized(rule(InitKind::HeUniform), DType::Float32, {400, 6, 5, 5}));
  EXPECT_LE(he.max, he_bound);
  EXPECT_GE(he.min, -he_bound);
  EXPECT_GT(he.max, 0.99 * he_bound);  // the range is used up to its ends
  EXPECT_NEAR(he.std, he_bound / std::sqrt(3.0), 0.01 * he_bound);

  const double glorot_bound = std::sqrt(6.0 / (400.0 + 120.0));
  const Moments g =
      moments(make_initialized(rule(InitKind::GlorotUniform), DType::Float32, {120, 400}));
  EXPECT_LE(g.max, glorot_bound);
  EXPECT_GE(g.min, -glorot_bound);
  EXPECT_NEAR(g.std, glorot_bound / std::sqrt(3.0), 0.01 * glorot_bound);

  const Moments gn =
      moments(make_initialized(rule(InitKind::GlorotNormal), DType::Float32, {120, 400}));
  EXPECT_NEAR(gn.std, std::sqrt(2.0 / 520.0), 0.01 * std::sqrt(2.0 / 520.0));

  InitRule u = rule(InitKind::Uniform);
  u.low = -0.5;
  u.high = 0.25;
  const Moments um = moments(make_initialized(u, DType::Float32, {10000}));
  EXPECT_GE(um.min, -0.5);
  EXPECT_LT(um.max, 0.25);
  EXPECT_NEAR(um.mean, -0.125, 0.01);
  InitRule n = rule(InitKind::Normal);
  n.mean = 3.0;
  n.std = 0.5;
  const Moments nm = moments(make_initialized(n, DType::Float32, {20000}));
  EXPECT_NEAR(nm.mean, 3.0, 0.02);
  EXPECT_NEAR(nm.std, 0.5, 0.01);
}

TEST(InitRules, ConstantRules) {
  InitRule c = rule(InitKind::Constant);
  c.value = 0.25;
  EXPECT_EQ(make_initialized(c, DType::Float64, {3}).data<double>()[2], 0.25);
  EXPECT_EQ(make_initialized(rule(InitKind::Ones), DType::Int64, {2}).data<std::int64_t>()[1], 1);
  EXPECT_EQ(make_initialized(rule(InitKind::Zeros), DType::Float32, {2}).data<float>()[0], 0.0f);
}

TEST(InitRules, ValuesTheDtypeCannotHoldAreRefused) {
  // As data these values are refused; a rule must not wrap, saturate or
  // overflow them into other values (1e30 -> int64 is not even defined).
  auto constant = [](double v) {
    InitRule c = rule(InitKind::Constant);
    c.value = v;
    return c;
  };
  EXPECT_THROW(make_initialized(constant(1e30), DType::Int64, {2}), InvalidAttribute);
  EXPECT_THROW(make_initialized(constant(300), DType::Int8, {2}), InvalidAttribute);
  EXPECT_THROW(make_initialized(constant(-3), DType::UInt8, {2}), InvalidAttribute);
  EXPECT_THROW(make_initialized(constant(1.5), DType::Int8, {2}), InvalidAttribute);
  EXPECT_THROW(make_initialized(constant(1e300), DType::Float32, {2}), InvalidAttribute);
  EXPECT_THROW(make_initialized(constant(1e10), DType::Float16, {2}), InvalidAttribute);
  try {
    make_initialized(constant(128), DType::Int8, {1});
    ADD_FAILURE() << "no error";
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "init rule 'constant' gives 128, which int8 cannot hold (integers in [-128, 127])");
  }
  InitRule wide = rule(InitKind::Normal);
  wide.std = 1e308;
  EXPECT_THROW(make_initialized(wide, DType::Float32, {4}), InvalidAttribute);
  // The ends of each range are kept exactly.
  EXPECT_EQ(make_initialized(constant(-128), DType::Int8, {1}).data<std::int8_t>()[0], -128);
  EXPECT_EQ(make_initialized(constant(255), DType::UInt8, {1}).data<std::uint8_t>()[0], 255);
  EXPECT_EQ(make_initialized(constant(-0x1p63), DType::Int64, {1}).data<std::int64_t>()[0],
            std::numeric_limits<std::int64_t>::lowest());
  EXPECT_THROW(make_initialized(constant(0x1p63), DType::Int64, {1}), InvalidAttribute);
  EXPECT_EQ(make_initialized(constant(65504), DType::Float16, {1}).data<half>()[0], half(65504.0f));
}

TEST(InitRules, SameSeedSameTensorOtherSeedOtherTensor) {
  const Tensor a = make_initialized(rule(InitKind::HeNormal, 5), DType::Float32, {6, 1, 5, 5});
  const Tensor b = make_initialized(rule(InitKind::HeNormal, 5), DType::Float32, {6, 1, 5, 5});
  const Tensor c = make_initialized(rule(InitKind::HeNormal, 6), DType::Float32, {6, 1, 5, 5});
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
  EXPECT_NE(0, std::memcmp(a.raw(), c.raw(), a.nbytes()));
}

TEST(InitRules, TheStreamIsFixedAcrossPlatforms) {
  // mt19937_64 is specified by the C++ standard: its 10000th output for the
  // default seed 5489 is 9981545732273789042 ([rand.predef]).
  Rng rng(5489);
  std::uint64_t x = 0;
  for (int i = 0; i < 10000; ++i) x = rng.next();
  EXPECT_EQ(x, 9981545732273789042ULL);
  // uniform() keeps the top 53 bits.
  Rng again(5489);
  for (int i = 0; i < 9999; ++i) again.next();
  EXPECT_EQ(again.uniform(), static_cast<double>(9981545732273789042ULL >> 11) * 0x1.0p-53);
}

TEST(InitRules, Refusals) {
  EXPECT_THROW(make_initialized(rule(InitKind::HeNormal), DType::Float32, {10}), ShapeMismatch);
  EXPECT_THROW(make_initialized(rule(InitKind::HeNormal), DType::Int64, {10, 10}),
               UnsupportedDType);
  EXPECT_THROW(make_initialized(rule(InitKind::HeUniform), DType::Float32, {10, 0}), ShapeMismatch);
  InitRule bad = rule(InitKind::Uniform);
  bad.low = 1;
  bad.high = 0;
  EXPECT_THROW(make_initialized(bad, DType::Float32, {2}), InvalidAttribute);
  InitKind k{};
  EXPECT_TRUE(parse_init_kind("glorot_uniform", k));
  EXPECT_EQ(k, InitKind::GlorotUniform);
  EXPECT_FALSE(parse_init_kind("xavier", k));
  EXPECT_EQ(init_kind_names(),
            "zeros, ones, constant, uniform, normal, he_normal, he_uniform, glorot_normal, "
            "glorot_uniform");
}

}  // namespace
}  // namespace nodeflow::training

// The graph document's `init` in place of `data` (serialization/json_init_rule.cpp).
namespace nodeflow::training {
namespace {

std::string doc_with(const std::string& initializer) {
  return R"({"format": "nodeflow.graph", "version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [2, 3]}],
             "outputs": ["y"], "initializers": [)" +
         initializer +
         R"(], "nodes": [{"op_type": "Gemm", "name": "y", "inputs": ["x", "w"], "attributes": {"transB": 1}}]})";
}

std::string reader_error(const std::string& initializer) {
  return testing::error_of<Error>([&] { parse_graph_def(doc_with(initializer)); });
}

TEST(InitRulesInDocuments, IntegerConstantsAreExactBeyondDoublePrecision) {
  // 2^53 + 1 has no double; through one it became 2^53. int64's maximum was
  // refused as "9.22337e+18", a value the message's own range includes.
  const GraphDef big = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "int64", "shape": [2], "init": {"rule": "constant", "value": 9007199254740993}})"));
  EXPECT_EQ(big.initializers[0].value.data<std::int64_t>()[1], 9007199254740993LL);
  const GraphDef top = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "int64", "shape": [1], "init": {"rule": "constant", "value": 9223372036854775807}})"));
  EXPECT_EQ(top.initializers[0].value.data<std::int64_t>()[0], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(reader_error(R"({"name": "w", "dtype": "int8", "shape": [1], "init": {"rule": "constant", "value": 9007199254740993}})"),
            "initializers[0] (w).init: init rule 'constant' gives 9007199254740993, which int8 cannot hold "
            "(integers in [-128, 127])");
  // Float dtypes still round the value to their nearest.
  const GraphDef f = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "float64", "shape": [1], "init": {"rule": "constant", "value": 9007199254740993}})"));
  EXPECT_EQ(f.initializers[0].value.data<double>()[0], 9007199254740992.0);
}

TEST(InitRulesInDocuments, InitTakesThePlaceOfData) {
  const GraphDef def = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "float32", "shape": [4, 3], "trainable": true, "init": {"rule": "he_normal", "seed": 9}})"));
  InitRule r = rule(InitKind::HeNormal, 9);
  const Tensor want = make_initialized(r, DType::Float32, {4, 3});
  ASSERT_EQ(def.initializers[0].value.shape(), (Shape{4, 3}));
  EXPECT_EQ(0, std::memcmp(def.initializers[0].value.raw(), want.raw(), want.nbytes()));
  EXPECT_TRUE(def.initializers[0].trainable);

  const GraphDef c = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "float64", "shape": [4, 3], "init": {"rule": "constant", "value": -0.5}})"));
  EXPECT_EQ(c.initializers[0].value.data<double>()[11], -0.5);
  const GraphDef u = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "uniform", "seed": 0, "low": 2, "high": 3}})"));
  for (float x : u.initializers[0].value.values<float>()) EXPECT_TRUE(x >= 2.0f && x < 3.0f);
  const GraphDef f = parse_graph_def(doc_with(
      R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "he_uniform", "seed": 3, "mode": "fan_out"}})"));
  for (float x : f.initializers[0].value.values<float>())
    EXPECT_LE(std::abs(x), std::sqrt(6.0 / 4.0));
}

TEST(InitRulesInDocuments, ErrorsNameThePath) {
  const std::vector<std::pair<std::string, std::string>> refusals{
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "xavier", "seed": 1}})",
       "initializers[0] (w).init.rule: expected one of zeros, ones, constant, uniform, normal, "
       "he_normal, he_uniform, glorot_normal, glorot_uniform, got 'xavier'"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "he_normal"}})",
       "initializers[0] (w).init: missing required key 'seed'"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "glorot_uniform", "seed": -1}})",
       "initializers[0] (w).init.seed: expected a non-negative integer, got -1"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "glorot_uniform", "seed": 18446744073709551615}})",
       "initializers[0] (w).init.seed: expected an integer from 0 to 9223372036854775807, got "
       "18446744073709551615"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "zeros", "seed": 1}})",
       "initializers[0] (w).init.seed: unknown key 'seed' (known: rule)"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "he_normal", "seed": 1, "mode": "in"}})",
       "initializers[0] (w).init.mode: expected \"fan_in\" or \"fan_out\", got 'in'"},
      {R"({"name": "w", "dtype": "float32", "shape": [12], "init": {"rule": "he_normal", "seed": 1}})",
       "initializers[0] (w).init: fan-based initialisation needs a tensor of rank >= 2 ([out, in, "
       "...]), got [12]"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "init": {"rule": "uniform", "seed": 1, "low": 1, "high": 0}})",
       "initializers[0] (w).init: low must not exceed high, got 1 > 0"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3], "data": [1], "init": {"rule": "zeros"}})",
       "initializers[0] (w): 'data' and 'init' exclude each other (give one)"},
      {R"({"name": "w", "dtype": "float32", "shape": [4, 3]})",
       "initializers[0] (w): missing required key 'data' (or 'init', an initialisation rule)"},
  };
  for (const auto& [initializer, message] : refusals)
    EXPECT_EQ(reader_error(initializer), message) << initializer;
}

TEST(InitRulesInDocuments, TheLeNet5ExampleIsShortAndLoads) {
  const Graph g = load_graph_file(NODEFLOW_EXAMPLES_DIR "/lenet5.json");
  EXPECT_EQ(g.parameter_count(), 61706);
  // Every weight drawn from its own seed: no two layers start alike.
  const Tensor& w1 = g.initializer("fc1.W")->value;
  EXPECT_NEAR(moments(w1).std, std::sqrt(2.0 / 400.0), 0.05 * std::sqrt(2.0 / 400.0));
  EXPECT_EQ(g.initializer("fc1.B")->value.data<float>()[0], 0.0f);
}

}  // namespace
}  // namespace nodeflow::training
