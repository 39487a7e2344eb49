#include "nodes/shape/resize_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {
namespace {

// Output lengths stay exact in double arithmetic and far inside int64.
constexpr double kMaxLength = 9007199254740992.0;  // 2^53

template <typename E, std::size_t N>
E pick(const std::string& value, const char* const (&names)[N], const E (&values)[N]) {
  for (std::size_t i = 0; i < N; ++i)
    if (value == names[i]) return values[i];
  return values[0];  // unreachable: the schema allows only these names
}

std::vector<double> float_values(const Tensor* t) {
  std::vector<double> v;
  if (!t || t->empty()) return v;
  visit_float_dtype(t->dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (const T x : t->values<T>()) v.push_back(static_cast<double>(x));
  });
  return v;
}

std::string axis_words(std::size_t d) { return "axis " + std::to_string(d); }

// The input coordinate output index j maps to (ONNX coordinate_transformation_mode).
double source_coordinate(ResizeCoordinates mode, double j, const ResizeAxis& a) {
  const double in = static_cast<double>(a.in), out = static_cast<double>(a.out);
  switch (mode) {
    case ResizeCoordinates::HalfPixel: return (j + 0.5) / a.scale - 0.5;
    case ResizeCoordinates::HalfPixelSymmetric: {
      const double adjustment = out / (a.scale * in);
      const double offset = in / 2 * (1 - adjustment);
      return offset + (j + 0.5) / a.scale - 0.5;
    }
    case ResizeCoordinates::PytorchHalfPixel: return a.out > 1 ? (j + 0.5) / a.scale - 0.5 : 0.0;
    case ResizeCoordinates::AlignCorners: return a.out > 1 ? j * (in - 1) / (out - 1) : 0.0;
    case ResizeCoordinates::Asymmetric: return j / a.scale;
    case ResizeCoordinates::TfCropAndResize:
      return a.out > 1 ? a.roi_start * (in - 1) + j * (a.roi_end - a.roi_start) * (in - 1) / (out - 1)
                       : 0.5 * (a.roi_start + a.roi_end) * (in - 1);
  }
  return 0;
}

double nearest_index(ResizeNearest mode, double x) {
  const double f = std::floor(x);
  switch (mode) {
    case ResizeNearest::RoundPreferFloor: return x == f + 0.5 ? f : std::round(x);
    case ResizeNearest::RoundPreferCeil: return x == f + 0.5 ? f + 1 : std::round(x);
    case ResizeNearest::Floor: return f;
    case ResizeNearest::Ceil: return std::ceil(x);
  }
  return f;
}

}  // namespace

ResizeAttributes ResizeAttributes::from(const Attributes& a) {
  static const char* const kModes[] = {"nearest", "linear"};
  static const ResizeMode kModeValues[] = {ResizeMode::Nearest, ResizeMode::Linear};
  static const char* const kCoordinates[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                             "align_corners", "asymmetric", "tf_crop_and_resize"};
  static const ResizeCoordinates kCoordinateValues[] = {
      ResizeCoordinates::HalfPixel,    ResizeCoordinates::HalfPixelSymmetric, ResizeCoordinates::PytorchHalfPixel,
      ResizeCoordinates::AlignCorners, ResizeCoordinates::Asymmetric,         ResizeCoordinates::TfCropAndResize};
  static const char* const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  static const ResizeNearest kNearestValues[] = {ResizeNearest::RoundPreferFloor, ResizeNearest::RoundPreferCeil,
                                                 ResizeNearest::Floor, ResizeNearest::Ceil};
  static const char* const kAspect[] = {"stretch", "not_larger", "not_smaller"};
  static const ResizeAspect kAspectValues[] = {ResizeAspect::Stretch, ResizeAspect::NotLarger,
                                               ResizeAspect::NotSmaller};
  ResizeAttributes r;
  r.mode = pick(attr_string(a, "mode"), kModes, kModeValues);
  r.coordinates = pick(attr_string(a, "coordinate_transformation_mode"), kCoordinates, kCoordinateValues);
  r.nearest = pick(attr_string(a, "nearest_mode"), kNearest, kNearestValues);
  r.aspect = pick(attr_string(a, "keep_aspect_ratio_policy"), kAspect, kAspectValues);
  r.extrapolation_value = attr_float(a, "extrapolation_value");
  r.axes = optional_ints(a, "axes").value_or(std::vector<std::int64_t>{});
  return r;
}

ResizeRequest read_resize_request(const Tensor* roi, const Tensor* scales, const Tensor* sizes) {
  ResizeRequest r{float_values(roi), float_values(scales), {}};
  if (sizes && !sizes->empty())
    for (const std::int64_t s : sizes->values<std::int64_t>()) r.sizes.push_back(s);
  if (!r.scales.empty() && !r.sizes.empty())
    throw InvalidAttribute("inputs: both scales and sizes are given (only one may be)");
  if (r.scales.empty() && r.sizes.empty())
    throw InvalidAttribute("inputs: Resize needs input 2 (scales) or input 3 (sizes); neither is given");
  for (const double s : r.scales)
    if (!(s > 0) || !std::isfinite(s))
      throw InvalidAttribute("input 2 (scales): " + to_string(AttrValue{s}) + " is not a positive finite scale");
  for (const std::int64_t s : r.sizes)
    if (s < 0) throw InvalidAttribute("input 3 (sizes): " + std::to_string(s) + " is not a length (>= 0)");
  return r;
}

std::vector<ResizeAxis> resize_axes(const ResizeAttributes& attributes, const ResizeRequest& request,
                                    const Shape& x) {
  const std::size_t rank = x.size();
  std::vector<std::size_t> axes;
  for (const std::int64_t a : attributes.axes) {
    const std::size_t d = normalize_axis(a, rank);
    if (std::find(axes.begin(), axes.end(), d) != axes.end())
      throw InvalidAttribute("attributes.axes: axis " + std::to_string(a) + " is given twice");
    axes.push_back(d);
  }
  if (attributes.axes.empty())
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(d);
  const std::size_t given = request.scales.empty() ? request.sizes.size() : request.scales.size();
  if (given != axes.size())
    throw InvalidAttribute(std::string(request.scales.empty() ? "input 3 (sizes)" : "input 2 (scales)") + " has " +
                           std::to_string(given) + " values; it needs one per resized axis (" +
                           std::to_string(axes.size()) + ")");
  if (attributes.coordinates == ResizeCoordinates::TfCropAndResize && !request.roi.empty() &&
      request.roi.size() != 2 * axes.size())
    throw InvalidAttribute("input 1 (roi) has " + std::to_string(request.roi.size()) + " values; it needs " +
                           std::to_string(2 * axes.size()) + " (starts, then ends, one per resized axis)");

  std::vector<ResizeAxis> out(rank);
  for (std::size_t d = 0; d < rank; ++d) out[d] = {x[d], x[d], 1.0, 0.0, 1.0};
  // keep_aspect_ratio_policy: one factor for every resized axis, from the sizes.
  double common = std::numeric_limits<double>::quiet_NaN();
  const bool keep_aspect = !request.sizes.empty() && attributes.aspect != ResizeAspect::Stretch;
  if (keep_aspect) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (x[axes[i]] == kDynamicDim) {
        common = std::numeric_limits<double>::quiet_NaN();
        break;
      }
      const double f = static_cast<double>(request.sizes[i]) / static_cast<double>(x[axes[i]]);
      common = i == 0 ? f : attributes.aspect == ResizeAspect::NotLarger ? std::min(common, f) : std::max(common, f);
    }
  }
  for (std::size_t i = 0; i < axes.size(); ++i) {
    ResizeAxis& a = out[axes[i]];
    if (!request.roi.empty() && attributes.coordinates == ResizeCoordinates::TfCropAndResize) {
      a.roi_start = request.roi[i];
      a.roi_end = request.roi[axes.size() + i];
    }
    double length = 0;
    if (!request.scales.empty()) {
      a.scale = request.scales[i];
      length = std::floor(static_cast<double>(a.in) * a.scale);
    } else if (keep_aspect) {
      a.scale = common;
      length = std::floor(common * static_cast<double>(a.in) + 0.5);
    } else {
      length = static_cast<double>(request.sizes[i]);
      a.scale = a.in == kDynamicDim ? std::numeric_limits<double>::quiet_NaN()
                                    : length / static_cast<double>(a.in);
    }
    if (a.in == kDynamicDim && (!request.scales.empty() || keep_aspect)) {
      a.out = kDynamicDim;
      continue;
    }
    if (!(length <= kMaxLength))
      throw InvalidAttribute(axis_words(axes[i]) + ": the output length " + to_string(AttrValue{length}) +
                             " is too large (at most 2^53)");
    a.out = static_cast<std::int64_t>(length);
    if (a.in == 0 && a.out > 0)
      throw InvalidAttribute(axis_words(axes[i]) + " has length 0 and cannot be resized to " +
                             std::to_string(a.out));
  }
  return out;
}

std::vector<ResizeTap> resize_taps(const ResizeAttributes& attributes, const ResizeAxis& axis) {
  std::vector<ResizeTap> taps(static_cast<std::size_t>(axis.out));
  const double last = static_cast<double>(axis.in - 1);
  for (std::int64_t j = 0; j < axis.out; ++j) {
    ResizeTap& t = taps[static_cast<std::size_t>(j)];
    double x = source_coordinate(attributes.coordinates, static_cast<double>(j), axis);
    if (attributes.coordinates == ResizeCoordinates::TfCropAndResize && !(x >= 0 && x <= last)) {
      t.valid = false;
      continue;
    }
    if (std::isnan(x)) x = 0;  // not reachable with positive finite scales; never cast NaN
    if (attributes.mode == ResizeMode::Nearest) {
      t.i0 = t.i1 = static_cast<std::int64_t>(std::clamp(nearest_index(attributes.nearest, x), 0.0, last));
      continue;
    }
    // Linear: outside [0, in - 1] the edge element (the input extended by its
    // edge values, as ONNX's reference does); exclude_outside changes nothing then.
    const double c = std::clamp(x, 0.0, last);
    t.i0 = static_cast<std::int64_t>(std::floor(c));
    t.i1 = std::min(t.i0 + 1, axis.in - 1);
    t.w1 = c - static_cast<double>(t.i0);
  }
  return taps;
}

bool is_identity(const std::vector<ResizeTap>& taps, std::int64_t in) {
  if (static_cast<std::int64_t>(taps.size()) != in) return false;
  for (std::size_t j = 0; j < taps.size(); ++j)
    if (!taps[j].valid || taps[j].i0 != static_cast<std::int64_t>(j) || taps[j].w1 != 0) return false;
  return true;
}

}  // namespace nodeflow
