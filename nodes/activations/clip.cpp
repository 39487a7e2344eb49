// Clip (ONNX Clip-13): min(max(x, min), max) with min and max optional scalar
// inputs of x's dtype (absent: no bound), for every dtype nodeflow has. With
// min > max every output is max (docs/operators.md, "Choices where ONNX is
// silent"). The gradient passes where min <= x <= max, boundaries included,
// and is 0 elsewhere; min and max get none ("Gradient conventions").
#include <limits>
#include <string>
#include <type_traits>

#include "core/errors.hpp"
#include "nodes/activations/activation_node.hpp"
#include "nodes/activations/activations_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "Clip";
constexpr const char* kBoundNames[] = {"input", "min", "max"};

// ONNX: "must be a scalar"; shape [1] is taken as one too (as onnxruntime does).
void check_bound(std::size_t k, const TensorInfo& bound, DType x_dtype) {
  check_same_dtype(kOp, k, kBoundNames[k], bound.dtype, kBoundNames[0], x_dtype);
  const bool scalar = bound.shape.empty() || (bound.shape.size() == 1 && (bound.shape[0] == 1 ||
                                                                          bound.shape[0] == kDynamicDim));
  if (!scalar)
    throw ShapeMismatch(std::string("input ") + std::to_string(k) + " (" + kBoundNames[k] +
                        ") of Clip must be a scalar, got shape " + to_string(bound.shape));
}

// The bounds in the type the comparisons run in: accumulator_t for the float
// dtypes, the integer type itself otherwise; an absent bound is no bound.
template <typename T> struct Bounds {
  using C = std::conditional_t<std::is_integral_v<T>, T, accumulator_t<T>>;
  C lo = std::numeric_limits<C>::lowest();
  C hi = std::numeric_limits<C>::max();

  Bounds(const Tensor& min, const Tensor& max) {
    // lowest() and max() of a float type are finite: infinities pass unclipped.
    if constexpr (!std::is_integral_v<T>) {
      lo = -std::numeric_limits<C>::infinity();
      hi = std::numeric_limits<C>::infinity();
    }
    if (!min.empty()) lo = static_cast<C>(min.data<T>()[0]);
    if (!max.empty()) hi = static_cast<C>(max.data<T>()[0]);
  }
  // NaN passes through (neither comparison holds); lo > hi gives hi.
  C clip(C v) const {
    const C low = v < lo ? lo : v;
    return low > hi ? hi : low;
  }
  bool passes(C v) const { return lo <= v && v <= hi; }
};

class ClipNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    for (std::size_t k = 1; k < ctx.inputs.size(); ++k)
      if (ctx.inputs[k]) check_bound(k, *ctx.inputs[k], x.dtype);
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const Tensor min = bound(ctx, 1, x.dtype());
    const Tensor max = bound(ctx, 2, x.dtype());
    Tensor y = Tensor::uninitialized(x.dtype(), x.shape());  // written in full
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = typename Bounds<T>::C;
      const Bounds<T> b(min, max);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      activation_ranges(ctx.threads, x.numel(), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) yp[i] = static_cast<T>(b.clip(static_cast<C>(xp[i])));
      });
    });
    ctx.outputs[0] = y;
    if (ctx.saved) {
      ctx.saved->push_back(x);
      ctx.saved->push_back(min);
      ctx.saved->push_back(max);
    }
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) return;
    require_saved(kOp, ctx.saved.size(), 3);
    const Tensor& x = ctx.saved[0];
    check_output_gradient(kOp, 0, dy, x.shape());
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const Bounds<T> b(ctx.saved[1], ctx.saved[2]);
      const T* xp = x.data<T>();
      const T* gp = dy.data<T>();
      T* dp = dx.data<T>();
      const auto scale = static_cast<A>(ctx.scale_for(0));
      activation_ranges(ctx.threads, x.numel(), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i)
          if (b.passes(static_cast<A>(xp[i])))
            dp[i] = static_cast<T>(static_cast<A>(dp[i]) + scale * static_cast<A>(gp[i]));
      });
    });
  }

 private:
  // Input k, checked as infer checks it (its shape is known only now when
  // it is computed by the graph); empty when absent.
  static Tensor bound(const ForwardContext& ctx, std::size_t k, DType x_dtype) {
    if (ctx.inputs.size() <= k || ctx.inputs[k].empty()) return {};
    const Tensor& t = ctx.inputs[k];
    check_bound(k, {t.dtype(), t.shape()}, x_dtype);
    return t;
  }
};

}  // namespace

void register_clip(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX Clip-13";
  s.doc = "Limits each element to [min, max] (optional inputs; absent: no bound)";
  const std::vector<DType> dtypes = graph_dtypes();
  TensorSpec min{"min", dtypes, "scalar lower bound, input's dtype; absent: none"};
  min.differentiable = false;
  TensorSpec max{"max", dtypes, "scalar upper bound, input's dtype; absent: none"};
  max.differentiable = false;
  s.inputs = {{"input", dtypes, "any shape"}, min, max};
  s.outputs = {{"output", dtypes, "the input's shape and dtype"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ClipNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
