// Transpose (ONNX Transpose-21): output shapes, the blocked copy against a
// naive index computation over a seeded sweep of shapes, permutations,
// dtypes and thread counts, load-time refusals and the gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/errors.hpp"
#include "core/graph_builder.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using testing::make_node;

Attributes perm_attr(std::vector<std::int64_t> perm) { return {{"perm", AttrValue{std::move(perm)}}}; }

// y[o] = x[i] with i[perm[k]] = o[k], element by element.
std::vector<std::int64_t> naive_transpose(const std::vector<std::int64_t>& x, const Shape& in,
                                          const std::vector<std::int64_t>& perm) {
  Shape out;
  for (const std::int64_t p : perm) out.push_back(in[static_cast<std::size_t>(p)]);
  const auto in_strides = row_major_strides(in);
  std::vector<std::int64_t> y(x.size());
  std::vector<std::int64_t> o(out.size(), 0);
  for (std::size_t flat = 0; flat < y.size(); ++flat) {
    std::int64_t rest = static_cast<std::int64_t>(flat), src = 0;
    for (std::size_t k = out.size(); k-- > 0;) {
      src += (rest % out[k]) * in_strides[static_cast<std::size_t>(perm[k])];
      rest /= out[k];
    }
    y[flat] = x[static_cast<std::size_t>(src)];
  }
  return y;
}

Tensor run_threads(const Node& node, const Tensor& x, int threads) {
  std::vector<Tensor> inputs{x}, outputs(1);
  ForwardContext ctx;
  ctx.inputs = inputs;
  ctx.outputs = outputs;
  ctx.threads = threads;
  node.forward(ctx);
  return outputs[0];
}

TEST(Transpose, InfersShapesWithTheDefaultReversedPerm) {
  EXPECT_EQ(testing::infer(*make_node("Transpose", {}), {{DType::Int8, {2, kDynamicDim, 4}}})[0].shape,
            (Shape{4, kDynamicDim, 2}));
  const auto out = testing::infer(*make_node("Transpose", perm_attr({1, 2, 0})), {{DType::Float16, {2, 3, 4}}});
  EXPECT_EQ(out[0].shape, (Shape{3, 4, 2}));
  EXPECT_EQ(out[0].dtype, DType::Float16);
  EXPECT_EQ(testing::infer(*make_node("Transpose", {}), {{DType::Float32, {}}})[0].shape, Shape{});
}

TEST(Transpose, MatchesTheNaiveCopyOverASweep) {
  std::mt19937_64 rng(19);
  const std::vector<Shape> shapes = {{5},          {3, 7},         {1, 4, 1, 3},  {2, 3, 4, 5},
                                     {33, 65},     {2, 40, 37},    {3, 1, 70, 2}, {4, 64, 9, 9},
                                     {2, 3, 0, 4}, {16, 130, 70}};
  for (const Shape& shape : shapes) {
    std::vector<std::int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (int trial = 0; trial < 4; ++trial) {
      std::shuffle(perm.begin(), perm.end(), rng);
      const std::int64_t n = element_count(shape);
      // Small values, exact in every dtype tested.
      std::vector<std::int64_t> values(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = (i * 7) % 64 - 20;
      const std::vector<std::int64_t> want = naive_transpose(values, shape, perm);
      const Tensor x = Tensor::from<std::int64_t>(shape, values);
      auto node = make_node("Transpose", perm_attr(perm));
      for (const DType dtype : {DType::Int64, DType::Float32, DType::Int8, DType::Float16}) {
        for (const int threads : {1, 2}) {
          const Tensor y = run_threads(*node, x.cast(dtype), threads);
          ASSERT_EQ(y.dtype(), dtype);
          const Tensor back = y.cast(DType::Int64);
          const auto got = back.values<std::int64_t>();
          ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin()))
                << "shape " << to_string(shape) << " perm " << to_string(AttrValue{perm}) << " dtype "
                << dtype_name(dtype) << " threads " << threads;
        }
      }
    }
  }
}

TEST(Transpose, RefusesPermsThatAreNotPermutations) {
  auto load = [](std::vector<std::int64_t> perm) {
    GraphBuilder b;
    b.add_input("x", DType::Float32, {2, 3, 4});
    b.add_node("Transpose", "tr1", {"x"}, perm_attr(std::move(perm)));
  };
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({0, 2, 2}); }),
            "nodes[0] (tr1).attributes.perm: [0, 2, 2] is not a permutation of 0..2");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({0, 3, 1}); }),
            "nodes[0] (tr1).attributes.perm: [0, 3, 1] is not a permutation of 0..2");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({-1, 0, 1}); }),
            "nodes[0] (tr1).attributes.perm: [-1, 0, 1] is not a permutation of 0..2");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({1, 0}); }),
            "nodes[0] (tr1).attributes.perm: [1, 0] has 2 values, the input has rank 3");
}

TEST(Transpose, GradientIsTheInverseTransposition) {
  std::mt19937_64 rng(3);
  const std::vector<std::pair<Shape, std::vector<std::int64_t>>> cases = {
      {{2, 3, 4}, {1, 2, 0}}, {{3, 5}, {1, 0}}, {{2, 1, 3, 2}, {3, 0, 2, 1}}, {{4}, {0}}};
  for (const auto& [shape, perm] : cases)
    for (const double lda : {1.0, 0.25}) {
      auto node = make_node("Transpose", perm_attr(perm), true, lda);
      const testing::GradCheckResult r = testing::check_gradient(*node, {testing::random_uniform(shape, rng)});
      EXPECT_TRUE(r.ok) << to_string(shape) << ": " << r.failures;
    }
}

TEST(Transpose, LargeGradientsOnTwoThreadsAddIntoTheBuffer) {
  // Shapes past the parallel threshold, the tiled path, float32: dx = prefill + dy^T.
  const Shape shape{3, 150, 170};
  auto node = make_node("Transpose", perm_attr({0, 2, 1}));
  Tensor dy(DType::Float32, {3, 170, 150});
  for (std::int64_t i = 0; i < dy.numel(); ++i) dy.data<float>()[i] = static_cast<float>(i % 97);
  Tensor dx(DType::Float32, shape);
  for (std::int64_t i = 0; i < dx.numel(); ++i) dx.data<float>()[i] = 0.5f;
  std::vector<TensorInfo> infos{{DType::Float32, shape}};
  std::vector<Tensor> gy{dy}, gx{dx};
  BackwardContext ctx;
  ctx.inputs = infos;
  ctx.grad_outputs = gy;
  ctx.grad_inputs = gx;
  ctx.threads = 2;
  node->backward(ctx);
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t i = 0; i < 150; ++i)
      for (std::int64_t j = 0; j < 170; ++j)
        ASSERT_EQ(dx.data<float>()[(b * 150 + i) * 170 + j],
                  0.5f + static_cast<float>(((b * 170 + j) * 150 + i) % 97));
}

}  // namespace
}  // namespace nodeflow
