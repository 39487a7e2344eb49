// Reduce* backward: finite-difference gradchecks over a seeded sweep of
// shapes, axes and keepdims for every op (the checker pre-fills the gradient
// buffer, so += and lda_coeff are checked too), the conventions of
// docs/operators.md (Max/Min ties split equally, Prod with zeros, L2 at a
// zero norm, LogSumExp's softmax for large inputs), float32/float16 buffers,
// and 1 vs 2 threads on large tensors.
#include <gtest/gtest.h>

#include <cmath>

#include "reduce_reference.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::f64;
using testing::i64;
using testing::make_node;

// Distinct values, at least 0.05 apart and away from 0, so Max/Min cannot
// flip under the finite-difference step and Prod stays well conditioned.
Tensor distinct(const Shape& shape, std::mt19937_64& rng) {
  const std::int64_t n = element_count(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 0.5 + 0.05 * static_cast<double>(i);
  std::shuffle(v.begin(), v.end(), rng);
  for (double& e : v)
    if (rng() % 2) e = -e;
  return Tensor::from<double>(shape, v);
}

TEST(ReduceGradients, SweepPassesTheGradientCheck) {
  std::mt19937_64 rng(21);
  for (const auto& op : testing::reduce_ops())
    for (const auto& rc : testing::reduce_sweep(17, 40)) {
      SCOPED_TRACE(op + ", " + testing::describe(rc));
      auto node = make_node(op, {{"keepdims", std::int64_t{rc.keepdims}}}, true, 0.75);
      const auto result = testing::check_gradient(*node, testing::reduce_inputs(distinct(rc.shape, rng), rc));
      EXPECT_TRUE(result.ok) << result.failures;
    }
}

TEST(ReduceGradients, NoopAndRankZero) {
  for (const auto& op : testing::reduce_ops()) {
    SCOPED_TRACE(op);
    auto noop = make_node(op, {{"noop_with_empty_axes", std::int64_t{1}}});
    auto r = testing::check_gradient(*noop, {f64({2, 2}, {0.6, -0.7, 0.8, 0.9})});
    EXPECT_TRUE(r.ok) << r.failures;
    auto scalar = make_node(op, {{"keepdims", std::int64_t{0}}});
    r = testing::check_gradient(*scalar, {Tensor::from<double>({}, {0.7})});
    EXPECT_TRUE(r.ok) << r.failures;
  }
}

// dx for x, output gradient dy, reduced along axes, into a zero buffer of x's dtype.
std::vector<double> gradient(const std::string& op, const Tensor& x, const Tensor& axes, const Tensor& dy,
                             int threads = 1) {
  auto node = make_node(op, {});
  const std::vector<Tensor> in{x, axes};
  std::vector<Tensor> saved, outputs(1);
  ForwardContext f;
  f.inputs = in;
  f.outputs = outputs;
  f.saved = &saved;
  f.threads = threads;
  node->forward(f);
  std::vector<TensorInfo> infos{{x.dtype(), x.shape()}, {axes.dtype(), axes.shape()}};
  std::vector<Tensor> grads{Tensor(x.dtype(), x.shape()), Tensor()};
  BackwardContext b;
  b.inputs = infos;
  b.saved = saved;
  b.grad_outputs = std::span<const Tensor>(&dy, 1);
  b.grad_inputs = grads;
  b.threads = threads;
  node->backward(b);
  return as_doubles(grads[0]);
}

TEST(ReduceGradients, MaxAndMinSplitTiesEqually) {
  const Tensor x = f64({2, 4}, {3, 1, 3, 3, -2, 5, -2, 0});
  const Tensor dy = f64({2, 1}, {1.5, 2});
  EXPECT_EQ(gradient("ReduceMax", x, i64({1}, {1}), dy), (std::vector<double>{0.5, 0, 0.5, 0.5, 0, 2, 0, 0}));
  EXPECT_EQ(gradient("ReduceMin", x, i64({1}, {1}), dy), (std::vector<double>{0, 1.5, 0, 0, 1, 0, 1, 0}));
  // Ties along a middle axis (the line-kept path).
  const Tensor cols = f64({2, 2}, {4, 4, 4, 1});
  EXPECT_EQ(gradient("ReduceMax", cols, i64({1}, {0}), f64({1, 2}, {1, 1})), (std::vector<double>{0.5, 1, 0.5, 0}));
}

TEST(ReduceGradients, ProdWithZerosDividesByNothing) {
  // Row 0 no zero, row 1 one zero, row 2 two zeros.
  const Tensor x = f64({3, 3}, {2, 3, 4, 2, 0, 5, 0, 7, 0});
  const Tensor dy = f64({3, 1}, {1, 2, 3});
  EXPECT_EQ(gradient("ReduceProd", x, i64({1}, {1}), dy), (std::vector<double>{12, 8, 6, 0, 20, 0, 0, 0, 0}));
  EXPECT_EQ(gradient("ReduceProd", x, i64({1}, {0}), f64({1, 3}, {1, 1, 1})),
            (std::vector<double>{0, 0, 0, 0, 21, 0, 4, 0, 20}));
}

TEST(ReduceGradients, L2AtAZeroNormIsZero) {
  const Tensor x = f64({2, 2}, {0, 0, 3, -4});
  EXPECT_EQ(gradient("ReduceL2", x, i64({1}, {1}), f64({2, 1}, {1, 10})), (std::vector<double>{0, 0, 6, -8}));
}

TEST(ReduceGradients, LogSumExpIsTheSoftmaxForLargeInputs) {
  const Tensor x = f64({1, 2}, {1e4, 1e4}).cast(DType::Float32);
  const auto g = gradient("ReduceLogSumExp", x, i64({1}, {1}), Tensor::from<float>({1, 1}, {2.0f}));
  EXPECT_EQ(g, (std::vector<double>{1, 1}));
}

TEST(ReduceGradients, AddIntoFloat32AndFloat16Buffers) {
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    auto node = make_node("ReduceMean", {}, true, 0.5);
    const Tensor x = f64({2, 2}, {1, 2, 3, 4}).cast(dtype);
    const Tensor axes = i64({1}, {0});
    const auto f = testing::run_forward(*node, {x, axes});
    std::vector<Tensor> grads{f64({2, 2}, {10, 20, 30, 40}).cast(dtype), Tensor()};
    testing::run_backward(*node, {x, axes}, f, {f64({1, 2}, {4, 8}).cast(dtype)}, grads);
    // 0.5 (lda_coeff) * dy / 2 added to what was there.
    EXPECT_EQ(as_doubles(grads[0]), (std::vector<double>{11, 22, 31, 42}));
  }
}

TEST(ReduceGradients, LargeTensorsAgreeWithOneAndTwoThreads) {
  std::mt19937_64 rng(3);
  const Shape shape{4, 64, 12, 14};
  const Tensor x = distinct(shape, rng).cast(DType::Float32);
  for (const auto& op : testing::reduce_ops())
    // {}: every axis, one output, whose line the threads share.
    for (std::vector<std::int64_t> axes : {std::vector<std::int64_t>{1}, {-1}, {0, 3}, {}}) {
      SCOPED_TRACE(op + " axes " + to_string(Shape(axes)));
      const Tensor axes_t = Tensor::from<std::int64_t>({static_cast<std::int64_t>(axes.size())}, axes);
      Shape out = axes.empty() ? Shape(4, 1) : shape;
      for (std::int64_t a : axes) out[static_cast<std::size_t>(a < 0 ? a + 4 : a)] = 1;
      const Tensor dy = testing::random_uniform(out, rng).cast(DType::Float32);
      EXPECT_EQ(gradient(op, x, axes_t, dy, 1), gradient(op, x, axes_t, dy, 2));
    }
}

}  // namespace
}  // namespace nodeflow
