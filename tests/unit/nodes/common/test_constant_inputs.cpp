// The constant 1-D int64 inputs (nodes/common/constant_inputs.hpp): the
// dtype and rank checks, ONNX axes normalized in the order given, the mask,
// and the one set of messages every op that reads such an input gives.
#include "nodes/common/constant_inputs.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using Ints = std::vector<std::int64_t>;

TEST(ConstantInputs, ReadsA1DInt64TensorAndRefusesOthers) {
  const Tensor t = Tensor::from<std::int64_t>({3}, {4, -1, 0});
  const auto v = int64_list("Tile", 1, "repeats", t);
  EXPECT_EQ(Ints(v.begin(), v.end()), (Ints{4, -1, 0}));
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              int64_list("Squeeze", 1, "axes", Tensor::from<std::int64_t>({2, 1}, {0, 1}));
            }),
            "input 1 (axes) has shape [2, 1]; Squeeze needs a 1-D int64 tensor");
  EXPECT_EQ(error_of<UnsupportedDType>([] { int64_list("Slice", 3, "axes", Tensor(DType::Float32, {1})); }),
            "Slice needs dtype int64 for input 3 (axes), got float32");
  // Shape inference checks the description alone.
  EXPECT_NO_THROW(check_int64_list("Pad", 1, "pads", TensorInfo{DType::Int64, {kDynamicDim}}));
  EXPECT_EQ(error_of<ShapeMismatch>([] { check_int64_list("Expand", 1, "shape", TensorInfo{DType::Int64, {}}); }),
            "input 1 (shape) has shape []; Expand needs a 1-D int64 tensor");
}

TEST(ConstantInputs, PresentSkipsAbsentAndMissingInputs) {
  const std::vector<Tensor> inputs{Tensor(DType::Float32, {2}), Tensor()};
  EXPECT_EQ(present(inputs, 0), &inputs[0]);
  EXPECT_EQ(present(inputs, 1), nullptr);
  EXPECT_EQ(present(inputs, 2), nullptr);
}

TEST(ConstantInputs, NormalizesAxesInTheOrderGiven) {
  const Ints axes{-1, 0, 2};
  EXPECT_EQ(normalized_axes(axes, 4, 3, "axes"), (std::vector<std::size_t>{3, 0, 2}));
  EXPECT_EQ(axis_mask(axes, 4, 3, "axes"), (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(axis_mask(Ints{}, 2, 1, "axes"), (std::vector<bool>{false, false}));
}

TEST(ConstantInputs, RefusesAxesOutOfRangeAndRepeats) {
  EXPECT_EQ(error_of<ShapeMismatch>([] { axis_mask(Ints{2}, 2, 1, "axes"); }),
            "input 1 (axes): axes[0] = 2 is outside [-2, 1] for input rank 2");
  EXPECT_EQ(error_of<ShapeMismatch>([] { axis_mask(Ints{0, -3}, 2, 1, "axes", "output"); }),
            "input 1 (axes): axes[1] = -3 is outside [-2, 1] for output rank 2");
  EXPECT_EQ(error_of<ShapeMismatch>([] { normalized_axes(Ints{1, 0, -2}, 3, 3, "axes"); }),
            "input 3 (axes): axes[2] = -2 repeats axis 1 (axes[0] = 1)");
  EXPECT_EQ(error_of<ShapeMismatch>([] { axis_mask(Ints{0}, 0, 1, "axes"); }),
            "input 1 (axes): axes[0] = 0 is outside [0, -1] for input rank 0");
}

}  // namespace
}  // namespace nodeflow
