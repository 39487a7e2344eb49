// Split (ONNX Split-18): input cut along `axis` (in [-r, r-1]) into the
// node's outputs, whose lengths are the constant int64 input `split` (>= 0,
// adding up to the axis length), or with `num_outputs` chunks of
// ceil(n / num_outputs) with a smaller last one, or with neither equal parts
// (the axis length divisible by the output count). Any dtype. The input's
// gradient is the output gradients joined back, zero where one is absent.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/pieces.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

class SplitNode final : public Node {
 public:
  explicit SplitNode(NodeConfig c)
      : Node(std::move(c)),
        axis_(attr_int(config().attributes, "axis")),
        num_outputs_(optional_int(config().attributes, "num_outputs")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const std::size_t axis = normalize_axis(axis_, x.shape.size());
    const Tensor* split = ctx.inputs.size() > 1 && ctx.inputs[1] ? ctx.constants[1] : nullptr;
    if (ctx.inputs.size() > 1 && ctx.inputs[1] && split == nullptr)
      throw InvalidGraph("input 1 (split) must be a non-trainable initializer");
    std::vector<TensorInfo> out(ctx.num_outputs, x);
    if (x.shape[axis] == kDynamicDim) {
      // The lengths are known only when given.
      if (split != nullptr) {
        const std::vector<std::int64_t> sizes = given_sizes(*split, ctx.num_outputs);
        for (std::size_t k = 0; k < out.size(); ++k) out[k].shape[axis] = sizes[k];
      }
      return out;
    }
    const std::vector<std::int64_t> sizes = lengths(x.shape[axis], split, ctx.num_outputs, axis);
    for (std::size_t k = 0; k < out.size(); ++k) out[k].shape[axis] = sizes[k];
    return out;
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const std::size_t axis = normalize_axis(axis_, x.rank());
    const Tensor* split = ctx.inputs.size() > 1 && !ctx.inputs[1].empty() ? &ctx.inputs[1] : nullptr;
    const std::vector<std::int64_t> sizes = lengths(x.shape()[axis], split, ctx.outputs.size(), axis);
    std::vector<Tensor> pieces;
    for (const std::int64_t n : sizes) {
      Shape s = x.shape();
      s[axis] = n;
      pieces.push_back(Tensor::uninitialized(x.dtype(), s));
    }
    copy_pieces(piece_layout(x.shape(), axis, sizes), pieces, x, PieceDirection::WholeToPieces, ctx.threads);
    // Backward needs the lengths even when some output gradients are absent.
    if (ctx.saved != nullptr && split != nullptr) ctx.saved->push_back(*split);
    for (std::size_t k = 0; k < pieces.size(); ++k) ctx.outputs[k] = std::move(pieces[k]);
  }

  void backward(const BackwardContext& ctx) const override {
    Tensor& dx = ctx.grad_inputs[0];
    if (dx.empty()) return;
    const std::size_t axis = normalize_axis(axis_, dx.rank());
    std::vector<std::int64_t> sizes;
    std::vector<Tensor> dy(ctx.grad_outputs.begin(), ctx.grad_outputs.end());
    for (const Tensor& g : dy) {
      if (g.empty()) {
        sizes.clear();
        break;
      }
      sizes.push_back(g.shape()[axis]);
    }
    if (sizes.empty()) {
      // An absent gradient gives no shape: recompute the lengths.
      const Tensor* split = ctx.saved.empty() ? nullptr : &ctx.saved[0];
      sizes = lengths(dx.shape()[axis], split, dy.size(), axis);
    }
    add_pieces(piece_layout(dx.shape(), axis, sizes), dy, dx, PieceDirection::PiecesToWhole,
               std::vector<double>(dy.size(), ctx.scale_for(0)), ctx.threads);
  }

 private:
  // The `split` values, one per output.
  static std::vector<std::int64_t> given_sizes(const Tensor& split, std::size_t outputs) {
    const auto given = int64_list("Split", 1, "split", split);
    std::vector<std::int64_t> sizes(given.begin(), given.end());
    if (sizes.size() != outputs)
      throw ShapeMismatch("input 1 (split): " + to_string(AttrValue{sizes}) + " has " +
                          std::to_string(sizes.size()) + " sizes for " + std::to_string(outputs) + " outputs");
    return sizes;
  }

  // The outputs' lengths along the axis (length n).
  std::vector<std::int64_t> lengths(std::int64_t n, const Tensor* split, std::size_t outputs,
                                    std::size_t axis) const {
    if (split != nullptr) {
      if (num_outputs_)
        throw InvalidAttribute("attributes.num_outputs: Split takes either the input split or num_outputs, not both");
      std::vector<std::int64_t> sizes = given_sizes(*split, outputs);
      std::int64_t sum = 0;
      bool ok = true;
      for (const std::int64_t s : sizes) ok = ok && s >= 0 && !__builtin_add_overflow(sum, s, &sum);
      if (!ok || sum != n)
        throw ShapeMismatch("input 1 (split): split sizes " + to_string(AttrValue{sizes}) +
                            " must be >= 0 and add up to " + std::to_string(n) + " (axis " + std::to_string(axis) +
                            ")");
      return sizes;
    }
    const auto count = static_cast<std::int64_t>(outputs);
    if (num_outputs_) {
      if (*num_outputs_ != count)
        throw InvalidAttribute("attributes.num_outputs: " + std::to_string(*num_outputs_) + ", but the node has " +
                               std::to_string(count) + " outputs");
      // ONNX Split-18: chunks of ceil(n / count), the last one smaller.
      const std::int64_t chunk = n / count + (n % count != 0);
      std::int64_t used = 0;
      if (__builtin_mul_overflow(chunk, count - 1, &used) || used > n)
        throw InvalidAttribute("attributes.num_outputs: " + std::to_string(count) + " chunks of " +
                               std::to_string(chunk) + " do not fit an axis of length " + std::to_string(n));
      std::vector<std::int64_t> sizes(outputs, chunk);
      sizes.back() = n - used;
      return sizes;
    }
    if (n % count != 0)
      throw ShapeMismatch("axis " + std::to_string(axis) + " of length " + std::to_string(n) +
                          " does not split into " + std::to_string(count) +
                          " equal parts (give the input split or num_outputs)");
    return std::vector<std::int64_t>(outputs, n / count);
  }

  std::int64_t axis_;
  std::optional<std::int64_t> num_outputs_;
};

}  // namespace

void register_split(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Split";
  s.definition = "ONNX Split-18";
  s.doc = "Splits along axis into parts of the lengths split, or num_outputs (near-)equal parts";
  s.inputs = {{"input", graph_dtypes(), "any rank >= 1"},
              {"split", int64_dtypes(), "1-D: the outputs' lengths along axis, adding up to its length",
               /*constant=*/true}};
  s.min_inputs = 1;
  TensorSpec outputs{"outputs", graph_dtypes(), "input's dtype; the pieces along axis, in order"};
  outputs.variadic = true;
  s.outputs = {outputs};
  s.default_output_count = [](const Attributes& a) {
    const auto n = optional_int(a, "num_outputs");
    return n ? static_cast<std::size_t>(*n) : std::size_t{0};
  };
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{0}};
  axis.doc = "the axis to split, in [-r, r-1]";
  AttrSpec num_outputs;
  num_outputs.name = "num_outputs";
  num_outputs.kind = AttrKind::Int;
  num_outputs.min = 1;
  num_outputs.limit = 65536;
  num_outputs.since_version = 18;
  num_outputs.doc = "the number of outputs, chunks of ceil(n / num_outputs) (the last smaller); not with split";
  s.attributes = {axis, num_outputs};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<SplitNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
