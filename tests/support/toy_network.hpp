#pragma once
// The toy network the training tests share (test_train_loop.cpp,
// test_train_features.cpp, test_data_parallel.cpp): a two-layer classifier of
// 2-D points with fixed weights, so expected numbers can be worked out by a
// reference script (tests/reference/training_reference.py,
// training_features_reference.py) and compared across tests.
#include "core/graph.hpp"
#include "core/tensor.hpp"
#include "training/dataset.hpp"

namespace nodeflow::testing {

/// What toy_graph adds to the plain float32 network.
struct ToyGraphOptions {
  /// The dtype of `x` and of every trainable parameter (their values are the
  /// float32 ones cast).
  DType dtype = DType::Float32;
  /// A Dropout(ratio 0.5) after Tanh.
  bool dropout = false;
  /// A BatchNormalization of `x` (trainable scale and B, running mean and var)
  /// before the first Gemm.
  bool batch_norm = false;
};

/// x [N, 2] -> [BatchNormalization] -> Gemm(2 -> 4) -> Tanh -> [Dropout]
/// -> Gemm(4 -> 2) = `logits` -> mean SoftmaxCrossEntropyLoss against
/// y [N] (int64) = `loss`; outputs `logits` and `loss`. Named "toy", with
/// trainable W1 [4, 2], B1 [4] (zeros), W2 [2, 4], B2 [2] (zeros).
GraphDef toy_graph(const ToyGraphOptions& options = {});

/// 8 points of 2 features in `dtype`, class 1 when x0 + x1 > 1.
training::Dataset toy_data(DType dtype = DType::Float32);

}  // namespace nodeflow::testing
