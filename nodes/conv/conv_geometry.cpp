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

std::vector<AttrSpec> conv_transpose_attribute_specs() {
  std::vector<AttrSpec> specs = conv_attribute_specs();
  for (AttrSpec& a : specs)
    if (a.name == "group") a.doc = "channel groups: C and M are divisible by it; W is C x M/group x k1..kn";
  specs.push_back(ints_spec("output_padding", 0, 1,
                            "extra output elements at the end of each spatial axis, each smaller than "
                            "the stride or the dilation (default all 0)"));
  specs.push_back(ints_spec("output_shape", 1, 1,
                            "output size per spatial axis; the pads are then computed from it "
                            "(the odd one at the begin, at the end with SAME_UPPER)"));
  return specs;
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
  agree("output_padding", list_or_empty(attrs, "output_padding").size());
  agree("output_shape", list_or_empty(attrs, "output_shape").size());
}

void check_conv_transpose_attributes(const Attributes& attrs) {
  check_conv_attributes(attrs);
  const std::vector<std::int64_t> padding = list_or_empty(attrs, "output_padding");
  const std::vector<std::int64_t> strides = list_or_empty(attrs, "strides");
  const std::vector<std::int64_t> dilations = list_or_empty(attrs, "dilations");
  for (std::size_t i = 0; i < padding.size(); ++i) {
    const std::int64_t s = strides.empty() ? 1 : strides[i];
    const std::int64_t d = dilations.empty() ? 1 : dilations[i];
    if (padding[i] >= s && padding[i] >= d)
      throw InvalidAttribute("attributes.output_padding: " + list(padding) + " has " +
                             std::to_string(padding[i]) + " on axis " + std::to_string(2 + i) +
                             ", not smaller than the stride " + std::to_string(s) + " or the dilation " +
                             std::to_string(d));
  }
}

ConvAttributes parse_conv_attributes(const Attributes& attrs) {
  ConvAttributes a;
  a.auto_pad = parse_auto_pad(attr_string(attrs, "auto_pad"));
  a.group = attr_int(attrs, "group");
  a.kernel_shape = list_or_empty(attrs, "kernel_shape");
  a.strides = list_or_empty(attrs, "strides");
  a.dilations = list_or_empty(attrs, "dilations");
  a.pads = list_or_empty(attrs, "pads");
  a.output_padding = list_or_empty(attrs, "output_padding");
  a.output_shape = list_or_empty(attrs, "output_shape");
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

Shape ConvGeometry::input_shape() const {
  Shape s{batch, in_channels};
  for (const auto& a : axes) s.push_back(a.in);
  return s;
}

Shape ConvGeometry::output_shape() const {
  Shape s{batch, out_channels};
  for (const auto& a : axes) s.push_back(a.out);
  return s;
}

namespace {

// The spatial axes of X and W as the attributes give them (kernel, stride,
// dilation, explicit pads), not yet resolved: the checks Conv and
// ConvTranspose share. `w_layout` names W's axes in the rank message.
std::vector<WindowAxis> given_axes(const char* op, const char* w_layout, const ConvAttributes& attrs,
                                   const Shape& x, const Shape& w) {
  if (x.size() < 3)
    throw ShapeMismatch("input 0 (X) has rank " + std::to_string(x.size()) + " (shape " + to_string(x) +
                        "); " + op + " needs rank >= 3 (N x C x D1 ...)");
  if (w.size() != x.size())
    throw ShapeMismatch("input 1 (W) has shape " + to_string(w) + " but X has shape " + to_string(x) +
                        "; W needs X's rank (" + w_layout + " x k1 ...)");
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
  check_length("output_padding", attrs.output_padding.size(), spatial);
  check_length("output_shape", attrs.output_shape.size(), spatial);
  std::vector<WindowAxis> axes;
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
    axes.push_back(axis);
  }
  return axes;
}

}  // namespace

ConvGeometry conv_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w) {
  std::vector<WindowAxis> axes = given_axes("Conv", "M x C/group", attrs, x, w);
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
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const WindowAxis axis = resolve_window_axis(axes[i], x[2 + i], {attrs.auto_pad, false, "convolution"});
    // Known sizes, not out != kDynamicDim: an output size of -1 is an error too.
    const bool known = x[2 + i] != kDynamicDim && axis.kernel != kDynamicDim;
    if (known && axis.out < 1)
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

ConvGeometry conv_transpose_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w) {
  std::vector<WindowAxis> axes = given_axes("ConvTranspose", "C x M/group", attrs, x, w);
  ConvGeometry g;
  g.batch = x[0];
  g.out_channels = x[1];
  g.group = attrs.group;
  if (x[1] != kDynamicDim && w[0] != kDynamicDim && x[1] != w[0])
    throw ShapeMismatch("input 1 (W) has shape " + to_string(w) + " but X " + to_string(x) + " has " +
                        std::to_string(x[1]) + " channels; ConvTranspose needs W's axis 0 = C");
  const std::int64_t c = x[1] != kDynamicDim ? x[1] : w[0];
  if (c != kDynamicDim && c % g.group != 0)
    throw InvalidAttribute("attributes.group: group " + std::to_string(g.group) + " does not divide the " +
                           std::to_string(c) + " input channels (X " + to_string(x) + ", W " + to_string(w) +
                           ")");
  if (w[1] != kDynamicDim && __builtin_mul_overflow(w[1], g.group, &g.in_channels))
    throw ShapeMismatch("convolution size overflows int64");
  if (w[1] == kDynamicDim) g.in_channels = kDynamicDim;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t in = x[2 + i];
    const std::string where = "axis " + std::to_string(2 + i) + ": ";
    if (in == 0) throw ShapeMismatch(where + "input 0 (X) " + to_string(x) + " is empty along it");
    const std::int64_t padding = attrs.output_padding.empty() ? 0 : attrs.output_padding[i];
    const std::int64_t wanted = attrs.output_shape.empty() ? kDynamicDim : attrs.output_shape[i];
    const WindowAxis axis =
        resolve_transposed_axis(axes[i], in, padding, wanted, {attrs.auto_pad, false, "convolution"});
    const bool known = in != kDynamicDim && axis.kernel != kDynamicDim;  // else in is `wanted`
    if (known && axis.pad_begin + axis.pad_end < 0)
      throw InvalidAttribute(
          std::string("attributes.") + (attrs.output_shape.empty() ? "auto_pad" : "output_shape") + ": " +
          where + "output size " + std::to_string(axis.in) + " is larger than the " +
          std::to_string(axis.in + axis.pad_begin + axis.pad_end) +
          " positions the input reaches (stride * (input - 1) + output_padding + kernel extent = " +
          std::to_string(axis.stride) + " * " + std::to_string(in - 1) + " + " + std::to_string(padding) +
          " + " + std::to_string(axis.extent()) + "): the padding would be negative");
    if (known && axis.in < 1)
      throw ShapeMismatch(where + "output size " + std::to_string(axis.in) + " < 1 (input " + std::to_string(in) +
                          ", stride " + std::to_string(axis.stride) + ", kernel extent " +
                          std::to_string(axis.extent()) + ", pads " + std::to_string(axis.pad_begin) + " + " +
                          std::to_string(axis.pad_end) + ")");
    g.axes.push_back(axis);
  }
  return g;
}

}  // namespace nodeflow
