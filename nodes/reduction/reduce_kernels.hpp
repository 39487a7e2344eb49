#pragma once
// The reduction kernels: each op is a small policy (how an element is mapped,
// how two partial results combine, how the result is finished) run by the one
// traversal of reduce_axes.hpp, and each gradient a spread of per-output
// factors back over the input through the same traversal. Kept in one
// translation unit (reduce_kernels.cpp), which instantiates the Eigen
// expressions for every compute type.
#include "core/tensor.hpp"
#include "nodes/reduction/reduce_axes.hpp"

namespace nodeflow {

enum class ReduceKind { Sum, Mean, Prod, Max, Min, L2, SumSquare, LogSumExp };

/// The ONNX op name of a kind ("ReduceSum").
const char* reduce_op_name(ReduceKind kind);

/// The forward inputs backward reads (besides the output gradient).
struct ReduceNeeds {
  bool input = false;
  bool output = false;
};
ReduceNeeds reduce_backward_needs(ReduceKind kind);

/// y (shape `out_shape`, x's dtype) = the reduction of x along the plan. x is
/// float32, float64 or int64 (int8 and uint8 for Max and Min): float16 and
/// bfloat16 are converted by the caller. int64 sums and products wrap (as
/// numpy's), Mean truncates toward zero, L2 and LogSumExp are computed in
/// float64 and saturate. An empty reduced set gives Sum, SumSquare, L2 0,
/// Prod 1, Mean NaN (0 for int64), Max -inf, Min +inf, LogSumExp -inf (the
/// integer limits for ints).
Tensor reduce_forward(ReduceKind kind, const ReducePlan& plan, const Tensor& x, const Shape& out_shape,
                      int threads);

/// dx += scale * d(reduction)/dx . dy for float32/float64 x, y (forward's
/// output) and dy, with dx of their dtype and x's shape; dx = ... when
/// `overwrite` (dx uninitialised, BackwardContext::overwrite_inputs). `x`/`y`
/// may be empty where reduce_backward_needs says they are not read.
void reduce_backward(ReduceKind kind, const ReducePlan& plan, const Tensor& x, const Tensor& y,
                     const Tensor& dy, Tensor& dx, double scale, int threads, bool overwrite);

/// int64 indices (shape `out_shape`) of the maxima of x along the plan's one
/// reduced axis: the first (or, with `last`, the last) of equal maxima; NaN
/// counts as the largest value. x: float32, float64, int8, uint8 or int64.
Tensor argmax_forward(const ReducePlan& plan, const Tensor& x, const Shape& out_shape, bool last,
                      int threads);

}  // namespace nodeflow
