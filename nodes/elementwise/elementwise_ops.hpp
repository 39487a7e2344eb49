#pragma once
// Registration of the elementwise ops (ONNX semantics, latest opset; each
// op's .cpp has its node and its register_<op>):
//
// Broadcasting (numpy, multidirectional; docs/operators.md, "Broadcasting"):
// inputs of one dtype (Pow: the exponent's may differ), output of the
// broadcast shape and the first input's dtype; each input's gradient is the
// local one summed over the axes it was broadcast along. Shapes that do not
// broadcast are ShapeMismatch at load, naming the inputs and the axis.
// Integers wrap around (two's complement) instead of overflowing.
//
// Unary: Y has X's shape and dtype; IEEE results for the float ones (no
// error for log(0), sqrt(-1), 1/0).
//
// float16 and bfloat16 are computed in float32. An ONNX-forbidden dtype is
// UnsupportedDType naming the op, the input and the dtype. backward adds (+=)
// into the wanted input gradients, scaled by BackwardContext::scale_for(k).
namespace nodeflow {

class OpRegistry;

/// Add-14, Sub-14, Mul-14: A (op) B, every numeric dtype.
void register_add(OpRegistry& registry);
void register_sub(OpRegistry& registry);
void register_mul(OpRegistry& registry);
/// Div-14: A / B, every numeric dtype; integers truncate toward zero and an
/// integer zero divisor is a RunError at run time (float: IEEE inf/nan).
void register_div(OpRegistry& registry);
/// Pow-15: X ^ Y, X float or int64, Y any numeric dtype (converted to X's);
/// gradients for X and a float Y, dY = Z * log(X) with 0 where Z = 0.
void register_pow(OpRegistry& registry);
/// Max-13, Min-13 (every numeric dtype; NaN propagates), Sum-13, Mean-13
/// (float dtypes): 1 to n inputs. Max/Min ties split the gradient equally.
void register_max(OpRegistry& registry);
void register_min(OpRegistry& registry);
void register_sum(OpRegistry& registry);
void register_mean(OpRegistry& registry);
/// PRelu-16 (nodes/activations/prelu.cpp): X where X >= 0, slope * X below;
/// slope broadcasts to X's shape (unidirectional; ShapeMismatch otherwise);
/// float dtypes and int64. dX = slope * dY at X <= 0; slope's gradient is
/// dY * X over X <= 0, summed to slope's shape.
void register_prelu(OpRegistry& registry);
/// Unary, X -> Y: Neg-13 (signed dtypes), Abs-13 (every numeric dtype;
/// Abs'(0) = 0), Exp-13, Log-13, Sqrt-13, Reciprocal-13 (float dtypes),
/// Erf-13 (every numeric dtype), Identity-21 (any dtype; Y shares X's buffer).
void register_neg(OpRegistry& registry);
void register_abs(OpRegistry& registry);
void register_exp(OpRegistry& registry);
void register_log(OpRegistry& registry);
void register_sqrt(OpRegistry& registry);
void register_reciprocal(OpRegistry& registry);
void register_erf(OpRegistry& registry);
void register_identity(OpRegistry& registry);

}  // namespace nodeflow
