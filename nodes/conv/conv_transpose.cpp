// ConvTranspose (ONNX ConvTranspose-22), any number of spatial axes >= 1,
// with groups, dilations, strides, pads, output_padding, output_shape and
// auto_pad. It is the adjoint of the Conv that conv_transpose_geometry
// describes (input Y's shape, output X's, weight W), so it runs Conv's
// kernels with the roles exchanged (docs/operators.md, "Gradient conventions"):
//   Y  = Conv's input gradient for the output gradient X (W^T X, col2im);
//   dX = Conv's forward of dY (im2col, product);
//   dW = Conv's weight gradient with input dY and output gradient X.
// The images are split across the executor's threads (Conv's kernels run on
// the geometry of each part's images).
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/parallel.hpp"
#include "nodes/conv/conv_kernels.hpp"
#include "nodes/conv/conv_node.hpp"
#include "nodes/conv/conv_ops.hpp"

namespace nodeflow {
namespace {

// The batch splits into one part per thread, at most one per image.
std::int64_t part_count(int threads, const ConvGeometry& g) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(threads, g.batch));
}

// Calls body(part, first, k) for the parts k = 0..parts-1 of the batch on
// their own threads: `part` is g for the images [first, first + part.batch).
template <typename F>
void for_each_part(std::int64_t parts, const ConvGeometry& g, F&& body) {
  parallel_ranges(static_cast<int>(parts), parts, [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      ConvGeometry part = g;
      const std::int64_t first = g.batch * k / parts;
      part.batch = g.batch * (k + 1) / parts - first;
      body(part, first, k);
    }
  });
}

class ConvTransposeNode final : public ConvNodeBase {
 public:
  explicit ConvTransposeNode(NodeConfig c) : ConvNodeBase(std::move(c), true) {}

 private:
  void compute_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                       const ForwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const std::int64_t x_image = g.out_channels * g.output_plane(), y_image = g.in_channels * g.input_plane();
      for_each_part(part_count(ctx.threads, g), g, [&](const ConvGeometry& part, std::int64_t first, std::int64_t) {
        T* yp = y.data<T>() + first * y_image;
        conv_backward<T>(part, nullptr, w.data<T>(), x.data<T>() + first * x_image, yp, nullptr, nullptr,
                         ctx.max_tensor_bytes);
        if (!b.empty()) add_channel_bias(b.data<T>(), part.batch, g.in_channels, g.input_plane(), yp);
      });
    });
  }

  void compute_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& dx,
                        Tensor& dw, Tensor& db, const BackwardContext& ctx) const override {
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dyp = dy.data<T>();
      const std::int64_t x_image = g.out_channels * g.output_plane(), y_image = g.in_channels * g.input_plane();
      // Part 0 adds into dW, the others into zeroed partial sums added after it in order.
      std::vector<Tensor> partial_dw;
      const std::int64_t parts = part_count(ctx.threads, g);
      for (std::int64_t k = 1; k < parts && !dw.empty(); ++k) partial_dw.emplace_back(w.dtype(), w.shape());
      for_each_part(parts, g, [&](const ConvGeometry& part, std::int64_t first, std::int64_t k) {
        if (!dx.empty())
          conv_forward<T>(part, dyp + first * y_image, w.data<T>(), nullptr, dx.data<T>() + first * x_image,
                          ctx.max_tensor_bytes);
        if (!dw.empty())
          conv_backward<T>(part, dyp + first * y_image, w.data<T>(), x.data<T>() + first * x_image, nullptr,
                           k == 0 ? dw.data<T>() : partial_dw[static_cast<std::size_t>(k - 1)].data<T>(), nullptr,
                           ctx.max_tensor_bytes);
      });
      for (const Tensor& p : partial_dw) accumulate_gradient(dw, p, 1.0);
      if (!db.empty()) add_channel_sums(dyp, g.batch, g.in_channels, g.input_plane(), db.data<T>());
    });
  }
};

}  // namespace

void register_conv_transpose(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "ConvTranspose";
  s.definition = "ONNX ConvTranspose-22";
  s.doc = "Transposed convolution of X with W (+ B): strides, pads, dilations, group, output_padding/output_shape";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"W", float_dtypes(), "C x M/group x k1..kn; X's dtype"},
              {"B", float_dtypes(), "optional [M] bias; X's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "N x M x O1..On"}};
  s.attributes = conv_transpose_attribute_specs();
  s.check_attributes = check_conv_transpose_attributes;
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<ConvTransposeNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow
