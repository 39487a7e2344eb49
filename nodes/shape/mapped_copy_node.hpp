#pragma once
// The node the data-movement ops (Slice, Pad, Expand, Tile, Gather) share:
// forward is copy_mapped through the op's AxisMaps, backward the
// scatter-add through the same maps. An op supplies its shape inference and
// its maps; the maps depend on the input's shape and the op's other inputs
// (starts, pads, repeats, indices, ...), which training-mode forwards save
// so that backward rebuilds the same maps.
#include <span>
#include <string>
#include <vector>

#include "core/node.hpp"
#include "nodes/shape/axis_maps.hpp"

namespace nodeflow {

class MappedCopyNode : public Node {
 public:
  using Node::Node;

  void forward(const ForwardContext& ctx) const override;
  /// The gradient of input 0 (data); the other inputs get none.
  void backward(const BackwardContext& ctx) const override;

 protected:
  /// The maps for data of shape `data` (static) and the node's other inputs
  /// `args` (inputs 1, 2, ...; absent ones empty). Throws for values the
  /// op refuses (at run time: indices out of range).
  virtual AxisMaps maps_for(const Shape& data, std::span<const Tensor> args) const = 0;
  /// The shape of the output, which the maps may view with another rank
  /// (Gather's [outer, indices, inner]); default maps.output.
  virtual Shape output_shape(const Shape& data, const AxisMaps& maps, std::span<const Tensor> args) const;
  /// The element kFill positions take (Pad's constant_value); null: zero.
  virtual const Tensor* fill_value(const Tensor& data, std::span<const Tensor> args) const;
};

/// The values of input k (`name`), which must be a 1-D int64 tensor (or a
/// TensorInfo saying so): "input 1 (starts) has shape [2, 2]; Slice needs a
/// 1-D int64 tensor".
std::span<const std::int64_t> int64_list(const std::string& op, std::size_t k, const std::string& name,
                                         const Tensor& t);
void check_int64_list(const std::string& op, std::size_t k, const std::string& name, const TensorInfo& t);

/// ONNX axes values (input k, `name`) normalized to [0, rank): refused when
/// one is outside [-rank, rank - 1] or repeats.
std::vector<std::size_t> normalized_axes(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                                         const std::string& name);

/// args[i] when present (not absent, not beyond the inputs given), else null.
const Tensor* present(std::span<const Tensor> args, std::size_t i);

/// "input 1 (starts)": how the messages of these ops name an input.
std::string input_name(std::size_t k, const std::string& name);

}  // namespace nodeflow
