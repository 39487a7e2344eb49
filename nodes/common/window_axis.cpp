#include "nodes/common/window_axis.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

// Size arithmetic that refuses to overflow: shapes and attributes come from files.
struct Checked {
  const char* family;

  [[noreturn]] void overflow() const {
    throw ShapeMismatch(std::string(family) + " size overflows int64");
  }
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  std::int64_t mul(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
};

// The indices i in [0, count) with lo <= first + i*step < hi (step > 0).
// No intermediate leaves int64 where hi - first and lo - first do not.
IndexRange indices_within(std::int64_t first, std::int64_t step, std::int64_t count,
                          std::int64_t lo, std::int64_t hi) {
  const std::int64_t begin = first >= lo ? 0 : std::min(count, ceil_div(lo - first, step));
  const std::int64_t end = first >= hi ? 0 : std::min(count, floor_div(hi - 1 - first, step) + 1);
  return {begin, std::max(begin, end)};
}

}  // namespace

const char* auto_pad_name(AutoPad a) {
  switch (a) {
    case AutoPad::SameUpper:
      return "SAME_UPPER";
    case AutoPad::SameLower:
      return "SAME_LOWER";
    case AutoPad::Valid:
      return "VALID";
    case AutoPad::NotSet:
      break;
  }
  return "NOTSET";
}

AutoPad parse_auto_pad(const std::string& s) {
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  return AutoPad::NotSet;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && (a < 0) ? 1 : 0);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + ((a % b != 0) && (a > 0) ? 1 : 0);
}

// A resolved axis has in + pb + pe inside int64 and windows that start
// before it ends, so the differences indices_within takes fit.
IndexRange WindowAxis::valid_taps(std::int64_t o) const {
  return indices_within(position(o, 0), dilation, kernel, 0, in);
}

IndexRange WindowAxis::padded_taps(std::int64_t o) const {
  return indices_within(position(o, 0), dilation, kernel, -pad_begin, in + pad_end);
}

IndexRange WindowAxis::outputs_with_valid_tap(std::int64_t tap) const {
  return indices_within(position(0, tap), stride, out, 0, in);
}

WindowAxis resolve_window_axis(WindowAxis axis, std::int64_t in, const WindowRule& rule) {
  const Checked checked{rule.family};
  axis.in = in;
  if (rule.auto_pad == AutoPad::Valid) axis.pad_begin = axis.pad_end = 0;
  if (in == kDynamicDim || axis.kernel == kDynamicDim) {
    axis.out = kDynamicDim;
    return axis;
  }
  // Conv's kernel comes from W's shape, unbounded by any attribute range.
  const std::int64_t ext = checked.add(checked.mul(axis.dilation, axis.kernel - 1), 1);
  if (rule.auto_pad == AutoPad::SameUpper || rule.auto_pad == AutoPad::SameLower) {
    axis.out = ceil_div(in, axis.stride);
    // (out-1)*s < in, so only adding the extent can overflow; in + P then fits too.
    const std::int64_t total =
        std::max<std::int64_t>(0, checked.add((axis.out - 1) * axis.stride, ext) - in);
    const std::int64_t small = total / 2;
    axis.pad_begin = rule.auto_pad == AutoPad::SameUpper ? small : total - small;
    axis.pad_end = total - axis.pad_begin;
    return axis;
  }
  const std::int64_t span = checked.add(in, checked.add(axis.pad_begin, axis.pad_end)) - ext;
  if (!rule.ceil_mode) {
    axis.out = floor_div(span, axis.stride) + 1;
    return axis;
  }
  axis.out = ceil_div(span, axis.stride) + 1;
  // A window never starts in the end padding (PyTorch, current ONNX reference).
  if (axis.out > 0 && checked.mul(axis.out - 1, axis.stride) >= in + axis.pad_begin) axis.out -= 1;
  return axis;
}

std::int64_t transposed_size(const WindowAxis& axis, std::int64_t in, const char* family) {
  const Checked checked{family};
  return checked.add(checked.mul(in - 1, axis.stride),
                     axis.extent() - axis.pad_begin - axis.pad_end);
}

WindowAxis resolve_transposed_axis(WindowAxis axis, std::int64_t x, std::int64_t output_padding,
                                   std::int64_t output_size, const WindowRule& rule) {
  const Checked checked{rule.family};
  axis.out = x;
  if (rule.auto_pad == AutoPad::Valid) axis.pad_begin = axis.pad_end = 0;
  const bool same = rule.auto_pad == AutoPad::SameUpper || rule.auto_pad == AutoPad::SameLower;
  if (x == kDynamicDim || axis.kernel == kDynamicDim) {
    axis.in = output_size;
    return axis;
  }
  if (same && output_size == kDynamicDim) output_size = checked.mul(x, axis.stride);
  const std::int64_t ext = checked.add(checked.mul(axis.dilation, axis.kernel - 1), 1);
  const std::int64_t full = checked.add(checked.add(checked.mul(x - 1, axis.stride), output_padding), ext);
  if (output_size == kDynamicDim) {
    axis.in = full - axis.pad_begin - axis.pad_end;
    return axis;
  }
  const std::int64_t total = full - output_size;
  const std::int64_t small = floor_div(total, 2);
  axis.pad_begin = rule.auto_pad == AutoPad::SameUpper ? small : total - small;
  axis.pad_end = total - axis.pad_begin;
  axis.in = output_size;
  return axis;
}

}  // namespace nodeflow
