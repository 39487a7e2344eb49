#pragma once
// Shared base of the pooling nodes that map N x C x D1..Dn to a pooled
// N x C x O1..On (AveragePool, MaxPool, LpPool and their Global forms): the
// attributes are parsed once at construction and the geometry is resolved
// once per input shape; shape inference and the dtype rule live here, the
// kernels in fast/pool_fast.hpp.
#include <memory>
#include <string>
#include <vector>

#include "core/node.hpp"
#include "core/registry.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow {

class PoolNode : public Node {
 public:
  /// Throws InvalidAttribute (see parse_pool_attributes).
  PoolNode(NodeConfig config, PoolKind kind);

  const PoolAttributes& attributes() const { return attrs_; }

  /// Y: the input's dtype, N x C x O1..On (dynamic dims stay dynamic); for
  /// MaxPool asked for 2 outputs, Indices: int64 of Y's shape. Throws
  /// UnsupportedDType or ShapeMismatch (wrong rank, output < 1, empty window).
  std::vector<TensorInfo> infer(const InferContext& ctx) const override;

 protected:
  /// Checks the dtype; the geometry of a run's input.
  std::shared_ptr<const PoolGeometry> geometry(const Tensor& x) const;
  /// The geometry of the forward's input, once the gradients are checked to
  /// fit it; refuses integer dtypes (not differentiable).
  std::shared_ptr<const PoolGeometry> backward_geometry(const BackwardContext& ctx) const;

 private:
  /// pool_geometry() of `input_shape`, resolved at the first call with that
  /// shape (infer, forward or backward) and then shared.
  std::shared_ptr<const PoolGeometry> resolved(const Shape& input_shape) const;

  PoolAttributes attrs_;
  ShapeCache<Shape, PoolGeometry> geometries_;
};

/// Schema skeleton of a pooling op: op_type, definition "ONNX <op>-22", input
/// X and output Y of pool_dtypes(kind), the attribute specs and rules; the
/// caller adds further inputs and outputs and the factory.
OpSchema pool_schema(PoolKind kind);

/// True when the backward has something to do: a gradient arrives on output 0
/// and input 0's gradient is wanted.
bool has_work(const BackwardContext& ctx);

}  // namespace nodeflow
