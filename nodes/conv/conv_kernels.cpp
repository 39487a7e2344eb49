#include "nodes/conv/conv_kernels.hpp"

#include <vector>

#include "core/node.hpp"
#include "nodes/linear/matrix_product.hpp"

// GCC's per-function loop alignment for the gather and scatter loops below (an
// unaligned hot loop made LeNet-5 inference 10% slower); clang has no such
// attribute and aligns them itself.
#if defined(__clang__)
#define NODEFLOW_ALIGN_LOOPS
#else
#define NODEFLOW_ALIGN_LOOPS [[gnu::optimize("align-loops=64")]]
#endif

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
// step of bench/train_bench ran 4-12 % slower for it). Their loops start on
// a 64-byte boundary: where the linker placed them, the 33-byte gather loop
// spanned two cache lines, and LeNet-5 inference ran 10 % slower for that
// alone (the code was byte for byte the same).
template <typename T>
[[gnu::noinline]] NODEFLOW_ALIGN_LOOPS void im2col(const TapTable& table, const T* x,
                                                               std::int64_t channels, std::int64_t in_plane,
                                                               T* col) {
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
[[gnu::noinline]] NODEFLOW_ALIGN_LOOPS void col2im_add(const TapTable& table, const T* col,
                                                                   std::int64_t channels, std::int64_t in_plane,
                                                                   T* x) {
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

}  // namespace

template <typename T>
void add_channel_bias(const T* b, std::int64_t batch, std::int64_t channels, std::int64_t plane, T* y) {
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      T* yc = y + (n * channels + c) * plane;
      const T bias = b[c];  // read once: y may alias b for the compiler
      for (std::int64_t q = 0; q < plane; ++q) yc[q] += bias;
    }
}

template <typename T>
void add_channel_sums(const T* dy, std::int64_t batch, std::int64_t channels, std::int64_t plane, T* db) {
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const T* dyc = dy + (n * channels + c) * plane;
      T sum = 0;
      for (std::int64_t q = 0; q < plane; ++q) sum += dyc[q];
      db[c] += sum;
    }
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
      if (b) add_channel_bias(b + grp * s.mg, 1, s.mg, s.p, yb);
    }
}

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
      if (db) add_channel_sums(dyb, 1, s.mg, s.p, db + grp * s.mg);
    }
}

#define NODEFLOW_CONV_KERNELS(T)                                                                       \
  template void conv_forward<T>(const ConvGeometry&, const T*, const T*, const T*, T*, std::uint64_t); \
  template void conv_backward<T>(const ConvGeometry&, const T*, const T*, const T*, T*, T*, T*,        \
                                 std::uint64_t);                                                       \
  template void add_channel_bias<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);           \
  template void add_channel_sums<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);
NODEFLOW_CONV_KERNELS(float)
NODEFLOW_CONV_KERNELS(double)
#undef NODEFLOW_CONV_KERNELS

}  // namespace nodeflow
