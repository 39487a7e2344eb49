// Gather (ONNX Gather-13): the entries of data along `axis` that int64
// indices name (negative ones count from the end), output
// data.shape[:axis] + indices.shape + data.shape[axis+1:]. An index outside
// [-d, d - 1] is refused naming the node: at load when indices is an
// initializer, before any memory is read at run time otherwise. Any dtype;
// the gradient is a scatter-add into data (repeated indices add up).
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/mapped_copy_node.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

// Throws E unless every index is in [-d, d - 1].
template <typename E>
void check_indices(const Tensor& indices, std::int64_t d, std::size_t axis) {
  const auto values = indices.values<std::int64_t>();
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] < -d || values[i] >= d)
      throw E("input 1 (indices): indices[" + std::to_string(i) + "] (flat) = " + std::to_string(values[i]) +
              " is outside [" + std::to_string(-d) + ", " + std::to_string(d - 1) + "] for data axis " +
              std::to_string(axis) + " of length " + std::to_string(d));
}

class GatherNode final : public MappedCopyNode {
 public:
  explicit GatherNode(NodeConfig c)
      : MappedCopyNode(std::move(c)), axis_(attr_int(config().attributes, "axis")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& data = *ctx.inputs[0];
    const TensorInfo& indices = *ctx.inputs[1];
    check_int64_input("Gather", 1, "indices", indices.dtype);
    const std::size_t axis = checked_axis(data.shape.size());
    if (ctx.constants[1] != nullptr && data.shape[axis] != kDynamicDim)
      check_indices<ShapeMismatch>(*ctx.constants[1], data.shape[axis], axis);
    return {TensorInfo{data.dtype, gathered_shape(data.shape, indices.shape, axis)}};
  }

 protected:
  // data viewed as [outer, d, inner], the output as [outer, indices, inner].
  AxisMaps maps_for(const Shape& data, std::span<const Tensor> args) const override {
    const Tensor& indices = args[0];
    check_int64_input("Gather", 1, "indices", indices.dtype());
    const std::size_t axis = checked_axis(data.size());
    const std::int64_t d = data[axis];
    check_indices<RunError>(indices, d, axis);
    const std::int64_t outer = dims_product(data, 0, axis);
    const std::int64_t inner = dims_product(data, axis + 1, data.size());
    const std::int64_t* index = indices.data<std::int64_t>();
    return make_axis_maps(Shape{outer, d, inner}, Shape{outer, indices.numel(), inner},
                          [&](std::size_t a, std::int64_t i) {
                            if (a != 1) return i;
                            return index[i] < 0 ? index[i] + d : index[i];
                          });
  }

  Shape output_shape(const Shape& data, const AxisMaps&, std::span<const Tensor> args) const override {
    return gathered_shape(data, args[0].shape(), normalize_axis(axis_, data.size()));
  }

 private:
  std::size_t checked_axis(std::size_t rank) const {
    if (rank == 0) throw ShapeMismatch("input 0 (data) is a scalar; Gather needs rank >= 1");
    return normalize_axis(axis_, rank);
  }

  static Shape gathered_shape(const Shape& data, const Shape& indices, std::size_t axis) {
    Shape out(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(axis));
    out.insert(out.end(), indices.begin(), indices.end());
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data.end());
    return out;
  }

  std::int64_t axis_;
};

}  // namespace

void register_gather(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Gather";
  s.definition = "ONNX Gather-13";
  s.doc = "Takes the entries of data at indices along axis (negative indices count from the end)";
  s.inputs = {{"data", graph_dtypes(), "rank r >= 1"},
              {"indices", int64_dtypes(), "any shape: entries along axis, in [-d, d-1]"}};
  s.min_inputs = 2;
  s.outputs = {{"output", graph_dtypes(), "data.shape[:axis] + indices.shape + data.shape[axis+1:]"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{0}};
  axis.doc = "the gathered axis of data, in [-r, r-1]";
  s.attributes = {axis};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<GatherNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
