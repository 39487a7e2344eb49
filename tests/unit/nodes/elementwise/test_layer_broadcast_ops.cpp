// The broadcasting elementwise ops (Add, Sub, Mul, Div, Pow, Max, Min, Sum,
// Mean, PRelu): shape inference and refusals, values against hand-computed
// ones (integer wrap-around included), gradients by finite differences over
// a sweep of broadcasting patterns, ties, and fan-out in a graph.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <limits>
#include <random>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "core/graph.hpp"
#include "support/error_of.hpp"
#include "support/graph_parts.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::check_gradient;
using testing::error_of;
using testing::f64;
using testing::make_node;
using testing::random_uniform;
using testing::run_forward;

TensorInfo info(DType dtype, Shape shape) { return TensorInfo{dtype, std::move(shape)}; }

TEST(BroadcastOps, InferTheBroadcastShape) {
  EXPECT_EQ(testing::infer(*make_node("Add", {}), {info(DType::Float32, {2, 3, 4}), info(DType::Float32, {3, 1})})[0].shape,
            (Shape{2, 3, 4}));
  EXPECT_EQ(testing::infer(*make_node("Sum", {}),
                           {info(DType::Float16, {2, 1}), info(DType::Float16, {3}), info(DType::Float16, {1, 1, 3})})[0]
                .shape,
            (Shape{1, 2, 3}));
  EXPECT_EQ(testing::infer(*make_node("Max", {}), {info(DType::Int8, {kDynamicDim, 1}), info(DType::Int8, {4})})[0].shape,
            (Shape{kDynamicDim, 4}));
  const auto pow = testing::infer(*make_node("Pow", {}), {info(DType::Float32, {3}), info(DType::Int64, {})});
  EXPECT_EQ(pow[0].dtype, DType::Float32);
  EXPECT_EQ(testing::infer(*make_node("PRelu", {}), {info(DType::Float32, {2, 3, 4, 4}), info(DType::Float32, {3, 1, 1})})[0]
                .shape,
            (Shape{2, 3, 4, 4}));
}

TEST(BroadcastOps, RefuseShapesAndDtypesOutsideOnnx) {
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              testing::infer(*make_node("Add", {}), {info(DType::Float32, {2, 3}), info(DType::Float32, {4})});
            }),
            "input 0 [2, 3] and input 1 [4] cannot be broadcast (axis 1 of the result: 3 vs 4)");
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              testing::infer(*make_node("PRelu", {}), {info(DType::Float32, {3, 1}), info(DType::Float32, {3, 4})});
            }),
            "input 1 (slope) [3, 4] does not broadcast to the shape [3, 1] of input 0 (X)");
  EXPECT_EQ(error_of<UnsupportedDType>([] {
              testing::infer(*make_node("Sum", {}), {info(DType::Int8, {2}), info(DType::Int8, {2})});
            }),
            "Sum does not take dtype int8 (input 0 (data_0); allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(error_of<UnsupportedDType>([] {
              testing::infer(*make_node("Pow", {}), {info(DType::UInt8, {2}), info(DType::Float32, {2})});
            }),
            "Pow does not take dtype uint8 (input 0 (X); allowed: float32, float64, float16, bfloat16, int64)");
  EXPECT_EQ(error_of<UnsupportedDType>([] {
              testing::infer(*make_node("Mul", {}), {info(DType::Float32, {2}), info(DType::Float64, {2})});
            }),
            "input 1 (B) has dtype float64 but input 0 (A) has float32; Mul needs one dtype");
}

std::vector<double> values_of(const std::string& op, const std::vector<Tensor>& inputs) {
  const auto node = make_node(op, {});
  return as_doubles(run_forward(*node, inputs, 1, false).outputs[0]);
}

template <typename T> std::vector<T> int_values(const std::string& op, const std::vector<Tensor>& inputs) {
  const auto node = make_node(op, {});
  const Tensor y = run_forward(*node, inputs, 1, false).outputs[0];
  return {y.values<T>().begin(), y.values<T>().end()};
}

TEST(BroadcastOps, ComputeTheValuesWithBroadcasting) {
  const Tensor a = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor col = f64({2, 1}, {10, 20});
  EXPECT_EQ(values_of("Add", {a, col}), (std::vector<double>{11, 12, 13, 24, 25, 26}));
  EXPECT_EQ(values_of("Sub", {col, a}), (std::vector<double>{9, 8, 7, 16, 15, 14}));
  EXPECT_EQ(values_of("Mul", {a, f64({3}, {1, 0, -1})}), (std::vector<double>{1, 0, -3, 4, 0, -6}));
  EXPECT_EQ(values_of("Div", {a, f64({}, {2})}), (std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3}));
  EXPECT_EQ(values_of("Pow", {a, f64({2, 1}, {2, 0.5})}),
            (std::vector<double>{1, 4, 9, 2, std::sqrt(5.0), std::sqrt(6.0)}));
  EXPECT_EQ(values_of("Max", {a, f64({3}, {3, 3, 3}), f64({2, 1}, {0, 5})}), (std::vector<double>{3, 3, 3, 5, 5, 6}));
  EXPECT_EQ(values_of("Min", {a, f64({3}, {3, 3, 3})}), (std::vector<double>{1, 2, 3, 3, 3, 3}));
  EXPECT_EQ(values_of("Sum", {a}), as_doubles(a));
  EXPECT_EQ(values_of("Mean", {a, col, f64({}, {3})}), (std::vector<double>{14.0 / 3, 5, 16.0 / 3, 9, 28.0 / 3, 29.0 / 3}));
  EXPECT_EQ(values_of("PRelu", {f64({2, 2}, {-1, 2, -3, 0}), f64({2, 1}, {0.5, 2})}),
            (std::vector<double>{-0.5, 2, -6, 0}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto max = values_of("Max", {f64({2}, {nan, 1}), f64({2}, {1, nan})});
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]));
}

TEST(BroadcastOps, IntegersWrapAroundWithoutUndefinedBehaviour) {
  const auto i8 = [](std::initializer_list<std::int8_t> v) {
    return Tensor::from<std::int8_t>({static_cast<std::int64_t>(v.size())}, v);
  };
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(int_values<std::int8_t>("Add", {i8({127, -128, 5}), i8({1, -1, 3})}), (std::vector<std::int8_t>{-128, 127, 8}));
  EXPECT_EQ(int_values<std::uint8_t>("Mul", {Tensor::from<std::uint8_t>({2}, {250, 16}), Tensor::from<std::uint8_t>({}, {16})}),
            (std::vector<std::uint8_t>{160, 0}));
  EXPECT_EQ(int_values<std::int64_t>("Sub", {Tensor::from<std::int64_t>({2}, {lo, hi}), Tensor::from<std::int64_t>({2}, {1, -1})}),
            (std::vector<std::int64_t>{hi, lo}));
  EXPECT_EQ(int_values<std::int64_t>("Div", {Tensor::from<std::int64_t>({3}, {7, -7, lo}), Tensor::from<std::int64_t>({3}, {-2, 2, -1})}),
            (std::vector<std::int64_t>{-3, -3, lo}));
  EXPECT_EQ(int_values<std::int64_t>("Pow", {Tensor::from<std::int64_t>({4}, {3, -1, 2, 2}), Tensor::from<std::int64_t>({4}, {4, 3, -1, 64})}),
            (std::vector<std::int64_t>{81, -1, 0, 0}));
  EXPECT_EQ(int_values<std::int8_t>("Max", {i8({-5, 7}), i8({3})}), (std::vector<std::int8_t>{3, 7}));
  EXPECT_EQ(int_values<std::int64_t>("PRelu", {Tensor::from<std::int64_t>({2}, {-3, 4}), Tensor::from<std::int64_t>({1}, {2})}),
            (std::vector<std::int64_t>{-6, 4}));
  const auto div = make_node("Div", {});
  EXPECT_EQ(error_of<RunError>([&] { run_forward(*div, {i8({1, 2}), i8({1, 0})}, 1, false); }),
            "Div: integer division by zero (input 1 (B) holds a 0)");
}

TEST(BroadcastOps, Float16IsComputedInFloat32) {
  const Tensor a = Tensor::from<half>({2}, {half(1000.0f), half(0.5f)});
  const Tensor b = Tensor::from<half>({2}, {half(0.25f), half(0.25f)});
  EXPECT_EQ(values_of("Add", {a, b}), (std::vector<double>{1000.0, 0.75}));
  const auto mean = values_of("Mean", {a, b, b});
  EXPECT_NEAR(mean[0], 1000.5 / 3, 0.2);
}

struct Sweep {
  Shape a, b;
};
const std::vector<Sweep> kPatterns = {{{2, 3}, {2, 3}}, {{2, 3, 4}, {3, 1}}, {{3, 1}, {1, 4}},
                                      {{}, {2, 2}},     {{2, 1, 3}, {4, 1}}, {{1}, {5}}};

// Inputs kept away from the points where an op has no derivative.
Tensor operand(const std::string& op, std::size_t k, const Shape& shape, std::mt19937_64& rng) {
  Tensor t = random_uniform(shape, rng, 1.0);
  for (double& v : t.values<double>()) {
    if ((op == "Div" && k == 1) || (op == "Pow" && k == 0)) v = 0.5 + std::abs(v);
    if (op == "Pow" && k == 1) v = 3 * v;
  }
  return t;
}

TEST(BroadcastOps, GradientsMatchFiniteDifferencesOverBroadcastingPatterns) {
  std::mt19937_64 rng(19);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean"}) {
    for (const Sweep& p : kPatterns) {
      const std::vector<Tensor> inputs = {operand(op, 0, p.a, rng), operand(op, 1, p.b, rng)};
      for (double lda : {1.0, 0.5}) {
        const auto node = make_node(op, {}, true, lda);
        const auto r = check_gradient(*node, inputs, {.seed = rng()});
        EXPECT_TRUE(r.ok) << op << " " << to_string(p.a) << " " << to_string(p.b) << "\n" << r.failures;
      }
    }
  }
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    const std::vector<Tensor> inputs = {random_uniform({2, 3}, rng), random_uniform({3}, rng),
                                        random_uniform({2, 1}, rng), random_uniform({}, rng)};
    const auto r = check_gradient(*make_node(op, {}), inputs, {.seed = rng()});
    EXPECT_TRUE(r.ok) << op << "\n" << r.failures;
  }
  for (const Shape& slope : {Shape{3, 1, 1}, Shape{1}, Shape{4}, Shape{2, 3, 4, 4}}) {
    const std::vector<Tensor> inputs = {random_uniform({2, 3, 4, 4}, rng), random_uniform(slope, rng)};
    const auto r = check_gradient(*make_node("PRelu", {}), inputs, {.seed = rng()});
    EXPECT_TRUE(r.ok) << "PRelu " << to_string(slope) << "\n" << r.failures;
  }
}

std::vector<Tensor> gradients(const std::string& op, const std::vector<Tensor>& inputs, const Tensor& dy) {
  const auto node = make_node(op, {});
  const auto fwd = run_forward(*node, inputs);
  std::vector<Tensor> grads;
  for (const Tensor& x : inputs) grads.emplace_back(x.dtype(), x.shape());
  testing::run_backward(*node, inputs, fwd, {dy}, grads);
  return grads;
}

TEST(BroadcastOps, TiesSplitTheGradientEqually) {
  const Tensor a = f64({3}, {1, 5, 2});
  const Tensor b = f64({3}, {1, 5, 0});
  const Tensor c = f64({}, {5});
  const auto g = gradients("Max", {a, b, c}, f64({3}, {6, 6, 6}));
  EXPECT_EQ(as_doubles(g[0]), (std::vector<double>{0, 2, 0}));
  EXPECT_EQ(as_doubles(g[1]), (std::vector<double>{0, 2, 0}));
  EXPECT_EQ(as_doubles(g[2]), (std::vector<double>{14}));  // 6 alone, 2 of a three-way tie, 6 alone
  const auto m = gradients("Min", {a, b}, f64({3}, {4, 4, 4}));
  EXPECT_EQ(as_doubles(m[0]), (std::vector<double>{2, 2, 0}));
  EXPECT_EQ(as_doubles(m[1]), (std::vector<double>{2, 2, 4}));
}

TEST(BroadcastOps, PowGradientOfTheExponentIsZeroWhereThePowerIs) {
  const auto g = gradients("Pow", {f64({2}, {0, 2}), f64({2}, {2, 0})}, f64({2}, {1, 1}));
  EXPECT_EQ(as_doubles(g[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(as_doubles(g[1]), (std::vector<double>{0, std::log(2.0)}));
}

TEST(BroadcastOps, Float16AndBFloat16GradientsFollowTheFloat64Ones) {
  std::mt19937_64 rng(7);
  const Tensor signed_a = random_uniform({2, 3, 4}, rng);
  const Tensor positive_a = operand("Pow", 0, {2, 3, 4}, rng);
  const Tensor b = operand("Div", 1, {3, 1}, rng);
  const Tensor dy = random_uniform({2, 3, 4}, rng);
  for (const char* op : {"Mul", "Div", "Pow", "Mean", "PRelu"}) {
    const Tensor& a = std::string(op) == "Pow" ? positive_a : signed_a;
    const auto want = gradients(op, {a, b}, dy);
    for (DType low : {DType::Float16, DType::BFloat16}) {
      const auto got = gradients(op, {a.cast(low), b.cast(low)}, dy.cast(low));
      for (std::size_t k = 0; k < 2; ++k) {
        ASSERT_EQ(got[k].dtype(), low);
        testing::expect_near(as_doubles(got[k]), as_doubles(want[k]), low == DType::Float16 ? 0.05 : 0.3);
      }
    }
  }
}

// The forward and both gradients of a broadcasting op on `threads` threads;
// an input's gradient is left empty (not wanted) where `wanted` is false.
std::vector<Tensor> forward_backward(const char* op, const Tensor& x, const Tensor& b, const Tensor& dy, int threads,
                                     std::array<bool, 2> wanted = {true, true}) {
  const auto node = make_node(op, {});
  std::vector<Tensor> saved;
  std::vector<Tensor> out(1);
  const std::vector<Tensor> in = {x, b};
  node->forward(ForwardContext{in, out, &saved, 0, nullptr, threads});
  const std::vector<TensorInfo> infos = {{x.dtype(), x.shape()}, {b.dtype(), b.shape()}};
  std::vector<Tensor> grads = {wanted[0] ? Tensor(x.dtype(), x.shape()) : Tensor(),
                               wanted[1] ? Tensor(b.dtype(), b.shape()) : Tensor()};
  BackwardContext ctx;
  ctx.inputs = infos;
  ctx.saved = saved;
  const std::vector<Tensor> dys = {dy};
  ctx.grad_outputs = dys;
  ctx.grad_inputs = grads;
  ctx.threads = threads;
  node->backward(ctx);
  return {out[0], grads[0], grads[1]};
}

void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << what;
}

// A feature map [4, 16, 40, 40] and its output gradient, float32.
struct FeatureMap {
  Tensor x, dy;
};
FeatureMap random_feature_map(std::mt19937_64& rng) {
  Tensor x = random_uniform({4, 16, 40, 40}, rng).cast(DType::Float32);
  Tensor dy = random_uniform({4, 16, 40, 40}, rng).cast(DType::Float32);
  return {std::move(x), std::move(dy)};
}

// A broadcast input's gradient is summed in parts fixed by the shapes
// (reduce_parts), so the thread count does not change a bit
// (docs/architecture.md, "Threads").
TEST(BroadcastOps, LargeTensorsGiveTheSameBitsOnAnyThreadCount) {
  std::mt19937_64 rng(5);
  const auto [x, dy] = random_feature_map(rng);
  for (const Shape& bias_shape : {Shape{16, 1, 1}, Shape{16, 40, 40}, Shape{40}}) {
    const Tensor bias = random_uniform(bias_shape, rng).cast(DType::Float32);
    for (const char* op : {"Add", "Mul", "PRelu"}) {
      const std::vector<Tensor> one = forward_backward(op, x, bias, dy, 1);
      for (int threads : {2, 3}) {
        const std::vector<Tensor> many = forward_backward(op, x, bias, dy, threads);
        for (std::size_t k = 0; k < one.size(); ++k)
          expect_same_bits(one[k], many[k],
                           std::string(op) + " " + to_string(bias_shape) + ", " + std::to_string(threads) +
                               " threads, tensor " + std::to_string(k));
      }
    }
  }
}

// Mul's gradients of a feature map and a broadcast factor, taken in one pass,
// have the bits of each taken alone (add_gradient).
TEST(BroadcastOps, MulGradientsInOnePassHaveTheBitsOfOnePassEach) {
  std::mt19937_64 rng(6);
  const auto [x, dy] = random_feature_map(rng);
  for (const Shape& bias_shape : {Shape{16, 1, 1}, Shape{16, 40, 40}, Shape{1}}) {
    const Tensor bias = random_uniform(bias_shape, rng).cast(DType::Float32);
    for (int threads : {1, 2}) {
      const std::string what = to_string(bias_shape) + ", " + std::to_string(threads) + " threads";
      const std::vector<Tensor> both = forward_backward("Mul", x, bias, dy, threads);
      expect_same_bits(both[1], forward_backward("Mul", x, bias, dy, threads, {true, false})[1], "dA " + what);
      expect_same_bits(both[2], forward_backward("Mul", x, bias, dy, threads, {false, true})[2], "dB " + what);
      expect_same_bits(forward_backward("Mul", bias, x, dy, threads)[1], both[2], "dA, A broadcast, " + what);
    }
  }
}

// Mul(x, x): both gradients go to x's one buffer, added in turn, with the
// vector loops of a large tensor (gradient_lanes) as with the scalar ones.
TEST(BroadcastOps, MulOfATensorWithItselfGetsBothGradients) {
  for (const std::int64_t n : {4, 16, 100, 5000}) {
    std::vector<double> values, twice, ones(static_cast<std::size_t>(n), 1.0);
    for (std::int64_t i = 0; i < n; ++i) {
      values.push_back(0.25 * static_cast<double>(i % 17) - 2.0);
      twice.push_back(2.0 * values.back());
    }
    GraphDef g;
    g.inputs = {{"x", {DType::Float64, {n}}}};
    g.nodes = {testing::node_def("Mul", "sq", {"x", "x"})};
    g.outputs = {"sq"};
    const Graph graph(g);
    Executor ex(graph);
    TrainingRun run = ex.forward({{"x", Tensor::from<double>({n}, values)}});
    const TensorMap grads = ex.backward(run, {{"sq", Tensor::from<double>({n}, ones)}});
    EXPECT_EQ(as_doubles(grads.at("x")), twice) << "n " << n;
  }
}

// x feeds Mul(x, x) and Add(x, c), both summed by Sum: dL/dx = 2x + 1,
// whichever order the nodes are listed in.
TEST(BroadcastOps, FanOutThroughMulAndAddSumsTheGradientsInAnyNodeOrder) {
  const Tensor x = f64({2, 2}, {1, -2, 0.5, 3});
  for (int order = 0; order < 2; ++order) {
    GraphDef g;
    g.inputs = {{"x", {DType::Float64, {2, 2}}}};
    g.initializers = {{"c", f64({2, 1}, {1, 2}), true}};
    std::vector<NodeDef> nodes = {testing::node_def("Mul", "sq", {"x", "x"}),
                                  testing::node_def("Add", "shift", {"x", "c"}),
                                  testing::node_def("Sum", "total", {"sq", "shift"})};
    if (order == 1) std::swap(nodes[0], nodes[2]);
    g.nodes = nodes;
    g.outputs = {"total"};
    const Graph graph(g);
    Executor ex(graph);
    TrainingRun run = ex.forward({{"x", x}});
    const TensorMap grads = ex.backward(run, {{"total", f64({2, 2}, {1, 1, 1, 1})}});
    EXPECT_EQ(as_doubles(grads.at("x")), (std::vector<double>{3, -3, 2, 7}));
    EXPECT_EQ(as_doubles(grads.at("c")), (std::vector<double>{2, 2}));
  }
}

// t = Transpose(x) is read twice by Add and once by ReduceMean. The executor
// hands the first gradient of t to the node that reads it once, uninitialised,
// to overwrite (Node::overwrites_gradients), and zeroes it for Add, which
// reads it twice: either way dL/dt = 2 du + dm / 6, whichever node runs its
// backward first.
TEST(BroadcastOps, FirstGradientOfATensorIsOverwrittenOnlyByItsOnlyReader) {
  const Tensor x = f64({2, 3}, {1, -2, 0.5, 3, 4, -1});
  for (int order = 0; order < 2; ++order) {
    GraphDef g;
    g.inputs = {{"x", {DType::Float64, {2, 3}}}};
    std::vector<NodeDef> nodes = {testing::node_def("Transpose", "t", {"x"}),
                                  testing::node_def("Add", "twice", {"t", "t"}),
                                  testing::node_def("ReduceMean", "mean", {"t"})};
    if (order == 1) std::swap(nodes[1], nodes[2]);
    g.nodes = nodes;
    g.outputs = {"twice", "mean"};
    const Graph graph(g);
    Executor ex(graph);
    TrainingRun run = ex.forward({{"x", x}});
    const TensorMap grads =
        ex.backward(run, {{"twice", f64({3, 2}, {1, 2, 3, 4, 5, 6})}, {"mean", f64({1, 1}, {6})}});
    // dt = 2 * dtwice + 1, transposed back to x's [2, 3].
    EXPECT_EQ(as_doubles(grads.at("x")), (std::vector<double>{3, 7, 11, 5, 9, 13})) << "order " << order;
  }
}

}  // namespace
}  // namespace nodeflow
