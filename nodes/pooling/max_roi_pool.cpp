// MaxRoiPool (ONNX MaxRoiPool-22): for each region of interest (a row
// [batch index, x1, y1, x2, y2] of rois) and channel, the largest element of
// each of pooled_shape's bins. The bins are Caffe's and onnxruntime's
// (docs/pooling.md, "MaxRoiPool"); ties and NaN follow MaxPool (the first
// maximum, or the first NaN, in row-major order). Training saves the winner
// of each bin; the gradient of a bin goes to its winner, and rois gets none.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/window_axis.hpp"
#include "nodes/pooling/pool_geometry.hpp"
#include "nodes/pooling/pool_math.hpp"
#include "nodes/pooling/pool_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kOp = "MaxRoiPool";

// Rounded roi corners are clamped to +-2^30: far outside any image
// nodeflow can hold along one axis, and small enough that the bin
// arithmetic (bin index times roi size) stays inside int64.
constexpr double kCornerLimit = 1073741824.0;

// One axis of a roi: its first row (or column) in the image and its size.
struct RoiAxis {
  std::int64_t start = 0;
  std::int64_t size = 1;
  std::int64_t pooled = 1;
  std::int64_t in = 0;
  // Bin i: [floor(i * size / pooled), ceil((i + 1) * size / pooled)) from
  // start, clipped to the image; empty when it lies outside.
  IndexRange bin(std::int64_t i) const {
    const auto clip = [&](std::int64_t v) { return std::min(std::max(v + start, std::int64_t{0}), in); };
    return {clip(floor_div(i * size, pooled)), clip(ceil_div((i + 1) * size, pooled))};
  }
};

class MaxRoiPoolNode final : public Node {
 public:
  explicit MaxRoiPoolNode(NodeConfig config)
      : Node(std::move(config)),
        pooled_(attr_ints(this->config().attributes, "pooled_shape")),
        spatial_scale_(attr_float(this->config().attributes, "spatial_scale")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const TensorInfo& rois = *ctx.inputs[1];
    check_shapes(x, rois);
    return {{x.dtype, {rois.shape[0], x.shape[1], pooled_[0], pooled_[1]}}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const Tensor& rois = ctx.inputs[1];
    check_shapes({x.dtype(), x.shape()}, {rois.dtype(), rois.shape()});
    const Shape out{rois.shape()[0], x.shape()[1], pooled_[0], pooled_[1]};
    Tensor y = Tensor::uninitialized(x.dtype(), out);  // every bin is written
    Tensor argmax;
    if (ctx.saved) {
      check_tensor_bytes("MaxRoiPool's saved argmax", out, DType::Int64, ctx.max_tensor_bytes);
      argmax = Tensor::uninitialized(DType::Int64, out);
    }
    visit_float_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      pool_rois<T>(x, rois, y, argmax, ctx.threads);
    });
    ctx.outputs[0] = y;
    if (ctx.saved) ctx.saved->push_back(argmax);
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) return;
    require_saved(kOp, ctx.saved.size(), 1);
    const Tensor& argmax = ctx.saved[0];
    check_output_gradient(kOp, 0, dy, argmax.shape());
    visit_float_dtype(dx.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      // Summed per element, then added once: an element winning several
      // bins (overlapping bins, several rois) rounds once in float16.
      pool_math::GradSum<T, false> sum(static_cast<std::size_t>(dx.numel()), 1, ctx.scale_for(0));
      const std::int64_t* winner = argmax.data<std::int64_t>();
      const T* g = dy.data<T>();
      for (std::int64_t o = 0; o < dy.numel(); ++o)
        if (winner[o] >= 0) sum.add(winner[o], static_cast<A>(g[o]));
      sum.add_into(dx.values<T>(), ctx.scale_for(0));
    });
  }

 private:
  void check_shapes(const TensorInfo& x, const TensorInfo& rois) const {
    check_float_input(kOp, 0, "X", x.dtype);
    check_same_dtype(kOp, 1, "rois", rois.dtype, "X", x.dtype);
    if (x.shape.size() != 4)
      throw ShapeMismatch("input 0 (X) has shape " + to_string(x.shape) +
                          "; MaxRoiPool needs rank 4 (N x C x H x W)");
    if (rois.shape.size() != 2 || (rois.shape[1] != 5 && rois.shape[1] != kDynamicDim))
      throw ShapeMismatch("input 1 (rois) has shape " + to_string(rois.shape) +
                          "; MaxRoiPool needs num_rois x 5 (batch index, x1, y1, x2, y2)");
  }

  // The roi's axis: corners scaled by spatial_scale (in A, as onnxruntime
  // does in float) and rounded half away from zero, the end inclusive; a
  // malformed roi (end before start) becomes one element wide.
  template <typename A>
  RoiAxis roi_axis(A begin, A end, std::int64_t pooled, std::int64_t in, std::int64_t r) const {
    const auto corner = [&](A v) {
      const A scaled = std::round(v * static_cast<A>(spatial_scale_));
      if (std::isnan(scaled))
        throw RunError("MaxRoiPool: roi " + std::to_string(r) + " has a NaN corner");
      return static_cast<std::int64_t>(std::clamp(static_cast<double>(scaled), -kCornerLimit, kCornerLimit));
    };
    RoiAxis a;
    a.start = corner(begin);
    a.size = std::max(corner(end) - a.start + 1, std::int64_t{1});
    a.pooled = pooled;
    a.in = in;
    return a;
  }

  template <typename T>
  void pool_rois(const Tensor& x, const Tensor& rois, Tensor& y, Tensor& argmax, int threads) const {
    using A = accumulator_t<T>;
    const std::int64_t batch = x.shape()[0], channels = x.shape()[1];
    const std::int64_t height = x.shape()[2], width = x.shape()[3];
    const std::int64_t plane = height * width, bins = pooled_[0] * pooled_[1];
    const std::int64_t count = rois.shape()[0];
    const T* xp = x.data<T>();
    const T* rp = rois.data<T>();
    T* yp = y.data<T>();
    std::int64_t* wp = argmax.empty() ? nullptr : argmax.data<std::int64_t>();
    const int team = y.numel() >= (std::int64_t{1} << 15) ? threads : 1;
    parallel_ranges(team, count, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t r = first; r < last; ++r) {
        const T* roi = rp + 5 * r;
        const A index = static_cast<A>(roi[0]);
        // onnxruntime truncates the batch index to an integer.
        if (!(index > A(-1) && index < static_cast<A>(batch)))
          throw RunError("MaxRoiPool: roi " + std::to_string(r) + " has batch index " +
                         std::to_string(static_cast<double>(index)) + ", outside [0, " +
                         std::to_string(batch) + ")");
        const auto b = static_cast<std::int64_t>(index);
        const RoiAxis w = roi_axis(static_cast<A>(roi[1]), static_cast<A>(roi[3]), pooled_[1], width, r);
        const RoiAxis h = roi_axis(static_cast<A>(roi[2]), static_cast<A>(roi[4]), pooled_[0], height, r);
        for (std::int64_t c = 0; c < channels; ++c) {
          const std::int64_t base = (b * channels + c) * plane;
          const std::int64_t o0 = (r * channels + c) * bins;
          for (std::int64_t i = 0; i < pooled_[0]; ++i) {
            const IndexRange rows = h.bin(i);
            for (std::int64_t j = 0; j < pooled_[1]; ++j) {
              const IndexRange cols = w.bin(j);
              const std::int64_t o = o0 + i * pooled_[1] + j;
              std::int64_t best = -1;
              for (std::int64_t row = rows.begin; row < rows.end; ++row)
                for (std::int64_t col = cols.begin; col < cols.end; ++col) {
                  const std::int64_t k = base + row * width + col;
                  if (best < 0 || pool_math::beats(xp[k], xp[best])) best = k;
                }
              yp[o] = best < 0 ? T(0) : xp[best];  // an empty bin gives 0
              if (wp) wp[o] = best;
            }
          }
        }
      }
    });
  }

  std::vector<std::int64_t> pooled_;
  double spatial_scale_;
};

}  // namespace

void register_max_roi_pool(OpRegistry& registry) {
  OpSchema s;
  s.op_type = kOp;
  s.definition = "ONNX MaxRoiPool-22";
  s.doc = "Max pooling of each roi (batch index, x1, y1, x2, y2 scaled by spatial_scale) to pooled_shape";
  const std::vector<DType> dtypes = float_dtypes();
  TensorSpec rois{"rois", dtypes, "num_rois x 5: batch index, x1, y1, x2, y2"};
  rois.differentiable = false;
  s.inputs = {{"X", dtypes, "N x C x H x W"}, rois};
  s.min_inputs = 2;
  s.outputs = {{"Y", dtypes, "num_rois x C x pooled_h x pooled_w, X's dtype"}};
  AttrSpec pooled;
  pooled.name = "pooled_shape";
  pooled.kind = AttrKind::Ints;
  pooled.required = true;
  pooled.min = 1;
  pooled.limit = kMaxPoolAttribute;
  pooled.min_length = 2;
  pooled.doc = "[pooled_h, pooled_w]: bins per roi";
  s.attributes = {pooled, float_spec("spatial_scale", 1.0, "factor from roi coordinates to X's")};
  s.check_attributes = [](const Attributes& a) {
    const std::vector<std::int64_t>& p = attr_ints(a, "pooled_shape");
    if (p.size() != 2)
      throw InvalidAttribute("attributes.pooled_shape: expected 2 values (pooled_h, pooled_w), got " +
                             to_string(AttrValue(p)));
  };
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<MaxRoiPoolNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow
