// Squeeze and Unsqueeze (ONNX -21): shapes with negative and unordered
// axes, refusals, the shared buffer and the gradient; Cast (Cast-21): the
// conversion rules of every dtype pair (rounding, saturation, wrapping,
// NaN), load-time refusals and the gradient between float dtypes only.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/errors.hpp"
#include "core/graph_builder.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using testing::i64;
using testing::make_node;

Shape run_shape(const std::string& op, const Shape& in, std::vector<std::int64_t> axes) {
  std::vector<Tensor> inputs{Tensor(DType::Int8, in)};
  if (!axes.empty()) inputs.push_back(Tensor::from<std::int64_t>({static_cast<std::int64_t>(axes.size())}, axes));
  return testing::run_forward(*make_node(op, {}), inputs, 1, false).outputs[0].shape();
}

TEST(Squeeze, RemovesTheNamedOrEveryUnitAxis) {
  EXPECT_EQ(run_shape("Squeeze", {1, 3, 1, 4}, {-2, 0}), (Shape{3, 4}));
  EXPECT_EQ(run_shape("Squeeze", {1, 3, 1, 4}, {2}), (Shape{1, 3, 4}));
  EXPECT_EQ(run_shape("Squeeze", {1, 3, 1, 4}, {}), (Shape{3, 4}));
  EXPECT_EQ(run_shape("Squeeze", {1, 1}, {}), Shape{});
  auto node = make_node("Squeeze", {});
  const Tensor axes = i64({1}, {1});
  EXPECT_EQ(testing::infer(*node, {{DType::Float32, {2, kDynamicDim}}, {DType::Int64, {1}}}, {nullptr, &axes})[0].shape,
            (Shape{2}));
  EXPECT_EQ(error_of<ShapeMismatch>([] { run_shape("Squeeze", {1, 3}, {1}); }),
            "input 1 (axes) [1]: axis 1 of the input [1, 3] has length 3, not 1");
  EXPECT_EQ(error_of<ShapeMismatch>([] { run_shape("Squeeze", {1, 3}, {2}); }),
            "input 1 (axes): axes[0] = 2 is outside [-2, 1] for input rank 2");
  EXPECT_EQ(error_of<ShapeMismatch>([] { run_shape("Squeeze", {1, 3}, {0, -2}); }),
            "input 1 (axes): axes[1] = -2 repeats axis 0 (axes[0] = 0)");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {1, kDynamicDim}}}); }),
            "Squeeze without axes needs the input's dimensions, and dimension 1 of [1, ?] is known only at run time "
            "(give axes)");
}

TEST(Unsqueeze, InsertsAxesCountedInTheOutputRank) {
  EXPECT_EQ(run_shape("Unsqueeze", {3, 4}, {-1, 0}), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(run_shape("Unsqueeze", {3, 4}, {1}), (Shape{3, 1, 4}));
  EXPECT_EQ(run_shape("Unsqueeze", {}, {0, 1}), (Shape{1, 1}));
  EXPECT_EQ(error_of<ShapeMismatch>([] { run_shape("Unsqueeze", {3}, {2}); }),
            "input 1 (axes): axes[0] = 2 is outside [-2, 1] for output rank 2");
  EXPECT_EQ(error_of<UnsupportedDType>([] {
              testing::run_forward(*make_node("Unsqueeze", {}), {Tensor(DType::Float32, {2}), Tensor(DType::Float32, {1})},
                                   1, false);
            }),
            "Unsqueeze needs dtype int64 for input 1 (axes), got float32");
  // The axes must be a non-trainable initializer.
  GraphBuilder g;
  g.add_input("x", DType::Float32, {3}).add_input("axes", DType::Int64, {1});
  EXPECT_NE(error_of<InvalidGraph>([&] { g.add_node("Unsqueeze", "u", {"x", "axes"}); }).find("non-trainable"),
            std::string::npos);
}

TEST(SqueezeUnsqueeze, ShareTheBufferAndPassTheGradient) {
  const Tensor x = testing::pattern({1, 3, 1, 2}, 1, 100, 0, 1.0);
  const Tensor y = testing::run_forward(*make_node("Squeeze", {}), {x}, 1, false).outputs[0];
  EXPECT_TRUE(y.shares_buffer(x));
  for (const double lda : {1.0, 0.5}) {
    testing::GradCheckResult r = testing::check_gradient(*make_node("Squeeze", {}, true, lda), {x, i64({1}, {-2})});
    EXPECT_TRUE(r.ok) << r.failures;
    r = testing::check_gradient(*make_node("Unsqueeze", {}, true, lda), {x, i64({2}, {4, 0})});
    EXPECT_TRUE(r.ok) << r.failures;
  }
}

template <typename T> Tensor one(T v) { return Tensor::from<T>({1}, {v}); }

// Cast of one value to `code`, read back as a double.
double cast1(const Tensor& x, std::int64_t code) {
  const Tensor y = testing::run_forward(*make_node("Cast", {{"to", code}}), {x}, 1, false).outputs[0];
  return visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<accumulator_t<T>>(y.data<T>()[0]));
  });
}

TEST(Cast, FloatToIntegerTruncatesAndSaturates) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr std::int64_t kInt8 = 3, kUInt8 = 2, kInt64 = 7;
  EXPECT_EQ(cast1(one(2.9f), kInt8), 2);
  EXPECT_EQ(cast1(one(-2.9), kInt8), -2);
  EXPECT_EQ(cast1(one(300.0f), kInt8), 127);
  EXPECT_EQ(cast1(one(-300.0), kInt8), -128);
  EXPECT_EQ(cast1(one(-0.5f), kUInt8), 0);
  EXPECT_EQ(cast1(one(-3.0f), kUInt8), 0);
  EXPECT_EQ(cast1(one(255.9), kUInt8), 255);
  EXPECT_EQ(cast1(one(256.0), kUInt8), 255);
  EXPECT_EQ(cast1(one(std::nan("")), kInt64), 0);
  EXPECT_EQ(cast1(one(inf), kInt64), static_cast<double>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(cast1(one(-inf), kInt64), static_cast<double>(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(cast1(one(9.3e18f), kInt64), static_cast<double>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(cast1(one(half(-7.75f)), kInt8), -7);
  EXPECT_EQ(cast1(one(bfloat16(1e10f)), kInt8), 127);
}

TEST(Cast, IntegersWrapAndFloatsRoundToNearestEven) {
  constexpr std::int64_t kFloat = 1, kInt8 = 3, kUInt8 = 2, kFloat16 = 10, kBFloat16 = 16;
  EXPECT_EQ(cast1(one<std::int64_t>(200), kInt8), -56);
  EXPECT_EQ(cast1(one<std::int64_t>(-1), kUInt8), 255);
  EXPECT_EQ(cast1(one<std::uint8_t>(200), kInt8), -56);
  EXPECT_EQ(cast1(one<std::int8_t>(-56), kUInt8), 200);
  EXPECT_EQ(cast1(one(70000.0f), kFloat16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(cast1(one(65519.0f), kFloat16), 65504);
  EXPECT_EQ(cast1(one(1e300), kFloat), std::numeric_limits<double>::infinity());
  EXPECT_EQ(cast1(one(-1e300), kBFloat16), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(cast1(one(std::int64_t{16777217}), kFloat), 16777216);
  // float64 -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above the tie
  // between 1 and 1 + 2^-10 (a rounding through float32 would land on the tie
  // and go to 1).
  EXPECT_EQ(cast1(one(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), kFloat16), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(cast1(one(1.0 + std::ldexp(1.0, -11)), kFloat16), 1.0);
  // int64 -> bfloat16 likewise: 2^24 + 2^16 + 1 is above the tie of 2^24 and 2^24 + 2^17.
  EXPECT_EQ(cast1(one(std::int64_t{(1 << 24) + (1 << 16) + 1}), kBFloat16), (1 << 24) + (1 << 17));
  EXPECT_TRUE(std::isnan(cast1(one(std::nan("")), kBFloat16)));
}

TEST(Cast, EveryPairOfDtypesOnTwoThreads) {
  // Small integers survive every cast, on a tensor past the parallel threshold.
  const std::int64_t n = 100000;
  std::vector<std::int64_t> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = i % 100;
  for (const auto& [from_code, from] : std::vector<std::pair<std::int64_t, DType>>{
           {1, DType::Float32}, {2, DType::UInt8}, {3, DType::Int8}, {7, DType::Int64},
           {10, DType::Float16}, {11, DType::Float64}, {16, DType::BFloat16}})
    for (const std::int64_t to : {1, 2, 3, 7, 10, 11, 16}) {
      const Tensor x = Tensor::from<std::int64_t>({n}, values).cast(from);
      std::vector<Tensor> inputs{x}, outputs(1);
      ForwardContext ctx;
      ctx.inputs = inputs;
      ctx.outputs = outputs;
      ctx.threads = 2;
      make_node("Cast", {{"to", to}})->forward(ctx);
      const Tensor back = outputs[0].cast(DType::Int64);
      const auto got = back.values<std::int64_t>();
      EXPECT_TRUE(std::equal(got.begin(), got.end(), values.begin())) << from_code << " -> " << to;
      if (from_code == to) {
        EXPECT_TRUE(outputs[0].shares_buffer(x));
      }
    }
}

TEST(Cast, RefusesOtherTypeCodes) {
  GraphBuilder g;
  g.add_input("x", DType::Float32, {2});
  EXPECT_EQ(error_of<InvalidAttribute>([&] { g.add_node("Cast", "c", {"x"}, {{"to", std::int64_t{6}}}); }),
            "nodes[0] (c).attributes.to: expected an integer one of 1, 2, 3, 7, 10, 11, 16, got 6");
}

TEST(Cast, GradientIsCastBackBetweenFloatsOnly) {
  std::mt19937_64 rng(2);
  const Tensor x = testing::random_uniform({2, 3}, rng);
  for (const double lda : {1.0, 0.5}) {
    // float64 -> float64 and a float64 -> float32 round trip.
    testing::GradCheckResult r = testing::check_gradient(*make_node("Cast", {{"to", std::int64_t{11}}}, true, lda), {x});
    EXPECT_TRUE(r.ok) << r.failures;
  }
  auto to_f32 = make_node("Cast", {{"to", std::int64_t{1}}}, true, 0.5);
  const std::vector<Tensor> inputs{x};
  const testing::ForwardResult fwd = testing::run_forward(*to_f32, inputs);
  std::vector<Tensor> dy{Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6})};
  std::vector<Tensor> dx{testing::f64({2, 3}, {1, 1, 1, 1, 1, 1})};
  testing::run_backward(*to_f32, inputs, fwd, dy, dx);
  EXPECT_EQ(testing::as_doubles(dx[0]), (std::vector<double>{1.5, 2, 2.5, 3, 3.5, 4}));
  // To an integer: no gradient.
  auto to_int = make_node("Cast", {{"to", std::int64_t{7}}});
  std::vector<Tensor> none{Tensor(DType::Int64, {2, 3})};
  testing::run_backward(*to_int, inputs, testing::run_forward(*to_int, inputs), none, dx);
  EXPECT_EQ(testing::as_doubles(dx[0]), (std::vector<double>{1.5, 2, 2.5, 3, 3.5, 4}));
}

}  // namespace
}  // namespace nodeflow
