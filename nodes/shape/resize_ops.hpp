#pragma once
// Registration of Resize (ONNX Resize-19, the latest in opset 22).
namespace nodeflow {

class OpRegistry;

/// Resize-19: X of any rank and graph dtype; roi, scales (float32), sizes
/// (int64) constant initializers, exactly one of scales and sizes given
/// (else InvalidAttribute naming both). mode nearest (nearest_mode
/// round_prefer_floor/round_prefer_ceil/floor/ceil) or linear (N-linear,
/// separable, over every resized axis; int8/uint8/int64 rounded to nearest);
/// mode cubic and antialias 1 are refused at load. Every
/// coordinate_transformation_mode (tf_crop_and_resize with roi and
/// extrapolation_value), axes, keep_aspect_ratio_policy. A given scale is used
/// as it is, out = floor(in * scale). Gradient for float X: nearest sends each
/// output gradient to the element it copied, linear spreads it with the
/// interpolation weights.
void register_resize(OpRegistry& registry);

}  // namespace nodeflow
