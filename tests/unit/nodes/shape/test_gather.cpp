// Gather (ONNX Gather-13): axes, negative and repeated indices, scalar and
// 2-D indices, every dtype, shape inference, out-of-range indices refused at
// load (constant indices) and at run time, and the scatter-add gradient.
#include <gtest/gtest.h>

#include <random>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "core/graph_builder.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"
#include "unit/nodes/shape/shape_test_lists.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::forward_output;
using testing::i64;
using testing::make_node;
using testing::pattern;

Tensor gather(const Tensor& data, const Tensor& indices, std::int64_t axis = 0) {
  return forward_output("Gather", {{"axis", axis}}, {data, indices});
}

TEST(Gather, TakesTheIndexedEntries) {
  // Conformance gather_axis0_negative_indices_backward_f32: rows of [5, 3].
  const Tensor data = pattern({5, 3}, 1, 100, 0, 1.0);
  Tensor y = gather(data, i64({2, 2}, {0, -1, 4, 0}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{0, 1, 2, 12, 13, 14, 12, 13, 14, 0, 1, 2}));
  // Along the last axis, with scalar indices: the axis goes away.
  y = gather(data, i64({}, {-2}), -1);
  EXPECT_EQ(y.shape(), (Shape{5}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1, 4, 7, 10, 13}));
  // Along a middle axis of [2, 3, 2].
  y = gather(pattern({2, 3, 2}, 1, 100, 0, 1.0), i64({3}, {2, 2, 0}), 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{4, 5, 4, 5, 0, 1, 10, 11, 10, 11, 6, 7}));
  EXPECT_EQ(gather(data, Tensor(DType::Int64, {0})).shape(), (Shape{0, 3}));
}

TEST(Gather, TakesEveryDtype) {
  for (DType t : kGraphDTypes) {
    const Tensor y = gather(pattern({3, 2}, 1, 100, 0, 1.0, t), i64({2}, {2, -3}));
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(as_doubles(y.cast(DType::Float64)), (std::vector<double>{4, 5, 0, 1}));
  }
}

TEST(Gather, InfersShapesAndRefusesConstantIndicesOutOfRange) {
  auto node = make_node("Gather", {{"axis", std::int64_t{1}}});
  const TensorInfo ind{DType::Int64, {2, 2}};
  auto out = testing::infer(*node, {{DType::UInt8, {kDynamicDim, 4, 5}}, ind});
  EXPECT_EQ(out[0].dtype, DType::UInt8);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 2, 2, 5}));
  const Tensor bad = i64({2, 2}, {0, 1, -5, 3});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {2, 4, 5}}, ind}, {nullptr, &bad});
            }),
            "input 1 (indices): indices[2] (flat) = -5 is outside [-4, 3] for data axis 1 of length 4");
  EXPECT_EQ(error_of<InvalidAttribute>([&] {
              testing::infer(*node, {{DType::Float32, {4}}, ind});
            }),
            "attributes.axis: expected an integer in [-1, 0] for input rank 1, got 1");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*make_node("Gather", {}), {{DType::Float32, {}}, ind});
            }),
            "input 0 (data) is a scalar; Gather needs rank >= 1");
  // In a graph: at load, naming the node.
  GraphBuilder b;
  b.add_input("data", DType::Float32, {4, 3});
  b.add_initializer("idx", i64({1}, {4}));
  const std::string message = error_of<ShapeMismatch>([&] { b.add_node("Gather", "g", {"data", "idx"}); });
  EXPECT_EQ(message.find("nodes[0] (g): input 1 (indices): indices[0] (flat) = 4 is outside [-4, 3]"), 0u)
      << message;
}

TEST(Gather, RefusesIndicesOutOfRangeAtRunTime) {
  EXPECT_EQ(error_of<RunError>([] {
              gather(Tensor(DType::Float32, {4, 3}), i64({2}, {1, 4}));
            }),
            "input 1 (indices): indices[1] (flat) = 4 is outside [-4, 3] for data axis 0 of length 4");
  // Conformance error_gather_indices_out_of_range: a graph input, refused by the run naming the node.
  GraphBuilder b;
  b.add_input("data", DType::Float32, {4, 3}).add_input("gather_indices", DType::Int64, {2});
  b.add_node("Gather", "gather1", {"data", "gather_indices"});
  b.add_output("gather1");
  const Graph g = b.build();
  const Executor ex(g);
  const TensorMap feeds{{"data", Tensor(DType::Float32, {4, 3})}, {"gather_indices", i64({2}, {0, 4})}};
  const std::string message = error_of<RunError>([&] { ex.run(feeds); });
  EXPECT_EQ(message.find("nodes[0] (gather1): input 1 (indices): indices[1] (flat) = 4"), 0u) << message;
}

TEST(Gather, GradientScatterAddsIntoData) {
  std::mt19937_64 rng(23);
  struct Case {
    Shape data;
    Tensor indices;
    std::int64_t axis;
  };
  const std::vector<Case> cases{{{5, 3}, i64({2, 2}, {0, -1, 4, 0}), 0},
                                {{2, 4, 3}, i64({5}, {1, 1, -1, 0, 1}), 1},
                                {{3, 4}, i64({}, {-4}), -1},
                                {{2, 3}, i64({3, 1}, {2, 0, 2}), 1}};
  for (std::size_t k = 0; k < cases.size(); ++k) {
    auto node = make_node("Gather", {{"axis", cases[k].axis}}, true, k % 2 ? 0.5 : 1.0);
    const testing::GradCheckResult r =
        testing::check_gradient(*node, {testing::random_uniform(cases[k].data, rng), cases[k].indices});
    EXPECT_TRUE(r.ok) << "case " << k << "\n" << r.failures;
  }
}

}  // namespace
}  // namespace nodeflow
