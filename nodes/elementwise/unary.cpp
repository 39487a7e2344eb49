// The unary elementwise ops: Neg-13, Abs-13, Exp-13, Log-13, Sqrt-13,
// Reciprocal-13, Erf-13, Identity-21. Y has X's shape and dtype. Float results
// are IEEE's (log(0) = -inf, sqrt(-1) = nan, 1/-0 = -inf, no error); Neg and
// Abs of integers wrap around (Neg(-128) = -128 in int8); Erf of an integer is
// erf's value truncated toward zero. Gradients for float X, with Abs'(0) = 0
// (docs/operators.md, "Gradient conventions").
#include <cmath>
#include <functional>
#include <numbers>

#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

enum class Unary { Neg, Abs, Exp, Log, Sqrt, Reciprocal, Erf, Identity };

// Whether backward reads X (else Y, the output), for the ops that need either.
bool backward_reads_x(Unary op) { return op == Unary::Abs || op == Unary::Log || op == Unary::Erf; }
bool backward_reads_y(Unary op) { return op == Unary::Exp || op == Unary::Sqrt || op == Unary::Reciprocal; }

template <typename T> using Array = Eigen::Array<T, Eigen::Dynamic, 1>;

// Calls body(begin, end) over [0, n) on `threads` threads when n is large.
void flat_ranges(int threads, std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body) {
  parallel_ranges(n < kParallelElements ? 1 : threads, n, body);
}

template <typename T> void unary_forward(Unary op, const T* x, T* y, std::int64_t n) {
  const Eigen::Map<const Array<T>> in(x, n);
  Eigen::Map<Array<T>> out(y, n);
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Unary::Neg: out = -in; return;
      case Unary::Abs: out = in.abs(); return;
      // std::exp, std::log and std::sqrt, not Eigen's packets: in float32
      // those give a normal number, not 0, for exp(-inf); log(FLT_MIN) for a
      // subnormal x; 0 for the square root of a subnormal and NaN for that of
      // +inf.
      case Unary::Exp: out = in.unaryExpr([](T v) { return std::exp(v); }); return;
      case Unary::Log: out = in.unaryExpr([](T v) { return std::log(v); }); return;
      case Unary::Sqrt: out = in.unaryExpr([](T v) { return std::sqrt(v); }); return;
      case Unary::Reciprocal: out = in.inverse(); return;
      case Unary::Erf: out = in.unaryExpr([](T v) { return std::erf(v); }); return;
      case Unary::Identity: out = in; return;
    }
  } else {
    // The dtype checks leave Neg, Abs, Erf and Identity for integers.
    switch (op) {
      case Unary::Neg: out = in.unaryExpr([](T v) { return wrap_sub(T(0), v); }); return;
      case Unary::Abs:
        out = in.unaryExpr([](T v) {
          if constexpr (std::is_signed_v<T>)
            return v < 0 ? wrap_sub(T(0), v) : v;
          else
            return v;
        });
        return;
      case Unary::Erf:
        out = in.unaryExpr([](T v) { return static_cast<T>(std::erf(static_cast<double>(v))); });
        return;
      default: out = in; return;
    }
  }
}

// dst (n elements) += scale * dY * Y'(X); `w` is X or Y as backward_reads_* say.
template <typename T> void unary_backward(Unary op, const T* g, const T* w, T* dst, T scale, std::int64_t n) {
  const Eigen::Map<const Array<T>> dy(g, n);
  const Eigen::Map<const Array<T>> v(w ? w : g, n);
  Eigen::Map<Array<T>> d(dst, n);
  switch (op) {
    case Unary::Neg: d -= scale * dy; return;
    case Unary::Abs: d += scale * dy * v.sign(); return;  // sign(0) = 0
    case Unary::Exp: d += scale * dy * v; return;
    case Unary::Log: d += scale * dy / v; return;
    case Unary::Sqrt: d += scale * dy / (T(2) * v); return;
    case Unary::Reciprocal: d -= scale * dy * v * v; return;
    case Unary::Erf: d += (scale * T(2 * std::numbers::inv_sqrtpi)) * dy * (-v * v).exp(); return;
    case Unary::Identity: d += scale * dy; return;
  }
}

class UnaryNode final : public Node {
 public:
  UnaryNode(NodeConfig config, Unary op, std::vector<DType> dtypes, std::string input_name)
      : Node(std::move(config)), op_(op), dtypes_(std::move(dtypes)), input_name_(std::move(input_name)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    check_dtype_in(op_type(), 0, input_name_, ctx.inputs[0]->dtype, dtypes_);
    return {*ctx.inputs[0]};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& in = ctx.inputs[0];
    if (op_ == Unary::Identity) {
      ctx.outputs[0] = in;  // tensors are immutable handles: sharing the buffer is a copy
      return;
    }
    const Tensor x = to_compute(in);
    Tensor y = Tensor::uninitialized(x.dtype(), x.shape());
    visit_kernel_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      flat_ranges(ctx.threads, x.numel(),
                  [&](std::int64_t b, std::int64_t e) { unary_forward<T>(op_, xp + b, yp + b, e - b); });
    });
    ctx.outputs[0] = as_dtype(y, in.dtype());
    if (ctx.saved && backward_reads_x(op_)) ctx.saved->push_back(x);
    if (ctx.saved && backward_reads_y(op_)) ctx.saved->push_back(y);
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dst = ctx.grad_inputs[0];
    if (dy.empty() || dst.empty()) return;
    check_output_gradient(op_type(), 0, dy, ctx.inputs[0].shape);
    const bool reads = backward_reads_x(op_) || backward_reads_y(op_);
    if (reads) require_saved(op_type(), ctx.saved.size(), 1);
    const Tensor g = to_compute(dy);
    const double scale = ctx.scale_for(0);
    // Straight into dst when it is in the compute dtype, else through a buffer.
    const bool direct = dst.dtype() == g.dtype();
    Tensor sink = direct ? dst : Tensor(g.dtype(), g.shape());
    visit_compute_dtype(g.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* gp = g.data<T>();
      const T* wp = reads ? ctx.saved[0].data<T>() : nullptr;
      T* sp = sink.data<T>();
      const auto k = static_cast<T>(direct ? scale : 1.0);
      flat_ranges(ctx.threads, g.numel(), [&](std::int64_t b, std::int64_t e) {
        unary_backward<T>(op_, gp + b, wp ? wp + b : nullptr, sp + b, k, e - b);
      });
    });
    if (!direct) accumulate_gradient(dst, sink, scale);
  }

 private:
  Unary op_;
  std::vector<DType> dtypes_;
  std::string input_name_;
};

// `op_doc` is the op's one line (OpSchema::doc), `doc` the output's start.
void register_unary(OpRegistry& registry, const std::string& op_type, int version, const std::string& op_doc,
                    Unary op, std::vector<DType> dtypes, const std::string& doc) {
  OpSchema s;
  s.op_type = op_type;
  s.definition = "ONNX " + op_type + "-" + std::to_string(version);
  s.doc = op_doc;
  // ONNX's names: Exp, Log, Erf and Identity read "input" and write "output".
  const bool long_names = op == Unary::Exp || op == Unary::Log || op == Unary::Erf || op == Unary::Identity;
  const std::string input = long_names ? "input" : "X";
  s.inputs = {{input, dtypes, "any shape"}};
  s.outputs = {{long_names ? "output" : "Y", dtypes, doc + "; the input's shape and dtype"}};
  s.create = [op, dtypes, input](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<UnaryNode>(std::move(c), op, dtypes, input);
  };
  registry.add(std::move(s));
}

}  // namespace
}  // namespace elementwise

void register_neg(OpRegistry& registry) {
  elementwise::register_unary(registry, "Neg", 13, "Elementwise -X",
                              elementwise::Unary::Neg, elementwise::signed_dtypes(),
                              "-X; integers wrap around");
}
void register_abs(OpRegistry& registry) {
  elementwise::register_unary(registry, "Abs", 13, "Elementwise |X|",
                              elementwise::Unary::Abs, graph_dtypes(),
                              "|X|; integers wrap around");
}
void register_exp(OpRegistry& registry) {
  elementwise::register_unary(registry, "Exp", 13, "Elementwise e^X",
                              elementwise::Unary::Exp, float_dtypes(), "e^X");
}
void register_log(OpRegistry& registry) {
  elementwise::register_unary(registry, "Log", 13, "Elementwise natural logarithm of X",
                              elementwise::Unary::Log, float_dtypes(),
                              "natural log of X (IEEE: -inf at 0, nan below)");
}
void register_sqrt(OpRegistry& registry) {
  elementwise::register_unary(registry, "Sqrt", 13, "Elementwise square root of X",
                              elementwise::Unary::Sqrt, float_dtypes(),
                              "square root of X (IEEE: nan below 0)");
}
void register_reciprocal(OpRegistry& registry) {
  elementwise::register_unary(registry, "Reciprocal", 13, "Elementwise 1 / X",
                              elementwise::Unary::Reciprocal, float_dtypes(),
                              "1 / X (IEEE: inf at 0)");
}
void register_erf(OpRegistry& registry) {
  elementwise::register_unary(registry, "Erf", 13, "Elementwise error function of X",
                              elementwise::Unary::Erf, graph_dtypes(),
                              "the error function of X; integers: truncated");
}
void register_identity(OpRegistry& registry) {
  elementwise::register_unary(registry, "Identity", 21, "Y = X (no copy)",
                              elementwise::Unary::Identity, graph_dtypes(),
                              "X itself (shares its buffer)");
}

}  // namespace nodeflow
