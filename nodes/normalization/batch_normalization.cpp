// BatchNormalization (ONNX BatchNormalization-15) with the toolkit's training
// mode (docs/graph-format.md, "training and lda_coeff").
//
// X is N x C x D1..Dn (n >= 0); scale, B, input_mean, input_var are [C], each
// of any float dtype. Per channel c:
//   Y = scale * (X - mu) / sqrt(sigma2 + epsilon) + B.
// Inference (a plain run, or `training` false): mu, sigma2 are the running
// statistics input_mean, input_var, which stay as they are.
// Training mode (ForwardContext::saved != nullptr): mu, sigma2 are the batch
// mean and the biased batch variance (divided by N*D1*..*Dn); a batch with a
// single value per channel is a RunError. The running statistics follow ONNX:
//   running = momentum * running + (1 - momentum) * batch_stat
// (default momentum 0.9, biased variance), pushed to ForwardContext::updates as
// (3, new mean) and (4, new variance) and given as the optional outputs
// running_mean, running_var (which in inference mode repeat the inputs; they
// carry no gradient).
// PyTorch's BatchNorm momentum is the complement (momentum_pt = 1 - momentum)
// and it updates running_var with the unbiased variance (times m / (m - 1),
// m = N*D1*..*Dn); normalization itself uses the biased variance in both.
// Gradients: X, scale and B (batch statistics as functions of X); none for
// input_mean and input_var, which Y does not read in training mode.
// training_mode (ONNX BatchNormalization-14 and later), when given, decides
// the mode as ONNX defines it, whatever the run: 1 normalizes with the batch
// statistics and gives the updated running statistics as outputs 1 and 2 (in
// a training run of a node with `training` true they also update the
// initializers, as above); 0 normalizes with input_mean and input_var, in a
// training run too, where the gradients then treat them as constants:
//   dX = scale * dY / sqrt(var + epsilon), dscale = sum dY * xhat, dB = sum dY.
//   d input_mean = -scale * sum dY / sqrt(var + epsilon),
//   d input_var = -scale / 2 * sum dY * xhat / (var + epsilon).
// Absent, the run decides (ONNX's default 0 is an inference run's mode). As in
// ONNX, training_mode 1 needs all three outputs and 0 only Y.
// A running variance below 0 is refused (InvalidAttribute naming the channel
// and the value) in either mode, since no variance is negative and inference
// would give NaN for the whole channel: at load when input_var is a constant
// (non-trainable initializer), else when it arrives at run time. NaN passes
// through as IEEE arithmetic says, like NaN in any other input.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/vector_lanes.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

constexpr const char* kInputNames[] = {"X", "scale", "B", "input_mean", "input_var"};
// The partial sums of a channel's sums (channel_sums): the lanes of
// nodes/common/vector_lanes.hpp, so that the compiler keeps them in
// registers and vectorizes the additions whatever the instruction set.
using lanes::kLanes;
using lanes::Lanes;
using lanes::load_lanes;
using lanes::store_lanes;
// The last `count` (< kLanes) elements of a row, then `pad`.
template <typename T> [[gnu::always_inline]] inline Lanes<T> load_tail(const T* p, std::int64_t count, T pad) {
  T t[kLanes];
  for (std::int64_t j = 0; j < kLanes; ++j) t[j] = j < count ? p[j] : pad;
  return load_lanes(t);
}

struct ChannelView {
  std::int64_t n, c, s;  // batch, channels, spatial size
};

ChannelView channel_view(const Shape& x) { return {x[0], x[1], dims_product(x, 2, x.size())}; }

// The loops over one block of images of one channel (BatchNormalizationNode::
// channel_sums): their lanes summed row after row.
template <typename T>
[[gnu::always_inline]] inline void block_sum(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1,
                                                    const T* x, T* out) {
  Lanes<T> acc = {};
  for (std::int64_t n = n0; n < n1; ++n) {
    const T* row = x + (n * v.c + c) * v.s;
    std::int64_t i = 0;
    for (; i + kLanes <= v.s; i += kLanes) acc += load_lanes(row + i);
    if (i < v.s) acc += load_tail(row + i, v.s - i, T(0));
  }
  store_lanes(out, acc);
}

template <typename T>
[[gnu::always_inline]] inline void block_squares(ChannelView v, std::int64_t c, std::int64_t n0,
                                                        std::int64_t n1, const T* x, T mu, T* out) {
  Lanes<T> sq = {};
  for (std::int64_t n = n0; n < n1; ++n) {
    const T* row = x + (n * v.c + c) * v.s;
    std::int64_t i = 0;
    for (; i + kLanes <= v.s; i += kLanes) {
      const Lanes<T> d = load_lanes(row + i) - mu;
      sq += d * d;
    }
    if (i < v.s) {
      const Lanes<T> d = load_tail(row + i, v.s - i, mu) - mu;  // padding with mu adds 0
      sq += d * d;
    }
  }
  store_lanes(out, sq);
}

// sum dY and sum dY * xhat over the block's rows of channel c, xhat = (x - mu) * is.
template <typename T>
[[gnu::always_inline]] inline void block_gradient_sums(ChannelView v, std::int64_t c, std::int64_t n0,
                                                              std::int64_t n1, const T* g, const T* x, T mu, T is,
                                                              T* out) {
  Lanes<T> a1 = {}, a2 = {};
  for (std::int64_t n = n0; n < n1; ++n) {
    const std::int64_t base = (n * v.c + c) * v.s;
    std::int64_t i = 0;
    for (; i + kLanes <= v.s; i += kLanes) {
      const Lanes<T> d = load_lanes(g + base + i);
      a1 += d;
      a2 += d * ((load_lanes(x + base + i) - mu) * is);
    }
    if (i < v.s) {
      const Lanes<T> d = load_tail(g + base + i, v.s - i, T(0));
      a1 += d;
      a2 += d * ((load_tail(x + base + i, v.s - i, mu) - mu) * is);
    }
  }
  store_lanes(out, a1);
  store_lanes(out + kLanes, a2);
}

// The block loops for each instruction set (NODEFLOW_LANES_CLONES,
// nodes/common/vector_lanes.hpp).
#define NODEFLOW_BN_BLOCKS(T, SUFFIX, ...)                                                                        \
  __VA_ARGS__ void block_sum_##T##SUFFIX(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1,         \
                                         const T* x, T* out) {                                             \
    block_sum<T>(v, c, n0, n1, x, out);                                                                           \
  }                                                                                                               \
  __VA_ARGS__ void block_squares_##T##SUFFIX(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1,     \
                                             const T* x, T mu, T* out) {                                   \
    block_squares<T>(v, c, n0, n1, x, mu, out);                                                                   \
  }                                                                                                               \
  __VA_ARGS__ void block_gradient_sums_##T##SUFFIX(ChannelView v, std::int64_t c, std::int64_t n0,                \
                                                   std::int64_t n1, const T* g, const T* x, T mu, T is,           \
                                                   T* out) {                                               \
    block_gradient_sums<T>(v, c, n0, n1, g, x, mu, is, out);                                                      \
  }
NODEFLOW_LANES_CLONES(NODEFLOW_BN_BLOCKS)
#define NODEFLOW_BN_OVERLOADS(T)                                                                                   \
  void block_sum_of(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1, const T* x, T* out) { \
    NODEFLOW_LANES_PICK(block_sum_##T)(v, c, n0, n1, x, out);                                                         \
  }                                                                                                                \
  void block_squares_of(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1, const T* x, T mu,         \
                        T* out) {                                                                           \
    NODEFLOW_LANES_PICK(block_squares_##T)(v, c, n0, n1, x, mu, out);                                                 \
  }                                                                                                                \
  void block_gradient_sums_of(ChannelView v, std::int64_t c, std::int64_t n0, std::int64_t n1, const T* g,         \
                              const T* x, T mu, T is, T* out) {                                             \
    NODEFLOW_LANES_PICK(block_gradient_sums_##T)(v, c, n0, n1, g, x, mu, is, out);                                    \
  }
NODEFLOW_BN_OVERLOADS(float)
NODEFLOW_BN_OVERLOADS(double)
#undef NODEFLOW_BN_OVERLOADS
#undef NODEFLOW_BN_BLOCKS

class BatchNormalizationNode final : public Node {
 public:
  explicit BatchNormalizationNode(NodeConfig c)
      : Node(std::move(c)),
        epsilon_(attr_float(config().attributes, "epsilon")),
        momentum_(attr_float(config().attributes, "momentum")) {
    if (const auto mode = optional_int(config().attributes, "training_mode")) training_mode_ = *mode != 0;
  }

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_float_input("BatchNormalization", 0, "X", x.dtype);
    check_shapes(x.shape, [&](std::size_t k) { return ctx.inputs[k]->shape; });
    for (std::size_t k = 1; k < 5; ++k) check_float_input("BatchNormalization", k, kInputNames[k], ctx.inputs[k]->dtype);
    if (ctx.constants.size() > 4 && ctx.constants[4]) check_variance(*ctx.constants[4]);
    // ONNX ties the outputs to the mode (BatchNormalization-14's inference).
    if (training_mode_ && ctx.num_outputs != (*training_mode_ ? 3u : 1u))
      throw InvalidAttribute(std::string("attributes.training_mode: ") + (*training_mode_ ? "1" : "0") +
                             " needs " +
                             (*training_mode_ ? "all three outputs (Y, running_mean, running_var)"
                                              : "the one output Y") +
                             ", as ONNX defines it; the node has " + std::to_string(ctx.num_outputs));
    return {x, *ctx.inputs[3], *ctx.inputs[4]};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x_in = ctx.inputs[0];
    check_shapes(x_in.shape(), [&](std::size_t k) { return ctx.inputs[k].shape(); });
    check_variance(ctx.inputs[4]);
    const Tensor x = to_compute(x_in);
    const DType ct = x.dtype();
    const Tensor scale = as_dtype(ctx.inputs[1], ct);
    const Tensor bias = as_dtype(ctx.inputs[2], ct);
    const ChannelView v = channel_view(x.shape());
    // Batch statistics or the running ones; what backward needs is kept
    // whenever the node trains (ctx.saved), in either mode.
    const bool training = training_mode_.value_or(ctx.saved != nullptr);
    const bool keep = ctx.saved != nullptr;
    if (training && v.n * v.s <= 1)
      throw RunError("BatchNormalization in training mode needs more than one value per channel, got input shape " +
                     to_string(x.shape()));
    Tensor mean = training ? Tensor(ct, {v.c}) : as_dtype(ctx.inputs[3], ct);
    Tensor var = training ? Tensor(ct, {v.c}) : as_dtype(ctx.inputs[4], ct);
    Tensor y = Tensor::uninitialized(ct, x.shape());  // written whole below
    Tensor invstd(ct, {v.c});
    visit_compute_dtype(ct, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.data<T>();
      T* mp = mean.data<T>();
      T* vp = var.data<T>();
      T* isp = invstd.data<T>();
      T* yp = y.data<T>();
      const T* gp = scale.data<T>();
      const T* bp = bias.data<T>();
      const auto eps = static_cast<T>(epsilon_);
      if (training) {
        // Two passes (mean, then squared deviations): no cancellation for large means.
        const auto m = static_cast<T>(v.n * v.s);
        const auto sums = channel_sums<1, T>(ctx.threads, v, [=](std::int64_t c, std::int64_t n0, std::int64_t n1,
                                                                 T* out) { block_sum_of(v, c, n0, n1, xp, out); });
        for (std::int64_t c = 0; c < v.c; ++c) mp[c] = lane_sum(sums, c) / m;
        const auto squares =
            channel_sums<1, T>(ctx.threads, v, [=](std::int64_t c, std::int64_t n0, std::int64_t n1, T* out) {
              block_squares_of(v, c, n0, n1, xp, mp[c], out);
            });
        for (std::int64_t c = 0; c < v.c; ++c) vp[c] = lane_sum(squares, c) / m;
      }
      for (std::int64_t c = 0; c < v.c; ++c) isp[c] = T(1) / std::sqrt(vp[c] + eps);
      // Rows (image, channel) in memory order. The loops capture by value: a
      // float held by reference may alias the outputs for the compiler, which
      // then keeps the loops scalar.
      for_rows(ctx.threads, v, [=](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
          const std::int64_t c = r % v.c;
          const T mu = mp[c], is = isp[c], g = gp[c], b = bp[c];
          for (std::int64_t i = r * v.s; i < (r + 1) * v.s; ++i) yp[i] = g * ((xp[i] - mu) * is) + b;
        }
      });
    });
    ctx.outputs[0] = as_dtype(y, x_in.dtype());
    if (!training) {
      for (std::size_t k = 1; k < ctx.outputs.size(); ++k) ctx.outputs[k] = ctx.inputs[2 + k];
    } else {
      Tensor running_mean = running_update(ctx.inputs[3], mean);
      Tensor running_var = running_update(ctx.inputs[4], var);
      if (ctx.outputs.size() > 1) ctx.outputs[1] = running_mean;
      if (ctx.outputs.size() > 2) ctx.outputs[2] = running_var;
      if (keep && ctx.updates) {  // a node with training false changes no initializer
        ctx.updates->emplace_back(3, running_mean);
        ctx.updates->emplace_back(4, running_var);
      }
    }
    // Backward recomputes xhat = (X - mean) * invstd from X (a reference, not
    // a copy): the same values, without writing and reading a tensor of X's size.
    if (keep)
      ctx.saved->insert(ctx.saved->end(),
                        {x, mean, invstd, scale, Tensor::from<std::uint8_t>({}, {std::uint8_t{training}})});
  }

  void backward(const BackwardContext& ctx) const override {
    if (ctx.grad_outputs[0].empty()) return;
    require_saved("BatchNormalization", ctx.saved.size(), 5);
    const Tensor& x = ctx.saved[0];  // xhat = (X - mean) * invstd per channel
    const Tensor& mean = ctx.saved[1];
    const Tensor& invstd = ctx.saved[2];
    const Tensor& scale = ctx.saved[3];
    const bool batch_statistics = ctx.saved[4].data<std::uint8_t>()[0] != 0;
    const DType ct = x.dtype();
    check_output_gradient("BatchNormalization", 0, ctx.grad_outputs[0], x.shape());
    const Tensor dy = to_compute(ctx.grad_outputs[0]);
    const ChannelView v = channel_view(x.shape());
    // dX goes straight into the gradient buffer (+=) when that holds the
    // compute dtype and the scale is 1: the same sums as a separate dX added
    // by accumulate_gradient, without its buffer and its extra pass.
    Tensor& dx_sum = ctx.grad_inputs[0];
    const bool dx_direct = !dx_sum.empty() && dx_sum.dtype() == ct && ctx.scale_for(0) == 1.0 &&
                           dx_sum.numel() == x.numel();
    Tensor dx = dx_direct || dx_sum.empty() ? Tensor{} : Tensor::uninitialized(ct, x.shape());
    Tensor dscale(ct, {v.c});
    Tensor dbias(ct, {v.c});
    // Constant statistics are inputs Y reads: their gradients too.
    Tensor dmean = batch_statistics ? Tensor{} : Tensor(ct, {v.c});
    Tensor dvar = batch_statistics ? Tensor{} : Tensor(ct, {v.c});
    visit_compute_dtype(ct, [&](auto tag) {
      using T = decltype(tag);
      const T* g = dy.data<T>();
      const T* xp = x.data<T>();
      const T* mp = mean.data<T>();
      const T* sp = scale.data<T>();
      const T* isp = invstd.data<T>();
      T* dxp = dx_direct ? dx_sum.data<T>() : dx.empty() ? nullptr : dx.data<T>();
      const bool add = dx_direct;
      T* dsp = dscale.data<T>();
      T* dbp = dbias.data<T>();
      const auto m = static_cast<T>(v.n * v.s);
      T* dmp = batch_statistics ? nullptr : dmean.data<T>();
      T* dvp = batch_statistics ? nullptr : dvar.data<T>();
      const auto sums = channel_sums<2, T>(ctx.threads, v, [=](std::int64_t c, std::int64_t n0, std::int64_t n1,
                                                               T* out) {
        block_gradient_sums_of(v, c, n0, n1, g, xp, mp[c], isp[c], out);
      });
      for (std::int64_t c = 0; c < v.c; ++c) {
        dbp[c] = lane_sum(sums, 2 * c);
        dsp[c] = lane_sum(sums, 2 * c + 1);
        if (dmp) {  // constant statistics: a per-channel affine map of X
          const T k = sp[c] * isp[c];
          dmp[c] = -k * dbp[c];
          dvp[c] = T(-0.5) * k * isp[c] * dsp[c];  // d/dvar of (x - mu) / sqrt(var + eps)
        }
      }
      if (!dxp) return;
      for_rows(ctx.threads, v, [=](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
          const std::int64_t c = r % v.c, b0 = r * v.s, e = b0 + v.s;
          const T mu = mp[c], is = isp[c], sum_dy = dbp[c], sum_dy_h = dsp[c];
          if (dmp) {
            const T k = sp[c] * is;
            if (add)
              for (std::int64_t i = b0; i < e; ++i) dxp[i] += k * g[i];
            else
              for (std::int64_t i = b0; i < e; ++i) dxp[i] = k * g[i];
            continue;
          }
          // The batch mean and variance depend on X: their terms are the two sums.
          const T k = sp[c] * is / m;
          if (add)
            for (std::int64_t i = b0; i < e; ++i) dxp[i] += k * (m * g[i] - sum_dy - ((xp[i] - mu) * is) * sum_dy_h);
          else
            for (std::int64_t i = b0; i < e; ++i) dxp[i] = k * (m * g[i] - sum_dy - ((xp[i] - mu) * is) * sum_dy_h);
        }
      });
    });
    const Tensor* grads[] = {&dx, &dscale, &dbias, &dmean, &dvar};
    for (std::size_t k = dx_direct ? 1 : 0; k < (batch_statistics ? 3u : 5u); ++k)
      if (!ctx.grad_inputs[k].empty()) accumulate_gradient(ctx.grad_inputs[k], *grads[k], ctx.scale_for(k));
  }

 private:
  template <typename ShapeOf> static void check_shapes(const Shape& x, ShapeOf&& shape_of) {
    if (x.size() < 2)
      throw ShapeMismatch("input 0 (X) has shape " + to_string(x) +
                          "; BatchNormalization needs N x C x D1 ... (rank >= 2)");
    for (std::size_t k = 1; k < 5; ++k) {
      const Shape s = shape_of(k);
      if (s.size() != 1 || (s[0] != x[1] && s[0] != kDynamicDim && x[1] != kDynamicDim))
        throw ShapeMismatch("input " + std::to_string(k) + " (" + kInputNames[k] + ") has shape " + to_string(s) +
                            "; it needs [C] = [" + (x[1] == kDynamicDim ? "?" : std::to_string(x[1])) + "]");
    }
  }

  // input_var holds no value below 0 (NaN passes).
  static void check_variance(const Tensor& var) {
    visit_float_dtype(var.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* v = var.data<T>();
      for (std::int64_t c = 0; c < var.numel(); ++c)
        if (static_cast<double>(v[c]) < 0)
          throw InvalidAttribute("input 4 (input_var): channel " + std::to_string(c) + " holds " +
                                 to_string(AttrValue{static_cast<double>(v[c])}) +
                                 "; a variance cannot be below 0 (the channel's outputs would be NaN)");
    });
  }

  // A channel's sums run in kLanes partial sums (element j of a row goes to
  // lane j mod kLanes): independent lanes the compiler vectorizes (a single
  // running sum is a chain of dependent additions, 4 cycles each). The batch
  // is cut into blocks of consecutive images, fixed by N alone; each block's
  // lanes are summed over its rows, and the blocks' lanes added in block
  // order, then pairwise across the lanes (lane_total): a fixed order, so the
  // same bits for any thread count. The threads split the blocks, that is the
  // batch, as Conv and the elementwise nodes split it: each reads the images
  // it wrote, where a split of the channels had every thread read half of
  // its rows from the other's cache (docs/architecture.md, "Threads").
  static constexpr std::int64_t kBatchBlocks = 8;

  // The K lane vectors part(c, n0, n1, out) writes for the blocks [n0, n1) of
  // channel c, added over the blocks: vector k of channel c at (c * K + k) *
  // kLanes. (Passed as plain floats: a lane vector's alignment differs
  // between the instruction sets of the clones.)
  template <std::size_t K, typename T, typename Part>
  static std::vector<T> channel_sums(int threads, ChannelView v, Part part) {
    const std::int64_t blocks = std::clamp<std::int64_t>(v.n, 1, kBatchBlocks);
    const std::int64_t item = static_cast<std::int64_t>(K) * kLanes, channels = v.c * item;
    std::vector<T> sums(static_cast<std::size_t>(blocks * channels));
    T* out = sums.data();
    for_items(threads, v, blocks * v.c, [=](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) {
        const std::int64_t b = i / v.c;
        part(i % v.c, v.n * b / blocks, v.n * (b + 1) / blocks, out + i * item);
      }
    });
    for (std::int64_t b = 1; b < blocks; ++b)
      for (std::int64_t j = 0; j < channels; ++j) out[j] += out[b * channels + j];
    sums.resize(static_cast<std::size_t>(channels));
    return sums;
  }

  // The total of lane vector `index` of channel_sums' result.
  template <typename T> static T lane_sum(const std::vector<T>& sums, std::int64_t index) {
    return lane_total<T>(load_lanes(sums.data() + index * kLanes));
  }

  // The kLanes partial sums added pairwise (lane j + lane j + width, halving).
  template <typename T> [[gnu::always_inline]] static inline T lane_total(Lanes<T> v) {
    T acc[kLanes];
    std::memcpy(acc, &v, sizeof acc);
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
    return acc[0];
  }

  // body(first, end) over up to `threads` ranges of [0, items); one range
  // below 2^15 elements of X per thread (a parallel region costs microseconds).
  template <typename F> static void for_items(int threads, ChannelView v, std::int64_t items, F&& body) {
    const std::int64_t team =
        std::clamp<std::int64_t>(v.n * v.c * v.s / (std::int64_t{1} << 15), 1, std::max(1, threads));
    parallel_ranges(static_cast<int>(team), items, body);
  }
  // body(first row, end) over the rows (image, channel) of X, in memory order.
  template <typename F> static void for_rows(int threads, ChannelView v, F&& body) {
    for_items(threads, v, v.n * v.c, std::forward<F>(body));
  }

  // momentum * running + (1 - momentum) * batch, in the running statistic's dtype.
  Tensor running_update(const Tensor& running, const Tensor& batch) const {
    const Tensor r = to_compute(running);
    const Tensor b = as_dtype(batch, r.dtype());
    Tensor out(r.dtype(), r.shape());
    visit_compute_dtype(r.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const auto mom = static_cast<T>(momentum_);
      for (std::int64_t c = 0; c < out.numel(); ++c)
        out.data<T>()[c] = mom * r.data<T>()[c] + (T(1) - mom) * b.data<T>()[c];
    });
    return as_dtype(out, running.dtype());
  }

  double epsilon_;
  double momentum_;
  std::optional<bool> training_mode_;  // the attribute; absent: the run decides
};

}  // namespace

void register_batch_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "BatchNormalization";
  s.definition = "ONNX BatchNormalization-15";
  s.doc = "Per channel scale * (X - mean) / sqrt(var + epsilon) + B; training: batch stats, running stats updated";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"scale", float_dtypes(), "[C]"},
              {"B", float_dtypes(), "[C] bias"},
              {"input_mean", float_dtypes(), "[C] running mean"},
              {"input_var", float_dtypes(), "[C] running variance, >= 0"}};
  s.min_inputs = 5;
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"},
               {"running_mean", float_dtypes(), "[C] updated in training mode, else input_mean"},
               {"running_var", float_dtypes(), "[C] updated in training mode, else input_var"}};
  AttrSpec epsilon = float_spec("epsilon", 1e-5, "added to the variance, >= 0");
  epsilon.min_float = FloatBound{0.0, false};
  AttrSpec momentum = float_spec("momentum", 0.9,
                                 "running = momentum * running + (1 - momentum) * batch; in [0, 1] "
                                 "(PyTorch's momentum is 1 - this)");
  momentum.min_float = FloatBound{0.0, false};
  momentum.max_float = FloatBound{1.0, false};
  AttrSpec training_mode;
  training_mode.name = "training_mode";
  training_mode.kind = AttrKind::Int;
  training_mode.allowed_ints = {0, 1};
  training_mode.since_version = 14;
  training_mode.doc = "1: batch statistics in every run, 0: the running ones in every run; absent: the run decides";
  s.attributes = {epsilon, momentum, training_mode};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<BatchNormalizationNode>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow
