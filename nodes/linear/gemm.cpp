// Gemm (ONNX Gemm-13): Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A,
// B' = transB ? B^T : B, C optional and unidirectionally broadcast to M x N.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/linear/matrix_product.hpp"

namespace nodeflow {
namespace {

struct GemmSizes {
  std::int64_t m, k, n;
};

std::string dim(std::int64_t d) { return d == kDynamicDim ? "?" : std::to_string(d); }

class GemmNode final : public Node {
 public:
  explicit GemmNode(NodeConfig c)
      : Node(std::move(c)),
        alpha_(attr_float(config().attributes, "alpha")),
        beta_(attr_float(config().attributes, "beta")),
        trans_a_(attr_int(config().attributes, "transA") != 0),
        trans_b_(attr_int(config().attributes, "transB") != 0) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& a = *ctx.inputs[0];
    check_float_input("Gemm", 0, "A", a.dtype);
    check_same_dtype("Gemm", 1, "B", ctx.inputs[1]->dtype, "A", a.dtype);
    const GemmSizes s = sizes(a.shape, ctx.inputs[1]->shape);
    if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
      check_same_dtype("Gemm", 2, "C", ctx.inputs[2]->dtype, "A", a.dtype);
      check_c(ctx.inputs[2]->shape, s);
    }
    return {TensorInfo{a.dtype, {s.m, s.n}}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor a = to_compute(ctx.inputs[0]);
    const Tensor b = to_compute(ctx.inputs[1]);
    const Tensor c = ctx.inputs.size() > 2 ? to_compute(ctx.inputs[2]) : Tensor{};
    const GemmSizes s = sizes(a.shape(), b.shape());
    if (!c.empty()) check_c(c.shape(), s);
    Tensor y(a.dtype(), {s.m, s.n});
    visit_compute_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* yp = y.data<T>();
      if (!c.empty()) {
        const T* cp = c.data<T>();
        const auto beta = static_cast<T>(beta_);
        for_each_broadcast(y.shape(), broadcast_strides(c.shape(), y.shape()),
                           broadcast_strides(y.shape(), y.shape()),
                           [&](std::int64_t i, std::int64_t ic, std::int64_t) { yp[i] = beta * cp[ic]; });
      }
      matrix_product<T>(s.m, s.n, s.k, static_cast<T>(alpha_), a.data<T>(), trans_a_, b.data<T>(),
                        trans_b_, T(c.empty() ? 0 : 1), yp, ctx.threads);
    });
    ctx.outputs[0] = as_dtype(y, ctx.inputs[0].dtype());
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {a, b});
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty()) return;
    require_saved("Gemm", ctx.saved.size(), 2);
    const Tensor dy = to_compute(ctx.grad_outputs[0]);
    const Tensor& a = ctx.saved[0];
    const Tensor& b = ctx.saved[1];
    const GemmSizes s = sizes(a.shape(), b.shape());
    check_output_gradient("Gemm", 0, dy, {s.m, s.n});
    visit_compute_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const auto alpha = static_cast<T>(alpha_);
      const T* g = dy.data<T>();
      // A gradient of the compute dtype and scale 1 takes the product with
      // beta = 1 in place (the += contract); any other goes through a buffer.
      auto target = [&](std::size_t k, const Tensor& like) {
        const Tensor& g_in = ctx.grad_inputs[k];
        return ctx.scale_for(k) == 1.0 && g_in.dtype() == like.dtype() && g_in.numel() == like.numel()
                   ? g_in
                   : Tensor(like.dtype(), like.shape());
      };
      auto add_into_gradient = [&](std::size_t k, const Tensor& t) {
        if (t.raw() != ctx.grad_inputs[k].raw()) accumulate_gradient(ctx.grad_inputs[k], t, ctx.scale_for(k));
      };
      if (!ctx.grad_inputs[0].empty()) {
        Tensor da = target(0, a);
        if (trans_a_)  // dA (K x M) += alpha * B' * dY^T
          matrix_product<T>(s.k, s.m, s.n, alpha, b.data<T>(), trans_b_, g, true, T(1), da.data<T>(), ctx.threads);
        else  // dA (M x K) += alpha * dY * B'^T
          matrix_product<T>(s.m, s.k, s.n, alpha, g, false, b.data<T>(), !trans_b_, T(1), da.data<T>(), ctx.threads);
        add_into_gradient(0, da);
      }
      if (!ctx.grad_inputs[1].empty()) {
        Tensor db = target(1, b);
        if (trans_b_)  // dB (N x K) += alpha * dY^T * A'
          matrix_product<T>(s.n, s.k, s.m, alpha, g, true, a.data<T>(), trans_a_, T(1), db.data<T>(), ctx.threads);
        else  // dB (K x N) += alpha * A'^T * dY
          matrix_product<T>(s.k, s.n, s.m, alpha, a.data<T>(), !trans_a_, g, false, T(1), db.data<T>(), ctx.threads);
        add_into_gradient(1, db);
      }
      if (ctx.grad_inputs.size() > 2 && !ctx.grad_inputs[2].empty()) {
        // dC = beta * dY summed over the axes C was broadcast along.
        const Shape& c_shape = ctx.inputs[2].shape;
        Tensor dc(a.dtype(), c_shape);
        T* dcp = dc.data<T>();
        const auto beta = static_cast<T>(beta_);
        for_each_broadcast(dy.shape(), broadcast_strides(c_shape, dy.shape()),
                           broadcast_strides(dy.shape(), dy.shape()),
                           [&](std::int64_t i, std::int64_t ic, std::int64_t) { dcp[ic] += beta * g[i]; });
        accumulate_gradient(ctx.grad_inputs[2], dc, ctx.scale_for(2));
      }
    });
  }

 private:
  GemmSizes sizes(const Shape& a, const Shape& b) const {
    if (a.size() != 2)
      throw ShapeMismatch("input 0 (A) has shape " + to_string(a) + "; Gemm needs a matrix (rank 2)");
    if (b.size() != 2)
      throw ShapeMismatch("input 1 (B) has shape " + to_string(b) + "; Gemm needs a matrix (rank 2)");
    const GemmSizes s{trans_a_ ? a[1] : a[0], trans_a_ ? a[0] : a[1], trans_b_ ? b[0] : b[1]};
    const std::int64_t kb = trans_b_ ? b[1] : b[0];
    if (s.k != kb && s.k != kDynamicDim && kb != kDynamicDim)
      throw ShapeMismatch("inner dimensions differ: A " + to_string(a) + (trans_a_ ? " (transA)" : "") +
                          " gives K = " + dim(s.k) + ", B " + to_string(b) + (trans_b_ ? " (transB)" : "") +
                          " gives K = " + dim(kb));
    return s;
  }

  static void check_c(const Shape& c, const GemmSizes& s) {
    const Shape y{s.m, s.n};
    bool ok = c.size() <= 2;
    for (std::size_t i = 0; ok && i < c.size(); ++i) {
      const std::int64_t want = y[2 - c.size() + i];
      ok = c[i] == 1 || c[i] == want || c[i] == kDynamicDim || want == kDynamicDim;
    }
    if (!ok)
      throw ShapeMismatch("input 2 (C) has shape " + to_string(c) +
                          ", which does not broadcast to the output [" + dim(s.m) + ", " + dim(s.n) + "]");
  }

  double alpha_;
  double beta_;
  bool trans_a_;
  bool trans_b_;
};

}  // namespace

void register_gemm(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Gemm";
  s.definition = "ONNX Gemm-13";
  s.doc = "alpha * A' * B' + beta * C, A' and B' optionally transposed (transA, transB); C broadcasts";
  s.inputs = {{"A", float_dtypes(), "M x K, or K x M with transA"},
              {"B", float_dtypes(), "K x N, or N x K with transB; A's dtype"},
              {"C", float_dtypes(), "optional bias, broadcast to M x N; A's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "M x N"}};
  s.attributes = {float_spec("alpha", 1.0, "factor on A' * B'"),
                  float_spec("beta", 1.0, "factor on C"),
                  flag_spec("transA", "1: A is K x M and is transposed"),
                  flag_spec("transB", "1: B is N x K and is transposed")};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<GemmNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
