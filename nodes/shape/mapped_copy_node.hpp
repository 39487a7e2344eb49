#pragma once
// The node the data-movement ops (Slice, Pad, Expand, Tile, Gather) share:
// forward is copy_mapped through the op's AxisMaps, backward the
// scatter-add through the same maps. An op supplies its shape inference and
// its maps; the maps depend on the input's shape and the op's other inputs
// (starts, pads, repeats, indices, ...), which training-mode forwards save
// so that backward rebuilds the same maps. The ops read those inputs with
// nodes/common/constant_inputs.hpp.
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

}  // namespace nodeflow
