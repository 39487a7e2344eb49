#pragma once
// Registration of the normalizations over parts of a tensor (ONNX semantics,
// latest opset): LayerNormalization-17, InstanceNormalization-22,
// GroupNormalization-21. BatchNormalization is in nodes/layer_ops.hpp.
//
// Each normalises groups of values by their own mean and biased variance,
// y = (x - mean) / sqrt(var + epsilon) * scale + bias, with float32, float64,
// float16 and bfloat16 inputs (all of one dtype); float16 and bfloat16 compute
// in float32, and LayerNormalization and GroupNormalization compute their
// statistics in float32 for every dtype (ONNX stash_type 1, the only one
// taken). Backward adds (+=) the exact gradients of X, scale and bias, the
// statistics being functions of X (docs/operators.md, "Gradient conventions").
namespace nodeflow {

class OpRegistry;

/// LayerNormalization-17: X of any rank r >= 1, normalized over axes
/// [axis, r) (axis in [-r, r-1], default -1; else InvalidAttribute naming
/// axis); Scale and optional B broadcast to X.shape[axis:] (else
/// ShapeMismatch); epsilon 1e-5. Outputs Y (X's shape and dtype) and the
/// optional float32 Mean and InvStdDev, shape X.shape[:axis] + [1]*(r-axis).
void register_layer_normalization(OpRegistry& registry);
/// InstanceNormalization-22: input [N, C, D1..Dn], scale and B [C]; each
/// (n, c) plane normalised on its own (float64 stays float64); epsilon 1e-5.
void register_instance_normalization(OpRegistry& registry);
/// GroupNormalization-21: X [N, C, D1..Dn], scale and bias [C] (per channel);
/// num_groups (required, divides C, else ShapeMismatch) groups of consecutive
/// channels normalised per sample; epsilon 1e-5.
void register_group_normalization(OpRegistry& registry);
/// LRN-13: local response normalization across channels of X [N, C, ...]
/// (rank >= 2, else ShapeMismatch): Y = X / (bias + alpha / size * sum of X^2
/// over the channels [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta;
/// size required (>= 1), alpha 1e-4, beta 0.75, bias 1. Float dtypes,
/// float16/bfloat16 computed in float32; backward gives dX.
void register_lrn(OpRegistry& registry);

}  // namespace nodeflow
