#pragma once
// Resize's geometry (ONNX Resize-19): the attributes read once, the constant
// inputs roi/scales/sizes checked, each axis's output length and scale, and
// per output index the input elements it samples with their weights. Tested
// on its own (tests/unit/nodes/shape/test_resize_geometry.cpp).
#include <cstdint>
#include <vector>

#include "core/attributes.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

enum class ResizeMode { Nearest, Linear };
enum class ResizeCoordinates { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfCropAndResize };
enum class ResizeNearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class ResizeAspect { Stretch, NotLarger, NotSmaller };

struct ResizeAttributes {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  ResizeAspect aspect = ResizeAspect::Stretch;
  double extrapolation_value = 0;
  std::vector<std::int64_t> axes;  ///< as given; empty: every axis

  /// From the node's checked attributes.
  static ResizeAttributes from(const Attributes& attributes);
};

/// The values of the constant inputs; an absent or empty tensor gives an empty list.
struct ResizeRequest {
  std::vector<double> roi;
  std::vector<double> scales;
  std::vector<std::int64_t> sizes;
};

/// Reads and checks roi (1), scales (2), sizes (3) (nullptr: absent). Throws
/// InvalidAttribute "inputs: both scales and sizes are given (only one may
/// be)", or when neither is, or for a scale that is not a positive finite
/// number, or a negative size.
ResizeRequest read_resize_request(const Tensor* roi, const Tensor* scales, const Tensor* sizes);

/// One axis of X: its input and output lengths (kDynamicDim when not known
/// yet), the scale its coordinates use and its roi (tf_crop_and_resize).
struct ResizeAxis {
  std::int64_t in = 0;
  std::int64_t out = 0;
  double scale = 1;  ///< NaN when it depends on a length not known yet
  double roi_start = 0;
  double roi_end = 1;
};

/// Every axis of X (shape may hold dynamic dimensions): a given scale is used
/// as it is and out = floor(in * scale); given sizes set out (scaled by one
/// common factor under keep_aspect_ratio_policy not_larger/not_smaller) and
/// scale = out / in. Throws InvalidAttribute for axes outside [-r, r-1] or
/// repeated, scales/sizes/roi of the wrong length, an output length over
/// 2^53, or an empty input axis resized to a non-empty one.
std::vector<ResizeAxis> resize_axes(const ResizeAttributes& attributes, const ResizeRequest& request,
                                    const Shape& x);

/// Where output index j of one axis reads: the elements i0 and i1 of the
/// input axis with weights 1 - w1 and w1 (nearest: i1 == i0, w1 == 0), or
/// nothing (valid 0: tf_crop_and_resize outside the input, the output is
/// extrapolation_value).
struct ResizeTap {
  std::int64_t i0 = 0;
  std::int64_t i1 = 0;
  double w1 = 0;
  bool valid = true;
};

/// The taps of one static axis (out entries).
std::vector<ResizeTap> resize_taps(const ResizeAttributes& attributes, const ResizeAxis& axis);

/// True when the taps copy the input axis unchanged (the axis needs no pass).
bool is_identity(const std::vector<ResizeTap>& taps, std::int64_t in);

}  // namespace nodeflow
