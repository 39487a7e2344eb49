// Conv (ONNX Conv-22), any number of spatial axes >= 1, with groups,
// dilations, strides, pads and auto_pad. Forward and backward are im2col plus
// one matrix product per (image, group).
#include <memory>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/shape_cache.hpp"
#include "nodes/conv/conv_geometry.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/linear/matrix_product.hpp"

namespace nodeflow {
namespace {

// For every (kernel tap, output position) of one channel plane, the offset of
// the input element it reads, or -1 where it reads the padding. The same
// table serves every image and channel, and both im2col and its adjoint.
struct TapTable {
  std::int64_t taps = 0;     // K = k1 * ... * kn
  std::int64_t outputs = 0;  // P = O1 * ... * On
  std::vector<std::int64_t> offset;  // K x P
  bool identity = false;     // K == 1 and output p reads input p: no im2col needed

  TapTable(const ConvGeometry& g, std::uint64_t max_bytes)
      : taps(g.kernel_size()), outputs(g.output_plane()) {
    check_tensor_bytes("im2col tap table", {taps, outputs}, DType::Int64, max_bytes);
    const std::size_t rank = g.axes.size();
    std::vector<std::int64_t> in_stride(rank, 1);
    for (std::size_t a = rank - 1; a-- > 0;) in_stride[a] = in_stride[a + 1] * g.axes[a + 1].in;
    // Per axis and output position: the taps that read the input, not the padding.
    std::vector<std::vector<IndexRange>> valid(rank);
    for (std::size_t a = 0; a < rank; ++a)
      for (std::int64_t o = 0; o < g.axes[a].out; ++o) valid[a].push_back(g.axes[a].valid_taps(o));
    offset.resize(static_cast<std::size_t>(taps * outputs));
    std::vector<std::int64_t> tap(rank);
    std::vector<std::int64_t> out(rank);
    identity = taps == 1 && outputs == g.input_plane();
    for (std::int64_t t = 0; t < taps; ++t) {
      unravel(t, g, true, tap);
      for (std::int64_t p = 0; p < outputs; ++p) {
        unravel(p, g, false, out);
        std::int64_t off = 0;
        for (std::size_t a = 0; a < rank && off >= 0; ++a) {
          const IndexRange& inside = valid[a][static_cast<std::size_t>(out[a])];
          off = tap[a] < inside.begin || tap[a] >= inside.end
                    ? -1
                    : off + g.axes[a].position(out[a], tap[a]) * in_stride[a];
        }
        offset[static_cast<std::size_t>(t * outputs + p)] = off;
        identity = identity && off == p;
      }
    }
  }

  static void unravel(std::int64_t flat, const ConvGeometry& g, bool kernel,
                      std::vector<std::int64_t>& index) {
    for (std::size_t a = g.axes.size(); a-- > 0;) {
      const std::int64_t n = kernel ? g.axes[a].kernel : g.axes[a].out;
      index[a] = flat % n;
      flat /= n;
    }
  }
};

// col (channels*K x P) from `channels` input planes. Not inlined, here and
// in col2im_add: inlined into conv_backward, the loop's table pointer lost
// its register and was reloaded from the stack at every element (the training
// step of bench/train_bench ran 4-12 % slower for it).
template <typename T>
[[gnu::noinline]] void im2col(const TapTable& table, const T* x, std::int64_t channels, std::int64_t in_plane, T* col) {
  const std::int64_t kp = table.taps * table.outputs;
  for (std::int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_plane;
    T* cc = col + c * kp;
    for (std::int64_t i = 0; i < kp; ++i) {
      const std::int64_t off = table.offset[static_cast<std::size_t>(i)];
      cc[i] = off < 0 ? T(0) : xc[off];
    }
  }
}

// The adjoint of im2col: adds col back into the input planes.
template <typename T>
[[gnu::noinline]] void col2im_add(const TapTable& table, const T* col, std::int64_t channels, std::int64_t in_plane, T* x) {
  const std::int64_t kp = table.taps * table.outputs;
  for (std::int64_t c = 0; c < channels; ++c) {
    T* xc = x + c * in_plane;
    const T* cc = col + c * kp;
    for (std::int64_t i = 0; i < kp; ++i) {
      const std::int64_t off = table.offset[static_cast<std::size_t>(i)];
      if (off >= 0) xc[off] += cc[i];
    }
  }
}

// Sizes of one (image, group) block.
struct Blocks {
  std::int64_t cg, mg, k, p, r, in_plane;  // R = Cg * K rows of col
  explicit Blocks(const ConvGeometry& g)
      : cg(g.in_channels / g.group),
        mg(g.out_channels / g.group),
        k(g.kernel_size()),
        p(g.output_plane()),
        r(cg * k),
        in_plane(g.input_plane()) {}
};

// A work buffer of R x P elements of T (im2col columns or their gradient),
// refused over the run's max_tensor_bytes before it is allocated. With
// `wanted` false (no im2col needed, or that gradient not wanted) it is empty.
template <typename T>
std::vector<T> column_buffer(const char* what, const Blocks& s, bool wanted, std::uint64_t max_bytes) {
  if (!wanted) return {};
  check_tensor_bytes(what, {s.r, s.p}, dtype_of_v<T>, max_bytes);
  return std::vector<T>(static_cast<std::size_t>(s.r * s.p));
}

template <typename T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y,
                  std::uint64_t max_bytes) {
  const TapTable table(g, max_bytes);
  const Blocks s(g);
  std::vector<T> col = column_buffer<T>("im2col buffer", s, !table.identity, max_bytes);
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t grp = 0; grp < g.group; ++grp) {
      const T* xb = x + (n * g.in_channels + grp * s.cg) * s.in_plane;
      const T* cols = xb;
      if (!table.identity) {
        im2col(table, xb, s.cg, s.in_plane, col.data());
        cols = col.data();
      }
      T* yb = y + (n * g.out_channels + grp * s.mg) * s.p;
      matrix_product<T>(s.mg, s.p, s.r, T(1), w + grp * s.mg * s.r, false, cols, false, T(0), yb);
      if (b)
        for (std::int64_t m = 0; m < s.mg; ++m)
          for (std::int64_t q = 0; q < s.p; ++q) yb[m * s.p + q] += b[grp * s.mg + m];
    }
}

// Gradients into zero-initialized dx, dw, db (each may be null: not wanted).
template <typename T>
void conv_backward(const ConvGeometry& g, const T* x, const T* w, const T* dy, T* dx, T* dw, T* db,
                   std::uint64_t max_bytes) {
  const TapTable table(g, max_bytes);
  const Blocks s(g);
  std::vector<T> col =
      column_buffer<T>("im2col buffer", s, !table.identity && dw != nullptr, max_bytes);
  std::vector<T> dcol =
      column_buffer<T>("im2col gradient buffer", s, !table.identity && dx != nullptr, max_bytes);
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t grp = 0; grp < g.group; ++grp) {
      const T* dyb = dy + (n * g.out_channels + grp * s.mg) * s.p;
      const std::int64_t x_block = (n * g.in_channels + grp * s.cg) * s.in_plane;
      const T* wg = w + grp * s.mg * s.r;
      if (dw) {
        const T* cols = x + x_block;
        if (!table.identity) {
          im2col(table, x + x_block, s.cg, s.in_plane, col.data());
          cols = col.data();
        }
        // dW_g (Mg x R) += dY_b (Mg x P) * col^T
        matrix_product<T>(s.mg, s.r, s.p, T(1), dyb, false, cols, true, T(1), dw + grp * s.mg * s.r);
      }
      if (dx) {
        // dcol (R x P) = W_g^T * dY_b, then scattered back onto the input.
        if (table.identity) {
          matrix_product<T>(s.r, s.p, s.mg, T(1), wg, true, dyb, false, T(1), dx + x_block);
        } else {
          matrix_product<T>(s.r, s.p, s.mg, T(1), wg, true, dyb, false, T(0), dcol.data());
          col2im_add(table, dcol.data(), s.cg, s.in_plane, dx + x_block);
        }
      }
      if (db)
        for (std::int64_t m = 0; m < s.mg; ++m) {
          T sum = 0;
          for (std::int64_t q = 0; q < s.p; ++q) sum += dyb[m * s.p + q];
          db[grp * s.mg + m] += sum;
        }
    }
}

void check_bias(const Shape& b, std::int64_t m) {
  if (b.size() != 1 || (b[0] != kDynamicDim && m != kDynamicDim && b[0] != m))
    throw ShapeMismatch("input 2 (B) has shape " + to_string(b) + "; Conv needs [M] = [" +
                        (m == kDynamicDim ? std::string("?") : std::to_string(m)) +
                        "] (W's axis 0)");
}

class ConvNode final : public Node {
 public:
  explicit ConvNode(NodeConfig c)
      : Node(std::move(c)), attrs_(parse_conv_attributes(config().attributes)) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    const TensorInfo& w = *ctx.inputs[1];
    check_float_input("Conv", 0, "X", x.dtype);
    check_same_dtype("Conv", 1, "W", w.dtype, "X", x.dtype);
    const auto held = geometry(x.shape, w.shape);
    const ConvGeometry& g = *held;
    if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
      check_same_dtype("Conv", 2, "B", ctx.inputs[2]->dtype, "X", x.dtype);
      check_bias(ctx.inputs[2]->shape, g.out_channels);
    }
    return {TensorInfo{x.dtype, g.output_shape()}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const Tensor& w = ctx.inputs[1];
    const Tensor b = ctx.inputs.size() > 2 ? ctx.inputs[2] : Tensor{};
    const auto held = geometry(x.shape(), w.shape());
    const ConvGeometry& g = *held;
    if (!b.empty()) check_bias(b.shape(), g.out_channels);
    const Tensor xc = to_compute(x);
    const Tensor wc = to_compute(w);
    const Tensor bc = to_compute(b);
    Tensor y(xc.dtype(), g.output_shape());
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      conv_forward<T>(g, xc.data<T>(), wc.data<T>(), bc.empty() ? nullptr : bc.data<T>(), y.data<T>(),
                      ctx.max_tensor_bytes);
    });
    ctx.outputs[0] = as_dtype(y, x.dtype());
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {xc, wc});
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy_in = ctx.grad_outputs[0];
    if (dy_in.empty()) return;
    require_saved("Conv", ctx.saved.size(), 2);
    const Tensor& xc = ctx.saved[0];
    const Tensor& wc = ctx.saved[1];
    const auto held = geometry(xc.shape(), wc.shape());
    const ConvGeometry& g = *held;
    check_output_gradient("Conv", 0, dy_in, g.output_shape());
    const Tensor dy = to_compute(dy_in);
    auto wanted = [&](std::size_t k) { return k < ctx.grad_inputs.size() && !ctx.grad_inputs[k].empty(); };
    Tensor dx = wanted(0) ? Tensor(xc.dtype(), xc.shape()) : Tensor{};
    Tensor dw = wanted(1) ? Tensor(wc.dtype(), wc.shape()) : Tensor{};
    Tensor db = wanted(2) ? Tensor(xc.dtype(), {g.out_channels}) : Tensor{};
    visit_compute_dtype(xc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      auto ptr = [](Tensor& t) { return t.empty() ? nullptr : t.data<T>(); };
      conv_backward<T>(g, xc.data<T>(), wc.data<T>(), dy.data<T>(), ptr(dx), ptr(dw), ptr(db),
                       ctx.max_tensor_bytes);
    });
    for (std::size_t k = 0; k < 3; ++k)
      if (wanted(k))
        accumulate_gradient(ctx.grad_inputs[k], k == 0 ? dx : k == 1 ? dw : db, ctx.scale_for(k));
  }

 private:
  // conv_geometry() of X's and W's shapes, resolved at the first call with
  // them (infer, forward or backward) and then shared.
  std::shared_ptr<const ConvGeometry> geometry(const Shape& x, const Shape& w) const {
    return geometries_.get({x, w}, [&] { return conv_geometry(attrs_, x, w); });
  }

  ConvAttributes attrs_;
  ShapeCache<std::pair<Shape, Shape>, ConvGeometry> geometries_;
};

}  // namespace

void register_conv(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Conv";
  s.definition = "ONNX Conv-22";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"W", float_dtypes(), "M x C/group x k1..kn; X's dtype"},
              {"B", float_dtypes(), "optional [M] bias; X's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"Y", float_dtypes(), "N x M x O1..On"}};
  s.attributes = conv_attribute_specs();
  s.check_attributes = check_conv_attributes;
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ConvNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
