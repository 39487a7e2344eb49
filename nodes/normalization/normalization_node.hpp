#pragma once
// What the LayerNormalization, InstanceNormalization and GroupNormalization
// nodes share around normalize_rows: the dtype the statistics are computed in,
// the training-mode saved state and the backward that reads it.
#include <cstdint>
#include <string>

#include "core/attributes.hpp"
#include "core/node.hpp"
#include "nodes/normalization/normalize_rows.hpp"

namespace nodeflow {

/// ONNX's stash_type 1 (the only one nodeflow takes): the statistics of every
/// input dtype, float64 included, are computed in float32 (docs/operators.md,
/// "Choices where ONNX is silent").
inline constexpr std::int64_t kStashFloat32 = 1;

/// The stash_type attribute of LayerNormalization and GroupNormalization
/// (default and only value 1) and their epsilon (default 1e-5, >= 0).
AttrSpec stash_type_spec(int since_version);
AttrSpec epsilon_spec();

/// Throws UnsupportedDType unless input k is a float dtype equal to input 0's
/// (named x_name).
void check_normalization_input(const std::string& op, std::size_t k, const std::string& name, DType dtype,
                               const std::string& x_name, DType x_dtype);

/// Throws ShapeMismatch unless input k has shape [C] (a dynamic C passes).
void check_channel_parameter(std::size_t k, const std::string& name, const Shape& shape, std::int64_t channels);

/// The forward of a normalization node over inputs[0] seen as `layout`, with
/// scale and bias already laid out as [params] in `compute` (bias may be
/// empty): y is in X's dtype, mean and inv_std in `compute`, shape [rows].
/// In training mode saves x, mean, inv_std and scale for normalization_backward.
RowStatistics normalization_forward(const ForwardContext& ctx, const RowLayout& layout, DType compute,
                                    const Tensor& scale, const Tensor& bias, double epsilon);

/// The backward matching normalization_forward: adds the X gradient into
/// ctx.grad_inputs[0] (when wanted; overwrites it when ctx.overwrites(0)) and returns the scale and bias gradients
/// over [params] in the compute dtype (empty when `want_scale`/`want_bias`
/// is false). With `statistics_shape` (LayerNormalization's Mean and
/// InvStdDev outputs, `rows` elements), output gradients 1 and 2 are theirs.
struct ParameterGradients {
  Tensor scale;
  Tensor bias;
};
ParameterGradients normalization_backward(const BackwardContext& ctx, const std::string& op, const RowLayout& layout,
                                          bool want_scale, bool want_bias, const Shape* statistics_shape = nullptr);

}  // namespace nodeflow
