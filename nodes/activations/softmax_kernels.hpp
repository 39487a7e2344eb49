#pragma once
// Softmax and log-softmax along one axis of a row-major tensor seen as
// outer x n x inner (n is the axis), numerically stable (the maximum along
// the axis is subtracted before exp). Shared by Softmax, LogSoftmax and
// SoftmaxCrossEntropyLoss. T is float or double.
#include <cstdint>

namespace nodeflow {

/// Sizes of the outer x n x inner view.
struct AxisView {
  std::int64_t outer = 1;
  std::int64_t n = 1;
  std::int64_t inner = 1;
};

/// y = exp(x - max) / sum(exp(x - max)) along the axis.
template <typename T> void softmax_forward(AxisView v, const T* x, T* y);
/// y = (x - max) - log(sum(exp(x - max))) along the axis, in that order: the
/// difference x - max is exact near the maximum, so y is accurate for any
/// magnitude of x.
template <typename T> void log_softmax_forward(AxisView v, const T* x, T* y);
/// dx = y * (dy - sum(dy * y)) from the softmax output y (dx overwritten).
template <typename T> void softmax_backward(AxisView v, const T* y, const T* dy, T* dx);
/// dx = dy - exp(y) * sum(dy) from the log-softmax output y (dx overwritten).
template <typename T> void log_softmax_backward(AxisView v, const T* y, const T* dy, T* dx);

}  // namespace nodeflow
