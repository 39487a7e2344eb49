#pragma once
// One spatial axis of a sliding window (ONNX Conv-22, AveragePool-22,
// MaxPool-22, LpPool-22 share it) and ONNX's auto_pad: the one definition
// that pool_geometry.hpp and conv_geometry.hpp both use.
#include <cstdint>
#include <string>

#include "core/shape.hpp"

namespace nodeflow {

/// ONNX auto_pad. SAME_UPPER/SAME_LOWER: out = ceil(in / s), total pad
/// P = max(0, (out-1)*s + ext - in), SAME_UPPER puts floor(P/2) at the begin,
/// SAME_LOWER ceil(P/2). VALID: no pads. NOTSET: the explicit `pads`.
enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// "NOTSET", "SAME_UPPER", "SAME_LOWER" or "VALID".
const char* auto_pad_name(AutoPad a);
/// The AutoPad of one of the four names (validate_attributes admits only
/// those; anything else reads as NOTSET).
AutoPad parse_auto_pad(const std::string& s);

/// One spatial axis of a window.
///
/// Before resolution (as parsed) `pad_begin`/`pad_end` are the explicit pads
/// and `input`/`output` are unknown (kDynamicDim). The ops' resolve functions
/// fill in the input size, the pads auto_pad implies and the output size.
struct WindowAxis {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t pad_begin = 0;
  std::int64_t pad_end = 0;
  std::int64_t input = kDynamicDim;
  std::int64_t output = kDynamicDim;

  /// Span of one window in input positions: dilation*(kernel-1) + 1.
  std::int64_t extent() const { return dilation * (kernel - 1) + 1; }
  /// Input position (may lie in the pads, < 0 or >= input) of tap `tap` of window `o`.
  std::int64_t position(std::int64_t o, std::int64_t tap) const {
    return o * stride - pad_begin + tap * dilation;
  }
};

}  // namespace nodeflow
