#include "nodes/conv/conv_geometry.hpp"

#include <string>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

// Lists of one value (pads: two) per spatial axis of X, checked when X's rank
// is known (conv_geometry).
AttrSpec ints_spec(const std::string& name, std::int64_t min, std::size_t per_axis,
                   const std::string& doc) {
  AttrSpec s;
  s.name = name;
  s.kind = AttrKind::Ints;
  s.min = min;
  s.max = kMaxConvAttribute;
  s.length = ListLength{"", per_axis, per_axis == 1 ? "one per spatial axis of X"
                                                    : "begin and end per spatial axis of X"};
  s.doc = doc;
  return s;
}

std::string list(const std::vector<std::int64_t>& v) { return to_string(AttrValue{v}); }

std::vector<std::int64_t> list_or_empty(const Attributes& attrs, const std::string& name) {
  return optional_ints(attrs, name).value_or(std::vector<std::int64_t>{});
}

}  // namespace

std::vector<AttrSpec> conv_attribute_specs() {
  AttrSpec auto_pad;
  auto_pad.name = "auto_pad";
  auto_pad.kind = AttrKind::String;
  auto_pad.default_value = AttrValue{std::string("NOTSET")};
  auto_pad.allowed = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  auto_pad.doc = "NOTSET uses pads; SAME_UPPER/SAME_LOWER give out = ceil(in / stride) "
                 "(the odd pad at the end / begin); VALID pads nothing";
  AttrSpec group;
  group.name = "group";
  group.kind = AttrKind::Int;
  group.default_value = AttrValue{std::int64_t{1}};
  group.min = 1;
  group.max = kMaxConvAttribute;
  group.doc = "channel groups: C and M are divisible by it; W is M x C/group x k1..kn";
  return {auto_pad,
          ints_spec("dilations", 1, 1, "spacing of kernel taps per spatial axis (default all 1)"),
          group,
          ints_spec("kernel_shape", 1, 1, "kernel size per spatial axis; default: W's spatial dims"),
          ints_spec("pads", 0, 2, "[x1_begin, x2_begin, ..., x1_end, x2_end, ...] (default all 0)"),
          ints_spec("strides", 1, 1, "step per spatial axis (default all 1)")};
}

void check_conv_attributes(const Attributes& attrs) {
  const std::vector<std::int64_t> pads = list_or_empty(attrs, "pads");
  const AutoPad auto_pad = parse_auto_pad(attr_string(attrs, "auto_pad"));
  if (!pads.empty() && auto_pad != AutoPad::NotSet)
    throw InvalidAttribute("attributes.pads: pads " + list(pads) + " cannot be combined with auto_pad " +
                           auto_pad_name(auto_pad) + " (use auto_pad NOTSET)");
  if (pads.size() % 2 != 0)
    throw InvalidAttribute("attributes.pads: expected 2 values per spatial axis (begins, then ends), got " +
                           list(pads));
  // Lists that are given must agree on the spatial rank.
  std::size_t rank = 0;
  std::string first;
  auto agree = [&](const char* name, std::size_t n) {
    if (n == 0) return;
    if (rank == 0) {
      rank = n;
      first = name;
    } else if (n != rank) {
      throw InvalidAttribute(std::string("attributes.") + name + ": has " + std::to_string(n) +
                             " spatial axes but " + first + " has " + std::to_string(rank));
    }
  };
  agree("kernel_shape", list_or_empty(attrs, "kernel_shape").size());
  agree("strides", list_or_empty(attrs, "strides").size());
  agree("dilations", list_or_empty(attrs, "dilations").size());
  agree("pads", pads.size() / 2);
}

ConvAttributes parse_conv_attributes(const Attributes& attrs) {
  ConvAttributes a;
  a.auto_pad = parse_auto_pad(attr_string(attrs, "auto_pad"));
  a.group = attr_int(attrs, "group");
  a.kernel_shape = list_or_empty(attrs, "kernel_shape");
  a.strides = list_or_empty(attrs, "strides");
  a.dilations = list_or_empty(attrs, "dilations");
  a.pads = list_or_empty(attrs, "pads");
  return a;
}

std::int64_t ConvGeometry::kernel_size() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.kernel;
  return n;
}

std::int64_t ConvGeometry::input_plane() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.in;
  return n;
}

std::int64_t ConvGeometry::output_plane() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.out;
  return n;
}

Shape ConvGeometry::output_shape() const {
  Shape s{batch, out_channels};
  for (const auto& a : axes) s.push_back(a.out);
  return s;
}

ConvGeometry conv_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w) {
  if (x.size() < 3)
    throw ShapeMismatch("input 0 (X) has rank " + std::to_string(x.size()) + " (shape " + to_string(x) +
                        "); Conv needs rank >= 3 (N x C x D1 ...)");
  if (w.size() != x.size())
    throw ShapeMismatch("input 1 (W) has shape " + to_string(w) + " but X has shape " + to_string(x) +
                        "; W needs X's rank (M x C/group x k1 ...)");
  const std::size_t spatial = x.size() - 2;
  auto check_length = [&](const char* name, std::size_t n, std::size_t want) {
    if (n != 0 && n != want)
      throw InvalidAttribute(std::string("attributes.") + name + ": expected " + std::to_string(want) +
                             " values for " + std::to_string(spatial) + " spatial axes of X " +
                             to_string(x) + ", got " + std::to_string(n));
  };
  check_length("kernel_shape", attrs.kernel_shape.size(), spatial);
  check_length("strides", attrs.strides.size(), spatial);
  check_length("dilations", attrs.dilations.size(), spatial);
  check_length("pads", attrs.pads.size(), 2 * spatial);

  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.out_channels = w[0];
  g.group = attrs.group;
  if (g.out_channels != kDynamicDim && g.out_channels % g.group != 0)
    throw ShapeMismatch("input 1 (W) has " + std::to_string(g.out_channels) +
                        " output channels (axis 0 of " + to_string(w) +
                        "), not divisible by group " + std::to_string(g.group));
  if (g.in_channels != kDynamicDim && w[1] != kDynamicDim && g.in_channels != w[1] * g.group)
    throw ShapeMismatch("input 0 (X) has " + std::to_string(g.in_channels) +
                        " channels but W " + to_string(w) + " with group " + std::to_string(g.group) +
                        " needs " + std::to_string(w[1] * g.group) + " (W axis 1 times group)");
  for (std::size_t i = 0; i < spatial; ++i) {
    WindowAxis axis;
    axis.kernel = w[2 + i];
    if (!attrs.kernel_shape.empty()) {
      const std::int64_t k = attrs.kernel_shape[i];
      if (axis.kernel != kDynamicDim && axis.kernel != k)
        throw ShapeMismatch("attributes.kernel_shape: " + to_string(AttrValue{attrs.kernel_shape}) +
                            " does not match the kernel of W " + to_string(w) + " (axis " +
                            std::to_string(2 + i) + ")");
      axis.kernel = k;
    }
    if (axis.kernel == 0)
      throw ShapeMismatch("input 1 (W) has an empty kernel (axis " + std::to_string(2 + i) + " of " +
                          to_string(w) + ")");
    if (!attrs.strides.empty()) axis.stride = attrs.strides[i];
    if (!attrs.dilations.empty()) axis.dilation = attrs.dilations[i];
    if (!attrs.pads.empty()) {
      axis.pad_begin = attrs.pads[i];
      axis.pad_end = attrs.pads[spatial + i];
    }
    axis = resolve_window_axis(axis, x[2 + i], {attrs.auto_pad, false, "convolution"});
    if (axis.out != kDynamicDim && axis.out < 1)
      throw ShapeMismatch("axis " + std::to_string(2 + i) + ": kernel extent " +
                          std::to_string(axis.extent()) + " (kernel " + std::to_string(axis.kernel) +
                          ", dilation " + std::to_string(axis.dilation) +
                          ") is larger than the padded input " +
                          std::to_string(axis.in + axis.pad_begin + axis.pad_end) +
                          " (input " + std::to_string(axis.in) + ", pads " +
                          std::to_string(axis.pad_begin) + " + " + std::to_string(axis.pad_end) + ")");
    g.axes.push_back(axis);
  }
  return g;
}

}  // namespace nodeflow
