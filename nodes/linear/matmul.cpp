// MatMul (ONNX MatMul-13, numpy.matmul semantics): 2-D products, batched
// products with numpy broadcasting of the batch dimensions, and 1-D operands
// promoted to a row (A) or a column (B) whose unit axis is dropped from Y.
// float16 and bfloat16 are multiplied and accumulated in float32, rounded
// once; int64 (forward only) wraps around on overflow as two's complement.
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/linear/matrix_product.hpp"

namespace nodeflow {
namespace {

// Both operands seen as stacks of matrices over broadcast batch dimensions.
struct MatMulShapes {
  Shape a_batch, b_batch, batch;
  std::int64_t m = 1, k = 1, n = 1;
  Shape y;
};

std::string dim(std::int64_t d) { return d == kDynamicDim ? "?" : std::to_string(d); }

MatMulShapes matmul_shapes(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    throw ShapeMismatch("MatMul needs operands of rank >= 1, got A " + to_string(a) + " and B " +
                        to_string(b));
  MatMulShapes s;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  s.m = a_vector ? 1 : a[a.size() - 2];
  s.k = a.back();
  const std::int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  s.n = b_vector ? 1 : b.back();
  if (s.k != kb && s.k != kDynamicDim && kb != kDynamicDim)
    throw ShapeMismatch("inner dimensions differ: A " + to_string(a) + " has K = " + dim(s.k) + ", B " +
                        to_string(b) + " has K = " + dim(kb));
  if (s.k == kDynamicDim) s.k = kb;
  if (!a_vector) s.a_batch.assign(a.begin(), a.end() - 2);
  if (!b_vector) s.b_batch.assign(b.begin(), b.end() - 2);
  try {
    s.batch = broadcast_shapes(s.a_batch, s.b_batch);
  } catch (const ShapeMismatch&) {
    throw ShapeMismatch("batch dimensions of A " + to_string(a) + " and B " + to_string(b) +
                        " do not broadcast");
  }
  s.y = s.batch;
  if (!a_vector) s.y.push_back(s.m);
  if (!b_vector) s.y.push_back(s.n);
  return s;
}

void check_dtypes(DType a, DType b) {
  if (a != DType::Int64) check_float_input("MatMul", 0, "A", a);
  check_same_dtype("MatMul", 1, "B", b, "A", a);
}

// c = a * b for int64 matrices (Eigen's products are instantiated for float
// and double only); unsigned arithmetic wraps instead of overflowing.
void int64_product(std::int64_t m, std::int64_t n, std::int64_t k, const std::int64_t* a,
                   const std::int64_t* b, std::int64_t* c) {
  for (std::int64_t i = 0; i < m; ++i) {
    std::uint64_t* row = reinterpret_cast<std::uint64_t*>(c + i * n);
    for (std::int64_t j = 0; j < n; ++j) row[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      const auto aip = static_cast<std::uint64_t>(a[i * k + p]);
      const std::int64_t* bp = b + p * n;
      for (std::int64_t j = 0; j < n; ++j) row[j] += aip * static_cast<std::uint64_t>(bp[j]);
    }
  }
}

// Calls f(y_matrix, a_matrix, b_matrix) (matrix indices) for every batch entry.
template <typename F> void for_each_matrix(const MatMulShapes& s, F&& f) {
  for_each_broadcast(s.batch, broadcast_strides(s.a_batch, s.batch), broadcast_strides(s.b_batch, s.batch),
                     f);
}

class MatMulNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& a = *ctx.inputs[0];
    check_dtypes(a.dtype, ctx.inputs[1]->dtype);
    return {TensorInfo{a.dtype, matmul_shapes(a.shape, ctx.inputs[1]->shape).y}};
  }

  void forward(const ForwardContext& ctx) const override {
    check_dtypes(ctx.inputs[0].dtype(), ctx.inputs[1].dtype());
    if (ctx.inputs[0].dtype() == DType::Int64) {
      ctx.outputs[0] = int64_forward(ctx.inputs[0], ctx.inputs[1]);
      return;
    }
    const Tensor a = to_compute(ctx.inputs[0]);
    const Tensor b = to_compute(ctx.inputs[1]);
    const MatMulShapes s = matmul_shapes(a.shape(), b.shape());
    Tensor y = Tensor::uninitialized(a.dtype(), s.y);
    visit_compute_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      T* yp = y.data<T>();
      for_each_matrix(s, [&](std::int64_t iy, std::int64_t ia, std::int64_t ib) {
        matrix_product<T>(s.m, s.n, s.k, T(1), ap + ia * s.m * s.k, false, bp + ib * s.k * s.n, false, T(0),
                          yp + iy * s.m * s.n, ctx.threads);
      });
    });
    ctx.outputs[0] = as_dtype(y, ctx.inputs[0].dtype());
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {a, b});
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty()) return;
    require_saved("MatMul", ctx.saved.size(), 2);
    const Tensor& a = ctx.saved[0];
    const Tensor& b = ctx.saved[1];
    const Tensor dy = to_compute(ctx.grad_outputs[0]);
    const MatMulShapes s = matmul_shapes(a.shape(), b.shape());
    check_output_gradient("MatMul", 0, dy, s.y);
    const bool want_a = !ctx.grad_inputs[0].empty();
    const bool want_b = !ctx.grad_inputs[1].empty();
    Tensor da = want_a ? Tensor(a.dtype(), a.shape()) : Tensor{};
    Tensor db = want_b ? Tensor(b.dtype(), b.shape()) : Tensor{};
    visit_compute_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* g = dy.data<T>();
      // Broadcast batch entries add into the same matrix: the sum over the
      // broadcast axes comes out of the accumulation (beta = 1).
      for_each_matrix(s, [&](std::int64_t iy, std::int64_t ia, std::int64_t ib) {
        const T* gy = g + iy * s.m * s.n;
        if (want_a)  // dA = dY * B^T
          matrix_product<T>(s.m, s.k, s.n, T(1), gy, false, b.data<T>() + ib * s.k * s.n, true, T(1),
                            da.data<T>() + ia * s.m * s.k, ctx.threads);
        if (want_b)  // dB = A^T * dY
          matrix_product<T>(s.k, s.n, s.m, T(1), a.data<T>() + ia * s.m * s.k, true, gy, false, T(1),
                            db.data<T>() + ib * s.k * s.n, ctx.threads);
      });
    });
    accumulate_gradient(ctx.grad_inputs[0], da, ctx.scale_for(0));
    accumulate_gradient(ctx.grad_inputs[1], db, ctx.scale_for(1));
  }

 private:
  static Tensor int64_forward(const Tensor& a, const Tensor& b) {
    const MatMulShapes s = matmul_shapes(a.shape(), b.shape());
    Tensor y = Tensor::uninitialized(DType::Int64, s.y);
    for_each_matrix(s, [&](std::int64_t iy, std::int64_t ia, std::int64_t ib) {
      int64_product(s.m, s.n, s.k, a.data<std::int64_t>() + ia * s.m * s.k,
                    b.data<std::int64_t>() + ib * s.k * s.n, y.data<std::int64_t>() + iy * s.m * s.n);
    });
    return y;
  }
};

}  // namespace

void register_matmul(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "MatMul";
  s.definition = "ONNX MatMul-13";
  s.doc = "Matrix product as numpy.matmul: batch axes broadcast, 1-D inputs promoted";
  std::vector<DType> dtypes = float_dtypes();
  dtypes.push_back(DType::Int64);
  s.inputs = {{"A", dtypes, "... x M x K (numpy matmul; 1-D promoted)"}, {"B", dtypes, "... x K x N; A's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", dtypes, "broadcast batch x M x N; float16/bfloat16 accumulate in float32"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<MatMulNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
