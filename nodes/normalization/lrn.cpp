// LRN (ONNX LRN-13): local response normalization across channels, as in
// AlexNet, ZFNet and GoogLeNet. For X [N, C, D1..Dk] (rank >= 2):
//
//   square_sum[n, c, d] = sum of X[n, i, d]^2 over channels
//                         i in [c - floor((size-1)/2), c + ceil((size-1)/2)] ∩ [0, C-1]
//   Y = X / (bias + alpha / size * square_sum)^beta
//
// (PyTorch's local_response_norm computes the same for odd `size`; for an even
// one it puts the longer half of the window before c, ONNX after it:
// docs/operators.md, "LRN".) float16 and bfloat16 compute in float32.
//
// Backward, with s = bias + alpha / size * square_sum (saved by forward):
//   dX[j] = dY[j] * s[j]^-beta
//           - 2 * alpha * beta / size * X[j] * sum over the channels c whose
//             window holds j of dY[c] * X[c] * s[c]^(-beta-1)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "LRN";

/// X seen as [outer = N, channels = C, inner = D1 * ... * Dk].
struct ChannelView {
  std::int64_t outer = 0, channels = 0, inner = 0;
};

ChannelView view_of(const Shape& shape) {
  return {shape[0], shape[1], dims_product(shape, 2, shape.size())};
}

/// Sets out[0, inner) to the sum of term(plane[c * inner + d]) over the channels
/// c in [j - below, j + above] ∩ [0, C-1] of one [C, inner] plane, channel by
/// channel in increasing c. Forward sums X^2 over c's window (below = before,
/// above = after); backward sums t over the channels whose window holds j
/// (below = after, above = before). Each sum is read straight from the plane,
/// in one fixed order, so no running sum carries rounding along the channels.
template <typename T, typename Term>
void window_sum(const T* plane, const ChannelView& v, std::int64_t j, std::int64_t below, std::int64_t above,
                T* out, Term term) {
  const std::int64_t lo = std::max<std::int64_t>(0, j - below);
  const std::int64_t hi = std::min(v.channels - 1, j + above);
  std::fill(out, out + v.inner, T(0));
  for (std::int64_t c = lo; c <= hi; ++c) {
    const T* row = plane + c * v.inner;
    for (std::int64_t d = 0; d < v.inner; ++d) out[d] += term(row[d]);
  }
}

void check_rank(const Shape& shape) {
  if (shape.size() < 2)
    throw ShapeMismatch(std::string(kOp) + " needs input X of rank >= 2 (N x C x D1 x ... x Dk), got " +
                        to_string(shape));
}

class LrnNode final : public Node {
 public:
  explicit LrnNode(NodeConfig c)
      : Node(std::move(c)),
        size_(attr_int(config().attributes, "size")),
        alpha_(attr_float(config().attributes, "alpha")),
        beta_(attr_float(config().attributes, "beta")),
        bias_(attr_float(config().attributes, "bias")),
        before_((size_ - 1) / 2),
        after_(size_ - 1 - before_) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_float_input(kOp, 0, "X", x.dtype);
    check_rank(x.shape);
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    check_rank(ctx.inputs[0].shape());
    const Tensor x = to_compute(ctx.inputs[0]);
    Tensor y = Tensor::uninitialized(x.dtype(), x.shape());
    Tensor s = Tensor::uninitialized(x.dtype(), x.shape());
    const ChannelView v = view_of(x.shape());
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      T* sp = s.data<T>();
      const T coeff = static_cast<T>(alpha_ / static_cast<double>(size_));
      const T bias = static_cast<T>(bias_), beta = static_cast<T>(beta_);
      // One (n, c) plane per work item: its window's squares are summed
      // straight from X (window_sum).
      parallel_ranges(ctx.threads, v.outer * v.channels, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t item = begin; item < end; ++item) {
          const std::int64_t n = item / v.channels, c = item % v.channels;
          T* sq = sp + item * v.inner;
          window_sum(xp + n * v.channels * v.inner, v, c, before_, after_, sq, [](T xi) { return xi * xi; });
          const T* xc = xp + item * v.inner;
          T* yc = yp + item * v.inner;
          for (std::int64_t d = 0; d < v.inner; ++d) {
            sq[d] = bias + coeff * sq[d];
            yc[d] = xc[d] * std::pow(sq[d], -beta);
          }
        }
      });
    });
    ctx.outputs[0] = as_dtype(y, ctx.inputs[0].dtype());
    if (ctx.saved) {
      ctx.saved->push_back(x);
      ctx.saved->push_back(s);
    }
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty() || ctx.grad_inputs[0].empty()) return;
    require_saved(kOp, ctx.saved.size(), 2);
    const Tensor& x = ctx.saved[0];
    const Tensor& s = ctx.saved[1];
    check_output_gradient(kOp, 0, ctx.grad_outputs[0], x.shape());
    const Tensor dy = as_dtype(ctx.grad_outputs[0], x.dtype());
    Tensor dx = Tensor::uninitialized(x.dtype(), x.shape());
    const ChannelView v = view_of(x.shape());
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.data<T>();
      const T* sp = s.data<T>();
      const T* dyp = dy.data<T>();
      T* dxp = dx.data<T>();
      const T beta = static_cast<T>(beta_);
      const T factor = static_cast<T>(2.0 * alpha_ * beta_ / static_cast<double>(size_));
      // t[c] = dY[c] * X[c] * s[c]^(-beta-1), per plane; then each channel j
      // sums t over the channels c whose window holds j: c in [j - after, j + before].
      Tensor t_buffer = Tensor::uninitialized(x.dtype(), x.shape());
      T* tp = t_buffer.data<T>();
      const std::int64_t planes = v.outer * v.channels;
      parallel_ranges(ctx.threads, planes, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t e = begin * v.inner; e < end * v.inner; ++e)
          tp[e] = dyp[e] * xp[e] * std::pow(sp[e], -beta - T(1));
      });
      parallel_ranges(ctx.threads, planes, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t item = begin; item < end; ++item) {
          const std::int64_t n = item / v.channels, j = item % v.channels;
          T* out = dxp + item * v.inner;
          window_sum(tp + n * v.channels * v.inner, v, j, after_, before_, out, [](T tc) { return tc; });
          const std::int64_t base = item * v.inner;
          for (std::int64_t d = 0; d < v.inner; ++d) {
            const std::int64_t e = base + d;
            out[d] = dyp[e] * std::pow(sp[e], -beta) - factor * xp[e] * out[d];
          }
        }
      });
    });
    accumulate_gradient(ctx.grad_inputs[0], dx, ctx.scale_for(0));
  }

 private:
  std::int64_t size_;
  double alpha_, beta_, bias_;
  std::int64_t before_, after_;  ///< channels of the window before and after c
};

}  // namespace

void register_lrn(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX LRN-13";
  s.doc = "Local response normalization across channels: X / (bias + alpha / size * sum of X^2 over size "
          "channels)^beta";
  s.inputs = {{"X", float_dtypes(), "N x C x D1 x ... x Dk (rank >= 2)"}};
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"}};
  AttrSpec size;
  size.name = "size";
  size.kind = AttrKind::Int;
  size.required = true;
  size.min = 1;
  size.limit = std::numeric_limits<std::int32_t>::max();
  size.doc = "channels summed over: floor((size-1)/2) before c, ceil((size-1)/2) after";
  s.attributes = {float_spec("alpha", 0.0001, "scaling parameter (divided by size)"),
                  float_spec("beta", 0.75, "the exponent"), float_spec("bias", 1.0, "added to the scaled sum"),
                  size};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<LrnNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
