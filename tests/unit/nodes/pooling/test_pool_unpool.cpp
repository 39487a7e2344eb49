// MaxUnpool (docs/pooling.md, "Values", "Backward"): scatter into zeros, output
// shape rules, duplicate and out-of-range indices, gather backward.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support/gradcheck.hpp"
#include "support/graph_parts.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;
using testing::values_of;

Tensor index_tensor(Shape shape, std::initializer_list<std::int64_t> v) {
  return Tensor::from<std::int64_t>(std::move(shape), v);
}

Tensor unpool(const Attributes& attrs, const std::vector<Tensor>& inputs) {
  auto node = testing::make_node("MaxUnpool", attrs);
  return testing::run_forward(*node, inputs).outputs[0];
}

TEST(MaxUnpool, ScattersIntoZerosWithTheDefaultShape) {
  // (2-1)*2 + 2 = 4.
  const Tensor y =
      unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
             {Tensor::from<float>({1, 1, 2}, {5, 7}), index_tensor({1, 1, 2}, {1, 2})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{0, 5, 7, 0}));
  // Pads shrink the output: (5-1)*2 + 3 - 1 - 0 = 10.
  const Tensor padded =
      unpool({{"kernel_shape", ints{3}}, {"strides", ints{2}}, {"pads", ints{1, 0}}},
             {Tensor::from<std::int8_t>({1, 1, 5}, {1, 2, 3, 4, 5}),
              index_tensor({1, 1, 5}, {0, 2, 4, 6, 9})});
  EXPECT_EQ(padded.shape(), (Shape{1, 1, 10}));
  EXPECT_EQ(values_of<std::int8_t>(padded),
            (std::vector<std::int8_t>{1, 0, 2, 0, 3, 0, 4, 0, 0, 5}));
}

TEST(MaxUnpool, OutputShapeInputIsHonoured) {
  const Tensor y = unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
                          {Tensor::from<float>({1, 1, 2}, {5, 7}), index_tensor({1, 1, 2}, {4, 0}),
                           index_tensor({3}, {1, 1, 5})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 5}));
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{7, 0, 0, 0, 5}));
}

TEST(MaxUnpool, IndicesAreFlatOverTheWholeOutput) {
  // Indices may cross planes: channel 0's value lands in channel 1.
  const Tensor y =
      unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
             {Tensor::from<float>({1, 2, 1}, {1, 2}), index_tensor({1, 2, 1}, {3, 0})});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{2, 0, 0, 1}));
}

TEST(MaxUnpool, DuplicateIndicesKeepTheLaterElement) {
  const Tensor y =
      unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
             {Tensor::from<float>({1, 1, 3}, {1, 2, 3}), index_tensor({1, 1, 3}, {1, 1, 0})});
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{3, 2, 0, 0, 0, 0}));
  // Across planes too: row-major order of X decides.
  const Tensor z =
      unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
             {Tensor::from<float>({1, 2, 1}, {8, 9}), index_tensor({1, 2, 1}, {2, 2})});
  EXPECT_EQ(values_of<float>(z), (std::vector<float>{0, 0, 9, 0}));
}

TEST(MaxUnpool, AnIndexOutsideTheOutputIsARunError) {
  for (std::int64_t bad : {std::int64_t{4}, std::int64_t{-1}}) {
    try {
      unpool({{"kernel_shape", ints{2}}, {"strides", ints{2}}},
             {Tensor::from<float>({1, 1, 2}, {5, 7}),
              Tensor::from<std::int64_t>({1, 1, 2}, {0, bad})});
      ADD_FAILURE() << "index " << bad << " accepted";
    } catch (const RunError& e) {
      EXPECT_EQ(std::string(e.what()),
                "input 1 (I): index " + std::to_string(bad) +
                    " at flat position 1 is outside the output of 4 elements");
    }
  }
}

TEST(MaxUnpool, RefusesMismatchedInputs) {
  auto node = testing::make_node("MaxUnpool", {{"kernel_shape", ints{2}}});
  const Tensor x = Tensor::from<float>({1, 1, 2}, {5, 7});
  EXPECT_THROW(testing::run_forward(*node, {x, Tensor::from<float>({1, 1, 2}, {0, 1})}),
               UnsupportedDType);
  EXPECT_THROW(testing::run_forward(*node, {x, index_tensor({1, 1, 3}, {0, 1, 2})}), ShapeMismatch);
  EXPECT_THROW(testing::run_forward(
                   *node, {x, index_tensor({1, 1, 2}, {0, 1}), index_tensor({3}, {1, 2, 5})}),
               ShapeMismatch);  // output_shape changes C
  EXPECT_THROW(
      testing::run_forward(*node, {x, index_tensor({1, 1, 2}, {0, 1}), index_tensor({2}, {1, 1})}),
      ShapeMismatch);  // output_shape of the wrong length
  EXPECT_THROW(testing::run_forward(
                   *node, {Tensor(DType::Int64, {1, 1, 2}), index_tensor({1, 1, 2}, {0, 1})}),
               UnsupportedDType);
}

TEST(MaxUnpool, InferUsesAConstantOutputShapeElseLeavesSpatialDimsDynamic) {
  auto node =
      testing::make_node("MaxUnpool", {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}});
  const TensorInfo x{DType::Float32, {kDynamicDim, 2, 2, 2}};
  const TensorInfo ind{DType::Int64, {kDynamicDim, 2, 2, 2}};
  const TensorInfo shape{DType::Int64, {4}};
  InferContext ctx;
  ctx.inputs = {&x, &ind};
  ctx.constants = {nullptr, nullptr};
  const auto out = node->infer(ctx);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 2, 4, 4}));
  ctx.inputs.push_back(&shape);
  ctx.constants.push_back(nullptr);
  EXPECT_EQ(node->infer(ctx)[0].shape, (Shape{kDynamicDim, 2, kDynamicDim, kDynamicDim}));
  const Tensor value = index_tensor({4}, {1, 2, 5, 5});
  ctx.constants[2] = &value;
  EXPECT_EQ(node->infer(ctx)[0].shape, (Shape{1, 2, 5, 5}));
  const TensorInfo wrong_index{DType::Int64, {1, 2, 3, 2}};
  ctx.inputs[1] = &wrong_index;
  EXPECT_THROW(node->infer(ctx), ShapeMismatch);
}

TEST(MaxUnpoolBackward, GathersTheOutputGradientAtTheIndices) {
  auto node =
      testing::make_node("MaxUnpool", {{"kernel_shape", ints{2}}, {"strides", ints{2}}}, true, 0.5);
  const std::vector<Tensor> inputs{Tensor::from<float>({1, 1, 3}, {1, 2, 3}),
                                   index_tensor({1, 1, 3}, {1, 1, 4})};
  const auto fwd = testing::run_forward(*node, inputs);
  ASSERT_EQ(fwd.saved.size(), 1u);
  EXPECT_TRUE(fwd.saved[0].shares_buffer(inputs[1]));  // I is kept, not copied
  std::vector<Tensor> grads{Tensor::from<float>({1, 1, 3}, {1, 1, 1}), Tensor()};
  testing::run_backward(*node, inputs, fwd,
                        {Tensor::from<float>({1, 1, 6}, {10, 20, 30, 40, 50, 60})}, grads);
  // dX = prefill + 0.5 * dY[I]; duplicate index 1 gathers for both elements.
  EXPECT_EQ(values_of<float>(grads[0]), (std::vector<float>{11, 11, 26}));
  EXPECT_TRUE(grads[1].empty());
}

TEST(MaxUnpool, RoundTripWithMaxPool) {
  auto pool =
      testing::make_node("MaxPool", {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}});
  const Tensor x = Tensor::from<float>({1, 1, 2, 4}, {1, 8, 3, 2, 5, 4, 9, 7});
  const auto pooled = testing::run_forward(*pool, {x}, 2, false);
  const Tensor y = unpool({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}}, pooled.outputs);
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{0, 8, 0, 0, 0, 0, 9, 0}));
}

}  // namespace
}  // namespace nodeflow
