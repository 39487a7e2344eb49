#pragma once
// What the Conv and ConvTranspose nodes share: the parsed attributes, the
// geometry per (X, W) shape, the dtype and bias checks, shape inference and
// the frame of forward and backward (compute dtypes, saved X and W, the +=
// of the gradients). Each op supplies its geometry and its kernel calls.
#include <memory>
#include <utility>
#include <vector>

#include "core/node.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/conv/conv_geometry.hpp"

namespace nodeflow {

class ConvNodeBase : public Node {
 public:
  std::vector<TensorInfo> infer(const InferContext& ctx) const final;
  void forward(const ForwardContext& ctx) const final;
  void backward(const BackwardContext& ctx) const final;

 protected:
  /// `transposed`: ConvTranspose (geometry from conv_transpose_geometry, Y
  /// is the geometry's input, B has its in_channels), else Conv.
  ConvNodeBase(NodeConfig c, bool transposed);

  /// Y (compute dtype; zero-filled for ConvTranspose, uninitialized for Conv,
  /// whose kernel writes it whole) from X, W and B (empty: none) in the compute dtype.
  virtual void compute_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                               Tensor& y, const ForwardContext& ctx) const = 0;
  /// Adds the gradients for dY into dx, dw, db (empty: not wanted): zero-filled
  /// buffers, or the executor's gradient sums themselves (backward()).
  virtual void compute_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy,
                                Tensor& dx, Tensor& dw, Tensor& db, const BackwardContext& ctx) const = 0;

 private:
  const char* op() const { return transposed_ ? "ConvTranspose" : "Conv"; }
  Shape y_shape(const ConvGeometry& g) const { return transposed_ ? g.input_shape() : g.output_shape(); }
  std::int64_t bias_length(const ConvGeometry& g) const { return transposed_ ? g.in_channels : g.out_channels; }
  void check_bias(const Shape& b, const ConvGeometry& g) const;
  // The geometry of X's and W's shapes, resolved at the first call with them
  // (infer, forward or backward) and then shared.
  std::shared_ptr<const ConvGeometry> geometry(const Shape& x, const Shape& w) const;

  bool transposed_;
  ConvAttributes attrs_;
  ShapeCache<std::pair<Shape, Shape>, ConvGeometry> geometries_;
};

}  // namespace nodeflow
