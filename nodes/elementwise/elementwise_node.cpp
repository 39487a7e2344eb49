#include "nodes/elementwise/elementwise_node.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/errors.hpp"

namespace nodeflow::elementwise {

void check_dtype_in(const std::string& op, std::size_t index, const std::string& input_name, DType dtype,
                    const std::vector<DType>& allowed) {
  for (DType d : allowed)
    if (d == dtype) return;
  std::string list;
  for (DType d : allowed) list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  throw UnsupportedDType(op + " does not take dtype " + std::string(dtype_name(dtype)) + " (input " +
                         std::to_string(index) + " (" + input_name + "); allowed: " + list + ")");
}

std::vector<DType> signed_dtypes() {
  std::vector<DType> out;
  for (DType d : kGraphDTypes)
    if (d != DType::UInt8) out.push_back(d);
  return out;
}

std::vector<DType> float_and_int64_dtypes() {
  std::vector<DType> out = float_dtypes();
  out.push_back(DType::Int64);
  return out;
}

namespace {

class BroadcastNode final : public Node {
 public:
  BroadcastNode(NodeConfig config, std::shared_ptr<const BroadcastOp> op)
      : Node(std::move(config)), op_(*op), keep_(std::move(op)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < ctx.inputs.size(); ++k) {
      const TensorInfo& in = *ctx.inputs[k];
      if (k == 0 || op_.exponent_dtypes.empty())
        check_dtype_in(op_.op_type, k, name_of(k), in.dtype, op_.dtypes);
      if (k > 0 && op_.exponent_dtypes.empty())
        check_same_dtype(op_.op_type, k, name_of(k), in.dtype, name_of(0), ctx.inputs[0]->dtype);
      if (k > 0 && !op_.exponent_dtypes.empty())
        check_dtype_in(op_.op_type, k, name_of(k), in.dtype, op_.exponent_dtypes);
      shapes.push_back(in.shape);
    }
    const Shape out = broadcast_shapes(shapes);
    if (op_.unidirectional && !fits(out, shapes[0]))
      throw ShapeMismatch("input 1 (" + name_of(1) + ") " + to_string(shapes[1]) + " does not broadcast to " +
                          "the shape " + to_string(shapes[0]) + " of input 0 (" + name_of(0) + ")");
    return {TensorInfo{ctx.inputs[0]->dtype, op_.unidirectional ? shapes[0] : out}};
  }

  void forward(const ForwardContext& ctx) const override {
    const DType dtype = ctx.inputs[0].dtype();
    const DType compute = compute_dtype(dtype);
    std::vector<Tensor> x;
    x.reserve(ctx.inputs.size());
    for (const Tensor& in : ctx.inputs) x.push_back(as_dtype(in, compute));
    // A left fold; from the third input on, the running result is our own
    // buffer and is updated in place while its shape does not grow.
    Tensor acc = x[0];
    for (std::size_t k = 1; k < x.size(); ++k) {
      const Shape shape = broadcast_shapes(acc.shape(), x[k].shape());
      Tensor next = k > 1 && shape == acc.shape() ? acc : Tensor::uninitialized(compute, shape);
      op_.apply(acc, x[k], next, ctx.threads);
      acc = std::move(next);
    }
    if (op_.mean && x.size() > 1) divide(acc, static_cast<double>(x.size()), ctx.threads);
    ctx.outputs[0] = as_dtype(acc, dtype);
    if (ctx.saved && op_.saves) {
      ctx.saved->insert(ctx.saved->end(), x.begin(), x.end());
      ctx.saved->push_back(acc);
    }
  }

  bool overwrites_gradients() const override { return op_.overwrites; }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    if (dy.empty()) {
      for (std::size_t k = 0; k < ctx.grad_inputs.size(); ++k) ctx.zero_if_overwritten(k);
      return;
    }
    std::vector<Shape> shapes;
    for (const TensorInfo& in : ctx.inputs) shapes.push_back(in.shape);
    check_output_gradient(op_.op_type, 0, dy, broadcast_shapes(shapes));
    const std::size_t n = ctx.inputs.size();
    if (op_.saves) require_saved(op_.op_type, ctx.saved.size(), n + 1);
    const std::span<const Tensor> x = op_.saves ? ctx.saved.first(n) : std::span<const Tensor>{};
    const Tensor y = op_.saves ? ctx.saved[n] : Tensor{};
    op_.backward(GradientArgs{x, y, to_compute(dy), ctx});
  }

 private:
  std::string name_of(std::size_t k) const {
    return op_.input_names[std::min(k, op_.input_names.size() - 1)];
  }

  // True when a broadcast to `out` leaves `x`'s shape as it is (a dynamic axis may be anything).
  static bool fits(const Shape& out, const Shape& x) {
    if (out.size() != x.size()) return false;
    for (std::size_t a = 0; a < x.size(); ++a)
      if (x[a] != kDynamicDim && out[a] != x[a]) return false;
    return true;
  }

  static void divide(Tensor& t, double n, int threads) {
    visit_compute_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* p = t.data<T>();
      const auto d = static_cast<T>(n);
      parallel_ranges(t.numel() < kParallelElements ? 1 : threads, t.numel(), [&](std::int64_t b, std::int64_t e) {
        Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(p + b, e - b) /= d;
      });
    });
  }

  const BroadcastOp& op_;
  std::shared_ptr<const BroadcastOp> keep_;  // op_'s owner, shared with the schema
};

}  // namespace

BroadcastOp binary_op(std::string op_type, int version, std::string op_doc, std::string doc, std::vector<DType> dtypes,
                      std::vector<std::string> input_names, std::string output_name) {
  BroadcastOp op;
  op.definition = "ONNX " + op_type + "-" + std::to_string(version);
  op.op_type = std::move(op_type);
  op.op_doc = std::move(op_doc);
  op.doc = std::move(doc);
  op.dtypes = std::move(dtypes);
  op.input_names = std::move(input_names);
  op.output_name = std::move(output_name);
  return op;
}

BroadcastOp variadic_op(std::string op_type, std::string op_doc, std::string output_name, std::string doc,
                        std::vector<DType> dtypes) {
  BroadcastOp op;
  op.definition = "ONNX " + op_type + "-13";
  op.op_type = std::move(op_type);
  op.op_doc = std::move(op_doc);
  op.doc = std::move(doc);
  op.dtypes = std::move(dtypes);
  op.input_names = {"data_0"};
  op.output_name = std::move(output_name);
  op.variadic = true;
  return op;
}

void register_broadcast_op(OpRegistry& registry, BroadcastOp op) {
  auto shared = std::make_shared<const BroadcastOp>(std::move(op));
  OpSchema s;
  s.op_type = shared->op_type;
  s.definition = shared->definition;
  s.doc = shared->op_doc;
  const std::string rule = shared->unidirectional ? "broadcasts to input 0's shape (unidirectional)"
                                                  : "broadcasts with the others (numpy rules)";
  for (std::size_t k = 0; k < shared->input_names.size(); ++k) {
    const bool exponent = k > 0 && !shared->exponent_dtypes.empty();
    TensorSpec in{shared->input_names[k], exponent ? shared->exponent_dtypes : shared->dtypes,
                  k == 0 ? "any shape" : rule + (exponent ? "; converted to input 0's dtype" : "; input 0's dtype")};
    in.variadic = shared->variadic;
    if (shared->variadic) in.doc = "1 or more tensors of one dtype; " + rule;
    s.inputs.push_back(std::move(in));
  }
  s.min_inputs = shared->variadic ? 1 : 2;
  s.outputs = {{shared->output_name, shared->dtypes, shared->doc}};
  s.create = [shared](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<BroadcastNode>(std::move(c), shared);
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow::elementwise
