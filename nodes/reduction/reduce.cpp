// ReduceSum-13, ReduceMean-18, ReduceProd-18, ReduceMax-20, ReduceMin-20,
// ReduceL2-18, ReduceSumSquare-18, ReduceLogSumExp-18: one node class over
// ReduceKind, the axes from the optional constant `axes` input.
#include <memory>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/reduction/reduce_common.hpp"
#include "nodes/reduction/reduce_kernels.hpp"
#include "nodes/reduction/reduction_ops.hpp"

namespace nodeflow {
namespace {

bool takes_small_ints(ReduceKind kind) { return kind == ReduceKind::Max || kind == ReduceKind::Min; }

class ReduceNode final : public Node {
 public:
  ReduceNode(NodeConfig c, ReduceKind kind)
      : Node(std::move(c)),
        kind_(kind),
        op_(reduce_op_name(kind)),
        dtypes_(reduce_dtypes(takes_small_ints(kind))),
        keepdims_(attr_int(config().attributes, "keepdims") != 0),
        noop_(attr_int(config().attributes, "noop_with_empty_axes") != 0) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_reduce_dtype(op_, x.dtype, dtypes_);
    const Tensor* axes = nullptr;
    if (ctx.inputs.size() > 1 && ctx.inputs[1] != nullptr) {
      check_int64_input(op_, 1, "axes", ctx.inputs[1]->dtype);
      axes = ctx.constants[1];
      if (axes == nullptr)
        throw ShapeMismatch("input 1 (axes) must be a constant (a non-trainable initializer)");
    }
    return {TensorInfo{x.dtype, reduced_shape(x.shape, mask(x.shape.size(), axes), keepdims_)}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& input = ctx.inputs[0];
    check_reduce_dtype(op_, input.dtype(), dtypes_);
    const std::vector<bool> reduced = mask(input.rank(), present(ctx.inputs, 1));
    const ReducePlan plan = make_reduce_plan(input.shape(), reduced);
    const Tensor x = to_compute(input);
    const Tensor y = reduce_forward(kind_, plan, x, reduced_shape(input.shape(), reduced, keepdims_), ctx.threads);
    ctx.outputs[0] = as_dtype(y, input.dtype());
    if (!ctx.saved) return;
    // The mask (backward has no axes input) and what the gradient reads.
    std::vector<std::int64_t> flags(reduced.begin(), reduced.end());
    ctx.saved->push_back(Tensor::from<std::int64_t>({static_cast<std::int64_t>(flags.size())}, flags));
    const ReduceNeeds needs = reduce_backward_needs(kind_);
    ctx.saved->push_back(needs.input ? x : Tensor());
    ctx.saved->push_back(needs.output ? y : Tensor());
  }

  // The gradient of a sum or mean is dy spread over the input: each element
  // written once, so straight into an uninitialised buffer.
  bool overwrites_gradients() const override { return kind_ == ReduceKind::Sum || kind_ == ReduceKind::Mean; }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty() || ctx.grad_inputs[0].empty()) {
      ctx.zero_if_overwritten(0);
      return;
    }
    require_saved(op_, ctx.saved.size(), 3);
    const auto flags = ctx.saved[0].values<std::int64_t>();
    const std::vector<bool> reduced(flags.begin(), flags.end());
    const Shape& shape = ctx.inputs[0].shape;
    check_output_gradient(op_, 0, ctx.grad_outputs[0], reduced_shape(shape, reduced, keepdims_));
    const ReducePlan plan = make_reduce_plan(shape, reduced);
    const DType compute = compute_dtype(ctx.inputs[0].dtype);
    const Tensor dy = as_dtype(ctx.grad_outputs[0], compute);
    Tensor& dst = ctx.grad_inputs[0];
    const double scale = ctx.scale_for(0);
    // Written straight into the gradient buffer when it has the compute
    // dtype: one pass over it instead of three.
    if (dst.dtype() == compute) {
      reduce_backward(kind_, plan, ctx.saved[1], ctx.saved[2], dy, dst, scale, ctx.threads, ctx.overwrites(0));
      return;
    }
    ctx.zero_if_overwritten(0);
    Tensor dx(compute, shape);
    reduce_backward(kind_, plan, ctx.saved[1], ctx.saved[2], dy, dx, 1.0, ctx.threads, false);
    accumulate_gradient(dst, dx, scale);
  }

 private:
  // `axes` null or empty: absent.
  std::vector<bool> mask(std::size_t rank, const Tensor* axes) const {
    const bool given = axes != nullptr && !axes->empty();
    return reduced_axes(given ? int64_list(op_, 1, "axes", *axes) : std::span<const std::int64_t>{}, rank, noop_);
  }

  ReduceKind kind_;
  std::string op_;
  std::vector<DType> dtypes_;
  bool keepdims_;
  bool noop_;
};

// `what` completes "the ... of the elements" in the docs.
// `doc` is the op's one line (OpSchema::doc).
void register_reduce(OpRegistry& registry, ReduceKind kind, int version, const std::string& what,
                     const std::string& doc) {
  const std::string op = reduce_op_name(kind);
  const std::vector<DType> dtypes = reduce_dtypes(takes_small_ints(kind));
  OpSchema s;
  s.op_type = op;
  s.definition = "ONNX " + op + "-" + std::to_string(version);
  s.doc = doc;
  s.inputs = {{"data", dtypes, "any shape (rank 0 too)"},
              {"axes", int64_dtypes(),
               "1-D: the axes reduced, each in [-r, r-1], no repeats; absent or empty: every axis "
               "(none with noop_with_empty_axes)",
               /*constant=*/true}};
  s.outputs = {{"reduced", dtypes, "the " + what + " of the elements; data's dtype, reduced axes 1 or dropped"}};
  AttrSpec keepdims = keepdims_spec("1: reduced axes stay, with length 1; 0: they are dropped");
  AttrSpec noop = flag_spec("noop_with_empty_axes",
                            "1: absent or empty axes reduce nothing (each element is only mapped); 0: every axis");
  noop.since_version = kind == ReduceKind::Sum ? 13 : 18;
  s.attributes = {keepdims, noop};
  s.create = [kind](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<ReduceNode>(std::move(c), kind);
  };
  registry.add(std::move(s));
}

}  // namespace

void register_reduce_sum(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::Sum, 13, "sum",
                  "Sum over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_mean(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::Mean, 18, "mean",
                  "Mean over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_prod(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::Prod, 18, "product",
                  "Product over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_max(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::Max, 20, "maximum",
                  "Max over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_min(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::Min, 20, "minimum",
                  "Min over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_l2(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::L2, 18, "Euclidean norm (sqrt of the sum of squares)",
                  "sqrt of the sum of squares over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_sum_square(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::SumSquare, 18, "sum of the squares",
                  "Sum of squares over axes (all if absent unless noop_with_empty_axes); keepdims");
}
void register_reduce_log_sum_exp(OpRegistry& registry) {
  register_reduce(registry, ReduceKind::LogSumExp, 18, "log of the sum of the exponentials",
                  "log of the sum of exp over axes (all if absent unless noop_with_empty_axes); keepdims");
}

}  // namespace nodeflow
