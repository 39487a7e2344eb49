// Softmax and LogSoftmax (ONNX Softmax-13, LogSoftmax-13): along one axis
// (default -1), the opset-13 semantics (not the opset-1 "flatten to 2-D" ones).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/activations/softmax_kernels.hpp"

namespace nodeflow {

namespace {

// Calls f(base) for every line along the axis; elements of a line are base + j * inner.
template <typename F> void for_each_line(AxisView v, F&& f) {
  for (std::int64_t o = 0; o < v.outer; ++o)
    for (std::int64_t i = 0; i < v.inner; ++i) f(o * v.n * v.inner + i);
}

// max and sum(exp(x - max)) of one line.
template <typename T> std::pair<T, T> line_stats(AxisView v, const T* x) {
  T max = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < v.n; ++j) max = std::max(max, x[j * v.inner]);
  T sum = 0;
  for (std::int64_t j = 0; j < v.n; ++j) sum += std::exp(x[j * v.inner] - max);
  return {max, sum};
}

}  // namespace

template <typename T> void softmax_forward(AxisView v, const T* x, T* y) {
  for_each_line(v, [&](std::int64_t b) {
    const auto [max, sum] = line_stats(v, x + b);
    for (std::int64_t j = 0; j < v.n; ++j) y[b + j * v.inner] = std::exp(x[b + j * v.inner] - max) / sum;
  });
}

template <typename T> void log_softmax_forward(AxisView v, const T* x, T* y) {
  for_each_line(v, [&](std::int64_t b) {
    const auto [max, sum] = line_stats(v, x + b);
    // (x - max) first: max + log(sum) would round log(sum) away against a large
    // max (float32 logits [1e8, 1e8] gave 0, not -log 2).
    const T log_sum = std::log(sum);
    for (std::int64_t j = 0; j < v.n; ++j) y[b + j * v.inner] = (x[b + j * v.inner] - max) - log_sum;
  });
}

template <typename T> void softmax_backward(AxisView v, const T* y, const T* dy, T* dx) {
  for_each_line(v, [&](std::int64_t b) {
    T dot = 0;
    for (std::int64_t j = 0; j < v.n; ++j) dot += dy[b + j * v.inner] * y[b + j * v.inner];
    for (std::int64_t j = 0; j < v.n; ++j) {
      const std::int64_t e = b + j * v.inner;
      dx[e] = y[e] * (dy[e] - dot);
    }
  });
}

template <typename T> void log_softmax_backward(AxisView v, const T* y, const T* dy, T* dx) {
  for_each_line(v, [&](std::int64_t b) {
    T sum = 0;
    for (std::int64_t j = 0; j < v.n; ++j) sum += dy[b + j * v.inner];
    for (std::int64_t j = 0; j < v.n; ++j) {
      const std::int64_t e = b + j * v.inner;
      dx[e] = dy[e] - std::exp(y[e]) * sum;
    }
  });
}

template void softmax_forward<float>(AxisView, const float*, float*);
template void softmax_forward<double>(AxisView, const double*, double*);
template void log_softmax_forward<float>(AxisView, const float*, float*);
template void log_softmax_forward<double>(AxisView, const double*, double*);
template void softmax_backward<float>(AxisView, const float*, const float*, float*);
template void softmax_backward<double>(AxisView, const double*, const double*, double*);
template void log_softmax_backward<float>(AxisView, const float*, const float*, float*);
template void log_softmax_backward<double>(AxisView, const double*, const double*, double*);

namespace {

template <bool Log> class SoftmaxNode final : public Node {
 public:
  static constexpr const char* kOp = Log ? "LogSoftmax" : "Softmax";

  explicit SoftmaxNode(NodeConfig c) : Node(std::move(c)), axis_(attr_int(config().attributes, "axis")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_float_input(kOp, 0, "input", x.dtype);
    if (x.shape.empty())
      throw ShapeMismatch(std::string(kOp) + " needs an input of rank >= 1, got a scalar");
    normalize_axis(axis_, x.shape.size());
    return {x};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor x = to_compute(ctx.inputs[0]);
    if (x.rank() == 0) throw ShapeMismatch(std::string(kOp) + " needs an input of rank >= 1, got a scalar");
    Tensor y(x.dtype(), x.shape());
    const AxisView v = view(x.shape());
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Log)
        log_softmax_forward<T>(v, x.data<T>(), y.data<T>());
      else
        softmax_forward<T>(v, x.data<T>(), y.data<T>());
    });
    ctx.outputs[0] = as_dtype(y, ctx.inputs[0].dtype());
    if (ctx.saved) ctx.saved->push_back(y);
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty() || ctx.grad_inputs[0].empty()) return;
    require_saved(kOp, ctx.saved.size(), 1);
    const Tensor& y = ctx.saved[0];
    check_output_gradient(kOp, 0, ctx.grad_outputs[0], y.shape());
    const Tensor dy = to_compute(ctx.grad_outputs[0]);
    Tensor dx(y.dtype(), y.shape());
    const AxisView v = view(y.shape());
    visit_compute_dtype(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Log)
        log_softmax_backward<T>(v, y.data<T>(), dy.data<T>(), dx.data<T>());
      else
        softmax_backward<T>(v, y.data<T>(), dy.data<T>(), dx.data<T>());
    });
    accumulate_gradient(ctx.grad_inputs[0], dx, ctx.scale_for(0));
  }

 private:
  AxisView view(const Shape& s) const {
    const std::size_t axis = normalize_axis(axis_, s.size());
    return {dims_product(s, 0, axis), s[axis], dims_product(s, axis + 1, s.size())};
  }

  std::int64_t axis_;
};

template <bool Log> void register_softmax_op(OpRegistry& registry) {
  OpSchema s;
  s.op_type = SoftmaxNode<Log>::kOp;
  s.definition = Log ? "ONNX LogSoftmax-13" : "ONNX Softmax-13";
  s.doc = Log ? "log(softmax(X)) along axis, computed stably" : "exp(X) / sum(exp(X)) along axis";
  s.inputs = {{"input", float_dtypes(), "rank >= 1"}};
  s.outputs = {{"output", float_dtypes(), "input's shape and dtype"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{-1}};
  axis.doc = "the axis normalized over, in [-r, r-1]";
  s.attributes = {axis};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<SoftmaxNode<Log>>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace

void register_softmax(OpRegistry& registry) { register_softmax_op<false>(registry); }
void register_log_softmax(OpRegistry& registry) { register_softmax_op<true>(registry); }

}  // namespace nodeflow
