#pragma once
// The attributes of Conv and ConvTranspose, parsed and checked once, and the
// geometry derived from them (ONNX Conv-22, ConvTranspose-22): used by the
// nodes' shape inference, forward, backward and schemas. A ConvTranspose is
// described by the Conv it is the adjoint of (conv_transpose_geometry).
//
// Axis numbers in messages are tensor axes: the first spatial axis is axis 2.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/attributes.hpp"
#include "core/shape.hpp"
#include "nodes/common/window_axis.hpp"

namespace nodeflow {

/// Largest kernel_shape, strides, dilations, pads or group accepted (int32
/// range): keeps every size computation inside int64.
inline constexpr std::int64_t kMaxConvAttribute = 2147483647;

/// The attributes of one Conv or ConvTranspose node as given (lists empty
/// when absent; output_padding and output_shape are ConvTranspose's).
struct ConvAttributes {
  AutoPad auto_pad = AutoPad::NotSet;
  std::int64_t group = 1;
  std::vector<std::int64_t> kernel_shape;
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> dilations;
  std::vector<std::int64_t> pads;  ///< [x1_begin, x2_begin, ..., x1_end, x2_end, ...]
  std::vector<std::int64_t> output_padding;
  std::vector<std::int64_t> output_shape;
};

/// auto_pad, dilations, group, kernel_shape, pads, strides with their ONNX
/// defaults, ranges and lengths (one value, pads two, per spatial axis of X:
/// checked by conv_geometry, when X's rank is known).
std::vector<AttrSpec> conv_attribute_specs();

/// ConvTranspose's: Conv's (group documented for W [C, M/group, k...]) and
/// output_padding, output_shape.
std::vector<AttrSpec> conv_transpose_attribute_specs();

/// The rules the specs cannot state (the schema's check_attributes): pads
/// only with auto_pad NOTSET, an even pads length, the lists given agreeing
/// on the spatial rank. Throws InvalidAttribute("attributes.<name>: ...").
void check_conv_attributes(const Attributes& attrs);

/// Conv's rules and, per axis, output_padding smaller than the stride or the
/// dilation (ONNX ConvTranspose-22, as PyTorch).
void check_conv_transpose_attributes(const Attributes& attrs);

/// Reads attributes that checked_attributes returned for Conv's or
/// ConvTranspose's schema (a node's NodeConfig): no check or default of its own.
ConvAttributes parse_conv_attributes(const Attributes& attrs);

/// Geometry of one Conv: X is N x C x D1..Dn, W is M x C/group x k1..kn.
struct ConvGeometry {
  std::int64_t batch = kDynamicDim;
  std::int64_t in_channels = kDynamicDim;
  std::int64_t out_channels = kDynamicDim;
  std::int64_t group = 1;
  /// Resolved (resolve_window_axis, no ceil_mode); the kernel comes from W's
  /// shape. out is kDynamicDim where D or k is.
  std::vector<WindowAxis> axes;

  std::int64_t kernel_size() const;   ///< k1 * ... * kn
  std::int64_t input_plane() const;   ///< D1 * ... * Dn
  std::int64_t output_plane() const;  ///< O1 * ... * On
  Shape input_shape() const;          ///< N x C x D1..Dn
  Shape output_shape() const;         ///< N x M x O1..On
};

/// Checks ranks, kernel_shape against W, channels against group and W, and
/// every output size >= 1 where known. Shapes may hold dynamic dimensions (the
/// result then does too). Throws ShapeMismatch or InvalidAttribute naming the
/// input, the axis and the values; ShapeMismatch("convolution size overflows
/// int64") for sizes beyond int64.
ConvGeometry conv_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w);

/// The Conv whose adjoint is the ConvTranspose of X [N, C, D1..Dn] and W
/// [C, M/group, k1..kn]: its input is the ConvTranspose's output Y [N, M,
/// O1..On] (input_shape()), its output X (output_shape()), its weight W.
/// O and the pads come from resolve_transposed_axis. Checks as conv_geometry
/// does, and refuses group not dividing C, an empty axis of X, an
/// output_shape (or SAME_* output, in * stride) larger than the full output
/// (negative total padding) and an output size < 1.
ConvGeometry conv_transpose_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w);

}  // namespace nodeflow
