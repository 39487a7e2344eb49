// Resize (ONNX Resize-19): the geometry is nodes/shape/resize_geometry; the
// resampling is separable, one pass per resized axis (an axis whose taps copy
// it unchanged has none). Each pass sees the tensor as [outer, in, inner] and
// makes [outer, out, inner], every output row a copy (nearest) or a weighted
// sum of two input rows (linear) of `inner` contiguous values; N-linear
// interpolation is exactly the product of these 1-D passes. Backward runs the
// transposed passes in reverse order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/resize_geometry.hpp"
#include "nodes/shape/resize_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "Resize";

// One pass: axis `axis` of a tensor of shape `before` goes to taps.size().
struct ResizePass {
  std::size_t axis;
  Shape before;
  std::vector<ResizeTap> taps;
  std::int64_t outer() const { return dims_product(before, 0, axis); }
  std::int64_t in() const { return before[axis]; }
  std::int64_t inner() const { return dims_product(before, axis + 1, before.size()); }
  Shape after() const {
    Shape s = before;
    s[axis] = static_cast<std::int64_t>(taps.size());
    return s;
  }
};

struct ResizePlan {
  Shape out;
  std::vector<ResizePass> passes;
};

ResizePlan plan_passes(const ResizeAttributes& attributes, const ResizeRequest& request, const Shape& x) {
  ResizePlan plan;
  const std::vector<ResizeAxis> axes = resize_axes(attributes, request, x);
  for (const ResizeAxis& a : axes) plan.out.push_back(a.out);
  // An empty Y needs no taps (and its other axes may be very long).
  if (element_count(plan.out) == 0) return plan;
  // Shrinking axes first, growing ones last: no tensor between the passes
  // is larger than the larger of X and Y.
  std::vector<std::size_t> order(axes.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return static_cast<double>(axes[a].out) / static_cast<double>(axes[a].in) <
           static_cast<double>(axes[b].out) / static_cast<double>(axes[b].in);
  });
  Shape shape = x;
  for (const std::size_t d : order) {
    std::vector<ResizeTap> taps = resize_taps(attributes, axes[d]);
    if (is_identity(taps, shape[d])) continue;
    plan.passes.push_back({d, shape, std::move(taps)});
    shape = plan.passes.back().after();
  }
  return plan;
}

// Nearest, any dtype: rows copied as bytes; invalid taps get `fill` (one element).
Tensor nearest_pass(const ResizePass& p, const Tensor& in, const Tensor& fill, int threads) {
  Tensor out = Tensor::uninitialized(in.dtype(), p.after());
  const std::size_t es = dtype_size(in.dtype());
  const std::int64_t out_len = static_cast<std::int64_t>(p.taps.size()), inner = p.inner(), len = p.in();
  const std::size_t row = static_cast<std::size_t>(inner) * es;
  const std::byte* src = in.raw();
  std::byte* dst = out.raw();
  parallel_ranges(threads, p.outer() * out_len, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const std::int64_t o = k / out_len;
      const ResizeTap& t = p.taps[static_cast<std::size_t>(k % out_len)];
      std::byte* d = dst + static_cast<std::size_t>(k) * row;
      if (t.valid) {
        std::memcpy(d, src + static_cast<std::size_t>(o * len + t.i0) * row, row);
      } else {
        for (std::int64_t i = 0; i < inner; ++i) std::memcpy(d + static_cast<std::size_t>(i) * es, fill.raw(), es);
      }
    }
  });
  return out;
}

// Linear in T (float or double): out row = (1 - w1) * row i0 + w1 * row i1.
template <typename T> Tensor linear_pass(const ResizePass& p, const Tensor& in, double fill, int threads) {
  Tensor out = Tensor::uninitialized(in.dtype(), p.after());
  const std::int64_t out_len = static_cast<std::int64_t>(p.taps.size()), inner = p.inner(), len = p.in();
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  parallel_ranges(threads, p.outer() * out_len, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const std::int64_t o = k / out_len;
      const ResizeTap& t = p.taps[static_cast<std::size_t>(k % out_len)];
      T* d = dst + k * inner;
      if (!t.valid) {
        std::fill(d, d + inner, static_cast<T>(fill));
        continue;
      }
      const T* a = src + (o * len + t.i0) * inner;
      const T* b = src + (o * len + t.i1) * inner;
      const T w1 = static_cast<T>(t.w1), w0 = static_cast<T>(1 - t.w1);
      for (std::int64_t i = 0; i < inner; ++i) d[i] = w0 * a[i] + w1 * b[i];
    }
  });
  return out;
}

// The transpose of a pass (either mode: nearest taps have w1 0): the gradient
// of each output row added into the input rows it read. Rows of one `outer`
// index may share input rows, so the threads split the outer index.
template <typename T> Tensor pass_backward(const ResizePass& p, const Tensor& g_out, int threads) {
  Tensor g_in(g_out.dtype(), p.before);
  const std::int64_t out_len = static_cast<std::int64_t>(p.taps.size()), inner = p.inner(), len = p.in();
  const T* src = g_out.data<T>();
  T* dst = g_in.data<T>();
  parallel_ranges(threads, p.outer(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t o = begin; o < end; ++o)
      for (std::int64_t j = 0; j < out_len; ++j) {
        const ResizeTap& t = p.taps[static_cast<std::size_t>(j)];
        if (!t.valid) continue;
        const T* g = src + (o * out_len + j) * inner;
        T* a = dst + (o * len + t.i0) * inner;
        T* b = dst + (o * len + t.i1) * inner;
        const T w1 = static_cast<T>(t.w1), w0 = static_cast<T>(1 - t.w1);
        for (std::int64_t i = 0; i < inner; ++i) a[i] += w0 * g[i];
        if (t.w1 != 0)
          for (std::int64_t i = 0; i < inner; ++i) b[i] += w1 * g[i];
      }
  });
  return g_in;
}

// Linear results for an integer dtype: rounded to nearest, saturated.
Tensor round_to(const Tensor& values, DType dtype) {
  Tensor out = Tensor::uninitialized(dtype, values.shape());
  const double* v = values.data<double>();
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      T* o = out.data<T>();
      const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      for (std::int64_t i = 0; i < values.numel(); ++i) {
        const double r = std::round(v[i]);
        o[i] = !(r > lo) ? std::numeric_limits<T>::lowest()
               : !(r < hi) ? std::numeric_limits<T>::max()
                           : static_cast<T>(r);
      }
    }
  });
  return out;
}

class ResizeNode final : public Node {
 public:
  explicit ResizeNode(NodeConfig c) : Node(std::move(c)), attributes_(ResizeAttributes::from(config().attributes)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const ResizeRequest request = request_of(
        [&](std::size_t k) {
          return k < ctx.inputs.size() && k < ctx.constants.size() && ctx.inputs[k] ? ctx.constants[k] : nullptr;
        });
    Shape out = x.shape;
    const std::vector<ResizeAxis> axes = resize_axes(attributes_, request, x.shape);
    for (std::size_t d = 0; d < axes.size(); ++d) out[d] = axes[d].out;
    return {{x.dtype, out}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const auto input = [&](std::size_t k) { return k < ctx.inputs.size() ? &ctx.inputs[k] : nullptr; };
    const ResizeRequest request = request_of(input);
    const ResizePlan plan = plan_passes(attributes_, request, x.shape());
    const std::vector<ResizePass>& passes = plan.passes;
    if (element_count(plan.out) == 0) {
      ctx.outputs[0] = Tensor(x.dtype(), plan.out);
    } else if (attributes_.mode == ResizeMode::Nearest) {
      const Tensor fill = Tensor::from<double>({1}, {attributes_.extrapolation_value});
      const Tensor fill_x = is_float(x.dtype()) ? fill.cast(x.dtype()) : round_to(fill, x.dtype());
      Tensor t = x;
      for (const ResizePass& p : passes) t = nearest_pass(p, t, fill_x, ctx.threads);
      ctx.outputs[0] = t;
    } else {
      const DType ct = is_float(x.dtype()) ? compute_dtype(x.dtype()) : DType::Float64;
      Tensor t = as_dtype(x, ct);
      visit_compute_dtype(ct, [&](auto tag) {
        using T = decltype(tag);
        for (const ResizePass& p : passes) t = linear_pass<T>(p, t, attributes_.extrapolation_value, ctx.threads);
      });
      ctx.outputs[0] = is_float(x.dtype()) ? as_dtype(t, x.dtype()) : round_to(t, x.dtype());
    }
    if (ctx.saved)
      for (std::size_t k = 1; k < 4; ++k) ctx.saved->push_back(input(k) ? *input(k) : Tensor{});
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty() || ctx.grad_inputs.empty() || ctx.grad_inputs[0].empty()) return;
    require_saved(kOp, ctx.saved.size(), 3);
    const ResizeRequest request = request_of([&](std::size_t k) { return &ctx.saved[k - 1]; });
    const Shape& x = ctx.inputs[0].shape;
    const ResizePlan plan = plan_passes(attributes_, request, x);
    check_output_gradient(kOp, 0, ctx.grad_outputs[0], plan.out);
    if (element_count(plan.out) == 0) return;
    const std::vector<ResizePass>& passes = plan.passes;
    Tensor g = to_compute(ctx.grad_outputs[0]);
    visit_compute_dtype(g.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (auto p = passes.rbegin(); p != passes.rend(); ++p) g = pass_backward<T>(*p, g, ctx.threads);
    });
    accumulate_gradient(ctx.grad_inputs[0], g, ctx.scale_for(0));
  }

 private:
  // `input(k)`: input k's value, or nullptr / an empty tensor when absent.
  template <typename Input> static ResizeRequest request_of(Input&& input) {
    for (std::size_t k = 1; k < 4; ++k) {
      const Tensor* t = input(k);
      if (t && !t->empty() && k == 3) check_int64_input(kOp, 3, "sizes", t->dtype());
      if (t && !t->empty() && k < 3) check_float_input(kOp, k, k == 1 ? "roi" : "scales", t->dtype());
    }
    return read_resize_request(input(1), input(2), input(3));
  }

  ResizeAttributes attributes_;
};

}  // namespace

void register_resize(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX Resize-19";
  s.doc = "Resamples to scales or sizes (mode nearest or linear; coordinate_transformation_mode)";
  TensorSpec roi{"roi", {DType::Float32, DType::Float64, DType::Float16},
                 "optional; tf_crop_and_resize only: starts then ends, one per resized axis, normalized"};
  roi.constant = true;
  TensorSpec scales{"scales", {DType::Float32}, "optional; one positive scale per resized axis"};
  scales.constant = true;
  TensorSpec sizes{"sizes", int64_dtypes(), "optional; one output length per resized axis (not with scales)"};
  sizes.constant = true;
  s.inputs = {{"X", graph_dtypes(), "any rank"}, roi, scales, sizes};
  s.min_inputs = 1;
  s.outputs = {{"Y", graph_dtypes(), "X's dtype; each resized axis of the new length"}};

  const auto string_spec = [](std::string name, std::string def, std::vector<std::string> allowed, int since,
                              std::string doc) {
    AttrSpec a;
    a.name = std::move(name);
    a.kind = AttrKind::String;
    a.default_value = AttrValue{std::move(def)};
    a.allowed = std::move(allowed);
    a.since_version = since;
    a.doc = std::move(doc);
    return a;
  };
  AttrSpec antialias = flag_spec("antialias", "1 (antialiasing filter when downscaling) is not implemented");
  antialias.allowed_ints = {0};
  antialias.since_version = 18;
  AttrSpec axes;
  axes.name = "axes";
  axes.kind = AttrKind::Ints;
  axes.since_version = 18;
  axes.doc = "the axes roi/scales/sizes refer to, each in [-rank, rank - 1], no repeats; default all";
  // Resize-10 had mode only; Resize-11 brought the others but antialias,
  // axes and keep_aspect_ratio_policy (Resize-18).
  const auto since_11 = [](AttrSpec a) {
    a.since_version = 11;
    return a;
  };
  s.attributes = {
      antialias,
      axes,
      string_spec("coordinate_transformation_mode", "half_pixel",
                  {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                   "tf_crop_and_resize"},
                  11, "how an output coordinate maps to the input"),
      since_11(float_spec("cubic_coeff_a", -0.75, "cubic only (mode cubic is not implemented)")),
      since_11(flag_spec("exclude_outside", "cubic's outside weights; no effect on nearest and linear")),
      since_11(float_spec("extrapolation_value", 0.0, "tf_crop_and_resize: the value outside the input")),
      string_spec("keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"}, 18,
                  "with sizes: stretch each axis, or one factor fitting inside / covering the sizes"),
      string_spec("mode", "nearest", {"nearest", "linear"}, 10,
                  "nearest or linear (N-linear); cubic is not implemented"),
      string_spec("nearest_mode", "round_prefer_floor", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
                  11, "nearest: how a coordinate rounds to an index"),
  };
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ResizeNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
