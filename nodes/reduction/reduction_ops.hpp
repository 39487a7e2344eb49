#pragma once
// Registration of the reductions (ONNX semantics, opset 22): ReduceSum-13,
// ReduceMean-18, ReduceProd-18, ReduceMax-20, ReduceMin-20, ReduceL2-18,
// ReduceSumSquare-18, ReduceLogSumExp-18 and ArgMax-13.
//
// Reduce*: input `data` of any rank (0 too) and the optional `axes`, a 1-D
// int64 non-trainable initializer (each axis in [-r, r-1], no repeats;
// otherwise InvalidAttribute naming input 1 and the values). Absent or empty
// axes reduce every axis, or none with noop_with_empty_axes = 1 (the elements
// are still mapped: ReduceSumSquare squares). keepdims (default 1) keeps the
// reduced axes with length 1; reducing every axis with keepdims 0 gives a
// rank-0 output. dtypes: float32, float64, float16, bfloat16 (float16 and
// bfloat16 accumulate in float32) and int64, plus int8 and uint8 for
// ReduceMax/ReduceMin; any other is UnsupportedDType naming the op and dtype.
// int64 sums and products wrap; integer Mean, L2 and LogSumExp truncate toward
// zero. An empty reduced set gives 0 (Sum, SumSquare, L2), 1 (Prod), NaN
// (Mean), -inf (Max, LogSumExp), +inf (Min). Gradients for the float dtypes
// (docs/operators.md, gradient conventions):
//  - ReduceMax/ReduceMin: split equally among the tied extremes of a slice;
//  - ReduceProd: product of the other elements, exact with zeros (no division
//    by zero): with two zeros in a slice its gradient is 0;
//  - ReduceL2: x / norm, 0 where the norm is 0;
//  - ReduceLogSumExp: softmax of the slice; finite for large inputs (the
//    slice's maximum is subtracted first).
//
// ArgMax: axis (default 0, in [-r, r-1]), keepdims (default 1),
// select_last_index (default 0: the first of equal maxima; NaN counts as the
// largest); int64 output; data of rank >= 1 with a nonempty axis
// (ShapeMismatch otherwise), float dtypes, int8, uint8, int64; not
// differentiable.
namespace nodeflow {

class OpRegistry;

void register_reduce_sum(OpRegistry& registry);
void register_reduce_mean(OpRegistry& registry);
void register_reduce_prod(OpRegistry& registry);
void register_reduce_max(OpRegistry& registry);
void register_reduce_min(OpRegistry& registry);
void register_reduce_l2(OpRegistry& registry);
void register_reduce_sum_square(OpRegistry& registry);
void register_reduce_log_sum_exp(OpRegistry& registry);
void register_argmax(OpRegistry& registry);

}  // namespace nodeflow
