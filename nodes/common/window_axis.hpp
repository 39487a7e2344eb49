#pragma once
// The sliding window along one spatial axis: the one definition of the window
// arithmetic that every windowed op shares (ONNX AveragePool-22, MaxPool-22,
// LpPool-22, their Global forms, MaxUnpool-22, Conv-22): auto_pad, the output
// size (floor, or ceil with the last-window rule), the pads SAME_UPPER /
// SAME_LOWER / VALID imply, and which taps of a window fall inside the input.
// The rules are docs/pooling.md "Output size"; Conv takes them without
// ceil_mode. The checks that are an op's own (pooling's "every window holds
// an input element", Conv's kernel against W) stay with the op.
//
// Notation: in, out input and output size; k kernel, s stride, d dilation,
// pb / pe pad at the begin / end; ext = d*(k-1) + 1, the span of one window.
// Tap t of output o sits at input position o*s - pb + t*d.
#include <cstdint>
#include <string>

#include "core/shape.hpp"

namespace nodeflow {

/// ONNX auto_pad. SAME_UPPER/SAME_LOWER: the pads that make out = ceil(in / s)
/// (resolve_window_axis); VALID: no pads; NOTSET: the explicit `pads`.
enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// "NOTSET", "SAME_UPPER", "SAME_LOWER" or "VALID".
const char* auto_pad_name(AutoPad a);
/// The AutoPad of one of the four names (validate_attributes admits only
/// those; anything else reads as NOTSET).
AutoPad parse_auto_pad(const std::string& s);

/// floor(a / b) and ceil(a / b) for b > 0 and any sign of a (C++ division
/// truncates toward zero).
std::int64_t floor_div(std::int64_t a, std::int64_t b);
std::int64_t ceil_div(std::int64_t a, std::int64_t b);

/// Indices [begin, end) of taps or outputs; empty when end <= begin.
struct IndexRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;

  std::int64_t size() const { return end > begin ? end - begin : 0; }
  bool empty() const { return end <= begin; }
};

/// One spatial axis of a window.
///
/// As parsed, `pad_begin`/`pad_end` are the explicit pads and `in`/`out` are
/// unknown (kDynamicDim); resolve_window_axis() fills in the input size, the
/// pads auto_pad implies and the output size.
struct WindowAxis {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t pad_begin = 0;
  std::int64_t pad_end = 0;
  std::int64_t in = kDynamicDim;
  std::int64_t out = kDynamicDim;

  /// ext: span of one window in input positions, dilation*(kernel-1) + 1.
  std::int64_t extent() const { return dilation * (kernel - 1) + 1; }
  /// Input position (may lie in the pads, < 0 or >= in) of tap `tap` of output `o`.
  std::int64_t position(std::int64_t o, std::int64_t tap) const {
    return o * stride - pad_begin + tap * dilation;
  }

  /// The taps of output o's window inside the input, 0 <= position < in (they
  /// are consecutive: positions rise with the tap). Empty when the window
  /// holds no input element. The axis must be resolved.
  IndexRange valid_taps(std::int64_t o) const;
  /// The taps of output o's window inside input + pads, -pb <= position <
  /// in + pe: AveragePool's divisor with count_include_pad. Never the
  /// positions past the end pad that ceil_mode creates.
  IndexRange padded_taps(std::int64_t o) const;
  /// The outputs whose tap `tap` lies inside the input: the adjoint view that
  /// backward passes walk.
  IndexRange outputs_with_valid_tap(std::int64_t tap) const;
};

/// What an op's attributes say about its windows.
struct WindowRule {
  AutoPad auto_pad = AutoPad::NotSet;
  /// Pooling's ceil_mode (Conv has none): no effect with SAME_UPPER/SAME_LOWER.
  bool ceil_mode = false;
  /// Names the op family in the overflow error: "pooling size overflows int64".
  const char* family = "window";
};

/// The one output-size rule. `axis` carries kernel, stride, dilation and the
/// explicit pads; returns it with `in` = in, the pads auto_pad implies and `out`:
///  - NOTSET, floor: out = floor((in + pb + pe - ext) / s) + 1;
///  - NOTSET, ceil_mode: out = ceil((in + pb + pe - ext) / s) + 1, then out -= 1
///    if the last window would start at or past in + pb (a window never starts
///    in the end padding: PyTorch, the current ONNX reference);
///  - VALID: as NOTSET with pb = pe = 0;
///  - SAME_UPPER/SAME_LOWER: out = ceil(in / s); total pad P = max(0,
///    (out-1)*s + ext - in), floor(P/2) at the begin for SAME_UPPER, ceil(P/2)
///    for SAME_LOWER, the rest at the end.
/// `out` may come out < 1: the callers report that in their op's words. An
/// input or kernel of kDynamicDim gives out = kDynamicDim (and the pads of
/// SAME_* stay unknown: the explicit ones are kept).
/// Throws ShapeMismatch("<family> size overflows int64") when the extent,
/// in + pb + pe, (out-1)*s + ext or a window's start leaves int64 (sizes and
/// attributes come from files); a resolved axis thus has every tap range
/// computable.
WindowAxis resolve_window_axis(WindowAxis axis, std::int64_t in, const WindowRule& rule);

/// The inverse of the floor rule: (in-1)*s + ext - pb - pe, the input size
/// whose windows give `in` outputs (MaxUnpool's default output size;
/// ConvTranspose's before its output_padding). Throws ShapeMismatch("<family>
/// size overflows int64").
std::int64_t transposed_size(const WindowAxis& axis, std::int64_t in, const char* family);

/// ConvTranspose's axis (ONNX ConvTranspose-22) as the Conv axis it is the
/// adjoint of: `axis` carries kernel, stride, dilation and the explicit pads;
/// the result has `out` = x (the transposed input size), `in` = the
/// transposed output size and the pads:
///  - an output_size (ConvTranspose's output_shape; kDynamicDim: none given)
///    or, with SAME_UPPER/SAME_LOWER, output_size = x * s: the total padding
///    P = s*(x-1) + output_padding + ext - output_size, floor(P/2) at the
///    begin for SAME_UPPER and P - floor(P/2) otherwise (ONNX's rule, the
///    odd pad at the begin also for NOTSET and VALID), `in` = output_size;
///  - else in = s*(x-1) + output_padding + ext - pb - pe (VALID: no pads).
/// P may come out < 0 and `in` < 1: the caller reports that in its op's
/// words. x or kernel kDynamicDim: `in` is output_size (kDynamicDim if none).
/// Throws ShapeMismatch("<family> size overflows int64") as
/// resolve_window_axis does.
WindowAxis resolve_transposed_axis(WindowAxis axis, std::int64_t x, std::int64_t output_padding,
                                   std::int64_t output_size, const WindowRule& rule);

}  // namespace nodeflow
