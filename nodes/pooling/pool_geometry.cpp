#include "nodes/pooling/pool_geometry.hpp"

#include <algorithm>
#include <array>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

// kernel_shape, strides, dilations, pads: lists of at least `min`, one value
// (pads: two) per spatial axis, none above kMaxPoolAttribute.
AttrSpec ints_spec(std::string name, std::int64_t min, std::size_t per_axis, std::string doc) {
  AttrSpec s;
  s.name = std::move(name);
  s.kind = AttrKind::Ints;
  s.min = min;
  s.limit = kMaxPoolAttribute;
  if (s.name != "kernel_shape")
    s.length = ListLength{"kernel_shape", per_axis,
                          per_axis == 1 ? "one per spatial axis" : "begin and end per spatial axis"};
  s.doc = std::move(doc);
  return s;
}

std::string dtype_list(std::span<const DType> dtypes) {
  std::string out;
  for (std::size_t i = 0; i < dtypes.size(); ++i)
    out += (i ? ", " : "") + std::string(dtype_name(dtypes[i]));
  return out;
}

}  // namespace

const char* pool_op_type(PoolKind kind) {
  switch (kind) {
    case PoolKind::Average:
      return "AveragePool";
    case PoolKind::Max:
      return "MaxPool";
    case PoolKind::Lp:
      return "LpPool";
    case PoolKind::GlobalAverage:
      return "GlobalAveragePool";
    case PoolKind::GlobalMax:
      return "GlobalMaxPool";
    case PoolKind::Unpool:
      return "MaxUnpool";
    case PoolKind::GlobalLp:
      return "GlobalLpPool";
  }
  return "MaxPool";
}

std::vector<AttrSpec> pool_attribute_specs(PoolKind kind) {
  std::vector<AttrSpec> specs;
  const auto p_spec = [] {
    AttrSpec p;
    p.name = "p";
    p.kind = AttrKind::Int;
    p.default_value = AttrValue(std::int64_t{2});
    p.min = 1;
    p.since_version = 2;  // LpPool-1's and GlobalLpPool-1's p was a float
    p.doc = "order of the norm (sum |x|^p)^(1/p)";
    return p;
  };
  if (kind == PoolKind::GlobalLp) specs.push_back(p_spec());
  if (is_global(kind)) return specs;
  const bool sliding = kind != PoolKind::Unpool;
  // The opset that gave each op the attribute (ONNX's operator changelog).
  auto since = [&](AttrSpec s, int average, int max, int lp) {
    s.since_version = kind == PoolKind::Average ? average : kind == PoolKind::Max ? max : lp;
    return s;
  };
  if (sliding) {
    AttrSpec auto_pad;
    auto_pad.name = "auto_pad";
    auto_pad.kind = AttrKind::String;
    auto_pad.default_value = AttrValue(std::string("NOTSET"));
    auto_pad.allowed = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    auto_pad.doc =
        "NOTSET uses pads; SAME_UPPER/SAME_LOWER give out = ceil(in / stride) with the "
        "odd pad at the end/begin; VALID pads nothing";
    specs.push_back(auto_pad);
    specs.push_back(since(flag_spec("ceil_mode",
                                    "1: out = ceil(...) + 1, dropping a last window that "
                                    "would start in the end padding"),
                          10, 10, 18));
  }
  if (kind == PoolKind::Average) {
    AttrSpec include = flag_spec("count_include_pad",
                                 "1: the divisor counts pad positions (never those past the end "
                                 "pad that ceil_mode adds)");
    include.since_version = 7;
    specs.push_back(include);
  }
  if (sliding)
    specs.push_back(since(
        ints_spec("dilations", 1, 1, "spacing of the kernel taps per axis; default all 1"), 19,
        10, 18));
  AttrSpec kernel = ints_spec("kernel_shape", 1, 1, "window size per spatial axis");
  kernel.required = true;
  kernel.min_length = 1;
  // Its length is the input's spatial rank: check_pool_rank at shape inference.
  kernel.length = ListLength{"", 1, "one per spatial axis"};
  specs.push_back(kernel);
  if (kind == PoolKind::Lp) specs.push_back(p_spec());
  specs.push_back(
      ints_spec("pads", 0, 2, "[x1_begin, x2_begin, ..., x1_end, x2_end, ...]; default all 0"));
  if (kind == PoolKind::Max) {
    AttrSpec order = flag_spec("storage_order", "Indices layout: 0 row-major, 1 spatial part column-major");
    order.since_version = 8;
    specs.push_back(order);
  }
  specs.push_back(ints_spec("strides", 1, 1, "step per spatial axis; default all 1"));
  if (kind == PoolKind::Unpool)
    for (AttrSpec& s : specs) s.since_version = 9;
  return specs;
}

void check_pool_attributes(PoolKind kind, const Attributes& attrs) {
  if (is_global(kind)) return;
  const auto pads = optional_ints(attrs, "pads");
  if (!pads) return;
  if (kind != PoolKind::Unpool) {
    const std::string& auto_pad = attr_string(attrs, "auto_pad");
    if (parse_auto_pad(auto_pad) != AutoPad::NotSet)
      throw InvalidAttribute("attributes.pads: not allowed together with auto_pad '" + auto_pad +
                             "' (pads need auto_pad NOTSET)");
  }
  const std::vector<std::int64_t>& kernel = attr_ints(attrs, "kernel_shape");
  const auto dilations = optional_ints(attrs, "dilations");
  const std::size_t n = kernel.size();
  for (const char* side : {"begin", "end"})
    for (std::size_t i = 0; i < n; ++i) {
      WindowAxis ax;
      ax.kernel = kernel[i];
      ax.dilation = dilations ? (*dilations)[i] : 1;
      const std::int64_t pad = (*pads)[side[0] == 'b' ? i : n + i];
      if (pad >= ax.extent())
        throw InvalidAttribute("attributes.pads: pad " + std::to_string(pad) + " at the " + side +
                               " of axis " + std::to_string(i + 2) + " is >= the kernel extent " +
                               std::to_string(ax.extent()) +
                               " (a window could hold no input element)");
    }
}

PoolAttributes parse_pool_attributes(PoolKind kind, const Attributes& attrs) {
  PoolAttributes a;
  a.kind = kind;
  if (kind == PoolKind::Lp || kind == PoolKind::GlobalLp) a.p = attr_int(attrs, "p");
  if (a.global()) return a;
  const std::vector<std::int64_t>& kernel = attr_ints(attrs, "kernel_shape");
  const std::size_t n = kernel.size();
  const auto strides = optional_ints(attrs, "strides");
  const auto dilations = optional_ints(attrs, "dilations");
  const auto pads = optional_ints(attrs, "pads");
  if (kind != PoolKind::Unpool) {
    a.auto_pad = parse_auto_pad(attr_string(attrs, "auto_pad"));
    a.ceil_mode = attr_int(attrs, "ceil_mode") == 1;
  }
  if (kind == PoolKind::Average) a.count_include_pad = attr_int(attrs, "count_include_pad") == 1;
  if (kind == PoolKind::Max)
    a.storage_order = attr_int(attrs, "storage_order") == 1 ? StorageOrder::ColumnMajor
                                                            : StorageOrder::RowMajor;
  for (std::size_t i = 0; i < n; ++i) {
    WindowAxis ax;
    ax.kernel = kernel[i];
    if (strides) ax.stride = (*strides)[i];
    if (dilations) ax.dilation = (*dilations)[i];
    if (pads) {
      ax.pad_begin = (*pads)[i];
      ax.pad_end = (*pads)[n + i];
    }
    a.axes.push_back(ax);
  }
  return a;
}

PoolAttributes checked_pool_attributes(PoolKind kind, const Attributes& given) {
  // Code outside a graph checks attributes as often as it likes (sweeps): the specs are built once.
  static const auto specs = [] {
    std::array<std::vector<AttrSpec>, 7> t;
    for (PoolKind k : {PoolKind::Average, PoolKind::Max, PoolKind::Lp, PoolKind::GlobalAverage,
                       PoolKind::GlobalMax, PoolKind::Unpool, PoolKind::GlobalLp})
      t[static_cast<std::size_t>(k)] = pool_attribute_specs(k);
    return t;
  }();
  return parse_pool_attributes(
      kind, checked_attributes(pool_op_type(kind), specs.at(static_cast<std::size_t>(kind)), given,
                               [kind](const Attributes& a) { check_pool_attributes(kind, a); }));
}

void check_axis(const WindowAxis& axis, std::size_t tensor_axis) {
  const auto where = [&] { return "axis " + std::to_string(tensor_axis) + ": "; };
  if (axis.out < 1) {
    const std::int64_t padded = axis.in + axis.pad_begin + axis.pad_end;
    if (axis.extent() > padded)
      throw ShapeMismatch(where() + "kernel extent " + std::to_string(axis.extent()) +
                          " is larger than the padded input " + std::to_string(axis.in) + "+" +
                          std::to_string(axis.pad_begin) + "+" + std::to_string(axis.pad_end) +
                          " (output size would be " + std::to_string(axis.out) + ")");
    throw ShapeMismatch(where() + "input size " + std::to_string(axis.in) + " gives output size " +
                        std::to_string(axis.out));
  }
  // The output-size rules make every window start before the input's end, so
  // only windows starting in the begin pad (fewer than pad_begin of them) can
  // miss; the last window is checked as well in case the input is empty.
  auto require_input = [&](std::int64_t o) {
    if (axis.valid_taps(o).empty())
      throw ShapeMismatch(
          where() + "window " + std::to_string(o) + " holds no input element (input " +
          std::to_string(axis.in) + ", kernel " + std::to_string(axis.kernel) + ", dilation " +
          std::to_string(axis.dilation) + ", stride " + std::to_string(axis.stride) + ", pads " +
          std::to_string(axis.pad_begin) + "+" + std::to_string(axis.pad_end) + ")");
  };
  for (std::int64_t o = 0; o < axis.out && axis.position(o, 0) < 0; ++o) require_input(o);
  require_input(axis.out - 1);
}

std::int64_t PoolGeometry::input_plane() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.in;
  return n;
}

std::int64_t PoolGeometry::output_plane() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.out;
  return n;
}

Shape PoolGeometry::input_shape() const {
  Shape s{batch, channels};
  for (const auto& a : axes) s.push_back(a.in);
  return s;
}

Shape PoolGeometry::output_shape() const {
  Shape s{batch, channels};
  for (const auto& a : axes) s.push_back(a.out);
  return s;
}

namespace {

/// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: one window over the whole axis (a
/// kernel the size of the input, of a dynamic size too), which an empty axis
/// leaves with no input element: refused at shape inference, as any such
/// window (docs/pooling.md).
WindowAxis global_axis(std::int64_t in, std::size_t tensor_axis) {
  if (in == 0)
    throw ShapeMismatch("axis " + std::to_string(tensor_axis) +
                        ": the global window holds no input element (the axis is empty)");
  WindowAxis ax;
  ax.kernel = ax.in = in;
  ax.out = 1;
  return ax;
}

}  // namespace

PoolGeometry pool_geometry(const PoolAttributes& attrs, const Shape& input_shape) {
  check_pool_rank(attrs, input_shape, 0);
  PoolGeometry g;
  g.batch = input_shape[0];
  g.channels = input_shape[1];
  const WindowRule rule{attrs.auto_pad, attrs.ceil_mode, "pooling"};
  for (std::size_t i = 2; i < input_shape.size(); ++i) {
    const std::int64_t in = input_shape[i];
    const WindowAxis ax = attrs.global() ? global_axis(in, i)
                                         : resolve_window_axis(attrs.axes[i - 2], in, rule);
    if (in != kDynamicDim) check_axis(ax, i);
    g.axes.push_back(ax);
  }
  return g;
}

std::span<const DType> pool_dtypes(PoolKind kind) {
  static constexpr std::array<DType, 4> kFloat{DType::Float32, DType::Float64, DType::Float16,
                                               DType::BFloat16};
  static constexpr std::array<DType, 6> kFloatAndBytes{
      DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::UInt8};
  const bool bytes =
      kind == PoolKind::Max || kind == PoolKind::GlobalMax || kind == PoolKind::Unpool;
  return bytes ? std::span<const DType>(kFloatAndBytes) : std::span<const DType>(kFloat);
}

void check_pool_dtype(PoolKind kind, DType dtype, std::size_t input_index) {
  const auto allowed = pool_dtypes(kind);
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end())
    throw UnsupportedDType(std::string(pool_op_type(kind)) + " does not take dtype " +
                           std::string(dtype_name(dtype)) + " (input " +
                           std::to_string(input_index) + "; allowed: " + dtype_list(allowed) + ")");
}

void check_pool_rank(const PoolAttributes& attrs, const Shape& shape, std::size_t input_index) {
  const std::string what = "input " + std::to_string(input_index) + " has rank " +
                           std::to_string(shape.size()) + " (shape " + to_string(shape) + "); " +
                           pool_op_type(attrs.kind);
  if (shape.size() < 3) throw ShapeMismatch(what + " needs rank >= 3 (N x C x D1 ...)");
  if (!attrs.global() && shape.size() != attrs.axes.size() + 2)
    throw ShapeMismatch(what + " with " + std::to_string(attrs.axes.size()) +
                        "-D kernel_shape needs rank " + std::to_string(attrs.axes.size() + 2) +
                        " (N x C x D1 ...)");
}

}  // namespace nodeflow
