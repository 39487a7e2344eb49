#include "nodes/conv/conv_kernels.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/node.hpp"
#include "core/parallel.hpp"
#include "nodes/linear/matrix_product.hpp"

namespace nodeflow {
namespace {

// Where im2col reads, one input row at a time. A tap t of the kernel splits
// into its outer axes' part (all axes but the last) and its last-axis tap;
// an output position likewise. The outer parts give the start of an input
// row (or the padding, for the whole row); along the last axis the outputs
// whose tap reads the input form one range, and they read it at the stride.
// So a row of the columns is zeros, a strided copy and zeros.
struct ColumnPlan {
  std::int64_t outer_taps = 1, outer_outputs = 1;  // products over the outer axes
  WindowAxis last;                                 // the last spatial axis
  std::vector<std::int64_t> row_offset;            // outer_taps x outer_outputs: input offset, or -1
  std::vector<IndexRange> last_valid;              // per last-axis tap: the outputs that read the input
  bool identity = false;  // one tap, output p reads input p: the input is its own columns

  ColumnPlan(const ConvGeometry& g, std::uint64_t max_bytes) : last(g.axes.back()) {
    const std::size_t outer = g.axes.size() - 1;
    for (std::size_t a = 0; a < outer; ++a) {
      outer_taps *= g.axes[a].kernel;
      outer_outputs *= g.axes[a].out;
    }
    check_tensor_bytes("im2col row table", {outer_taps, outer_outputs}, DType::Int64, max_bytes);
    std::vector<std::int64_t> in_stride(g.axes.size(), 1);
    for (std::size_t a = g.axes.size() - 1; a-- > 0;) in_stride[a] = in_stride[a + 1] * g.axes[a + 1].in;
    row_offset.resize(static_cast<std::size_t>(outer_taps * outer_outputs));
    std::vector<std::int64_t> tap(outer), out(outer);
    for (std::int64_t t = 0; t < outer_taps; ++t) {
      unravel(t, g, true, tap);
      for (std::int64_t p = 0; p < outer_outputs; ++p) {
        unravel(p, g, false, out);
        std::int64_t off = 0;
        for (std::size_t a = 0; a < outer && off >= 0; ++a) {
          const std::int64_t pos = g.axes[a].position(out[a], tap[a]);
          off = pos < 0 || pos >= g.axes[a].in ? -1 : off + pos * in_stride[a];
        }
        row_offset[static_cast<std::size_t>(t * outer_outputs + p)] = off;
      }
    }
    for (std::int64_t t = 0; t < last.kernel; ++t) last_valid.push_back(last.outputs_with_valid_tap(t));
    identity = g.kernel_size() == 1;
    for (const WindowAxis& a : g.axes)
      identity = identity && a.out == a.in && a.position(0, 0) == 0 && (a.out == 1 || a.position(1, 0) == 1);
  }

  // The outer axes' part of a flat index (kernel taps or output positions).
  static void unravel(std::int64_t flat, const ConvGeometry& g, bool kernel, std::vector<std::int64_t>& index) {
    for (std::size_t a = index.size(); a-- > 0;) {
      const std::int64_t n = kernel ? g.axes[a].kernel : g.axes[a].out;
      index[a] = flat % n;
      flat /= n;
    }
  }

  // Calls row(r, at, start, valid) for every (channel, tap, outer output) of
  // `channels` channels: the row of the columns starts at col + r * ld + at;
  // start is the index of the input element that output valid.begin reads,
  // or -1 when the whole row reads the padding.
  template <typename F>
  void for_each_row(std::int64_t channels, std::int64_t in_plane, F&& row) const {
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t to = 0; to < outer_taps; ++to)
        for (std::int64_t tl = 0; tl < last.kernel; ++tl) {
          const IndexRange valid = last_valid[static_cast<std::size_t>(tl)];
          const std::int64_t shift = tl * last.dilation - last.pad_begin;
          const std::int64_t r = (c * outer_taps + to) * last.kernel + tl;
          for (std::int64_t po = 0; po < outer_outputs; ++po) {
            const std::int64_t off = row_offset[static_cast<std::size_t>(to * outer_outputs + po)];
            row(r, po * last.out,
                off < 0 || valid.begin >= valid.end ? -1 : c * in_plane + off + shift + valid.begin * last.stride,
                valid);
          }
        }
  }
};

// The rows of the columns are short (an output row: 28 elements for
// LeNet-5's first Conv, 7 to 28 in the ResNet example), so they are filled by
// inline loops. GCC would turn them into calls of memcpy and memset, whose
// cost per call made up a tenth of a LeNet-5 training step: this file is
// built with -fno-tree-loop-distribute-patterns (CMakeLists.txt).

// One row of the columns: zeros, the input read at the stride over the valid
// outputs v (src is the input at output v.begin's tap), zeros.
template <typename T>
void gather_row(T* dst, std::int64_t out, const T* src, std::int64_t stride, IndexRange v) {
  for (std::int64_t o = 0; o < v.begin; ++o) dst[o] = T(0);
  if (stride == 1)
    for (std::int64_t o = v.begin; o < v.end; ++o) dst[o] = src[o - v.begin];
  else
    for (std::int64_t o = v.begin; o < v.end; ++o) dst[o] = src[(o - v.begin) * stride];
  for (std::int64_t o = v.end; o < out; ++o) dst[o] = T(0);
}

template <typename T>
void zero_row(T* dst, std::int64_t out) {
  for (std::int64_t o = 0; o < out; ++o) dst[o] = T(0);
}

// col (channels*K rows of row stride ld) from `channels` input planes of x.
template <typename T>
void im2col(const ColumnPlan& plan, const T* x, std::int64_t channels, std::int64_t in_plane, T* col,
            std::int64_t ld) {
  const std::int64_t out = plan.last.out, stride = plan.last.stride;
  plan.for_each_row(channels, in_plane, [&](std::int64_t r, std::int64_t at, std::int64_t base, IndexRange v) {
    T* dst = col + r * ld + at;
    if (base < 0)
      zero_row(dst, out);
    else
      gather_row(dst, out, x + base, stride, v);
  });
}

// The adjoint of im2col: adds col back into the input planes.
template <typename T>
void col2im_add(const ColumnPlan& plan, const T* col, std::int64_t ld, std::int64_t channels, std::int64_t in_plane,
                T* x) {
  const std::int64_t stride = plan.last.stride;
  plan.for_each_row(channels, in_plane, [&](std::int64_t r, std::int64_t at, std::int64_t base, IndexRange v) {
    if (base < 0) return;
    const T* src = col + r * ld + at;
    T* dst = x + base;
    if (stride == 1)
      for (std::int64_t o = v.begin; o < v.end; ++o) dst[o - v.begin] += src[o];
    else
      for (std::int64_t o = v.begin; o < v.end; ++o) dst[(o - v.begin) * stride] += src[o];
  });
}

// The 2-D convolutions with stride and dilation 1 (the 3x3 "same" Convs of a
// ResNet, LeNet-5's 5x5): each input plane is copied once into a plane with
// the padding around it (zeros that stay from one plane to the next), where
// every row of the columns, pads included, is one copy of an output row's
// length out of consecutive elements: no ranges per row, and the lengths of
// the example networks (7, 14, 28, 10) fixed at compile time. The adjoint
// adds the columns into a zeroed padded plane, whose interior is then added
// to the input's gradient.
struct PaddedPlane {
  bool usable = false;
  std::int64_t h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0, top = 0, left = 0, hp = 0, wp = 0;
  bool padded = false;  // any pad: else the input plane is its own padded plane

  explicit PaddedPlane(const ConvGeometry& g) {
    if (g.axes.size() != 2) return;
    const WindowAxis& a = g.axes[0];
    const WindowAxis& b = g.axes[1];
    if (a.stride != 1 || b.stride != 1 || a.dilation != 1 || b.dilation != 1) return;
    h = a.in, w = b.in, oh = a.out, ow = b.out, kh = a.kernel, kw = b.kernel, top = a.pad_begin,
    left = b.pad_begin;
    hp = oh + kh - 1, wp = ow + kw - 1;  // the positions the windows read: h + pads
    usable = hp == h + a.pad_begin + a.pad_end && wp == w + b.pad_begin + b.pad_end;
    padded = hp != h || wp != w;
  }
  std::int64_t scratch() const { return usable && padded ? hp * wp : 0; }
};

// rows x N elements: dst rows consecutive, src rows `stride` apart.
template <typename T, int N>
void copy_rows(T* dst, const T* src, std::int64_t rows, std::int64_t stride) {
  for (std::int64_t r = 0; r < rows; ++r, dst += N, src += stride)
    for (int o = 0; o < N; ++o) dst[o] = src[o];
}
template <typename T>
void copy_rows_n(T* dst, const T* src, std::int64_t rows, std::int64_t stride, std::int64_t n) {
  for (std::int64_t r = 0; r < rows; ++r, dst += n, src += stride)
    for (std::int64_t o = 0; o < n; ++o) dst[o] = src[o];
}
// The adjoint: dst rows `stride` apart += src rows consecutive.
template <typename T, int N>
void add_rows(T* dst, const T* src, std::int64_t rows, std::int64_t stride) {
  for (std::int64_t r = 0; r < rows; ++r, dst += stride, src += N)
    for (int o = 0; o < N; ++o) dst[o] += src[o];
}
template <typename T>
void add_rows_n(T* dst, const T* src, std::int64_t rows, std::int64_t stride, std::int64_t n) {
  for (std::int64_t r = 0; r < rows; ++r, dst += stride, src += n)
    for (std::int64_t o = 0; o < n; ++o) dst[o] += src[o];
}

template <typename T>
void copy_block(T* dst, const T* src, std::int64_t rows, std::int64_t stride, std::int64_t n) {
  switch (n) {
    case 7: return copy_rows<T, 7>(dst, src, rows, stride);
    case 10: return copy_rows<T, 10>(dst, src, rows, stride);
    case 14: return copy_rows<T, 14>(dst, src, rows, stride);
    case 28: return copy_rows<T, 28>(dst, src, rows, stride);
    default: return copy_rows_n(dst, src, rows, stride, n);
  }
}
template <typename T>
void add_block(T* dst, const T* src, std::int64_t rows, std::int64_t stride, std::int64_t n) {
  switch (n) {
    case 7: return add_rows<T, 7>(dst, src, rows, stride);
    case 10: return add_rows<T, 10>(dst, src, rows, stride);
    case 14: return add_rows<T, 14>(dst, src, rows, stride);
    case 28: return add_rows<T, 28>(dst, src, rows, stride);
    default: return add_rows_n(dst, src, rows, stride, n);
  }
}

// im2col of `channels` planes of x for a usable PaddedPlane; pad holds
// scratch() elements whose border is zero (the interior is overwritten).
template <typename T>
void im2col_padded(const PaddedPlane& q, const T* x, std::int64_t channels, T* col, std::int64_t ld, T* pad) {
  for (std::int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * q.h * q.w;
    const T* src = xc;
    if (q.padded) {
      for (std::int64_t i = 0; i < q.h; ++i) {
        T* d = pad + (i + q.top) * q.wp + q.left;
        const T* r = xc + i * q.w;
        for (std::int64_t j = 0; j < q.w; ++j) d[j] = r[j];
      }
      src = pad;
    }
    for (std::int64_t a = 0; a < q.kh; ++a)
      for (std::int64_t b = 0; b < q.kw; ++b)
        copy_block(col + ((c * q.kh + a) * q.kw + b) * ld, src + a * q.wp + b, q.oh, q.wp, q.ow);
  }
}

// Its adjoint: adds the columns into the planes of x; pad: scratch() elements.
template <typename T>
void col2im_padded(const PaddedPlane& q, const T* col, std::int64_t ld, std::int64_t channels, T* x, T* pad) {
  for (std::int64_t c = 0; c < channels; ++c) {
    T* xc = x + c * q.h * q.w;
    T* dst = xc;
    if (q.padded) {
      for (std::int64_t i = 0; i < q.hp * q.wp; ++i) pad[i] = T(0);
      dst = pad;
    }
    for (std::int64_t a = 0; a < q.kh; ++a)
      for (std::int64_t b = 0; b < q.kw; ++b)
        add_block(dst + a * q.wp + b, col + ((c * q.kh + a) * q.kw + b) * ld, q.oh, q.wp, q.ow);
    if (q.padded)
      for (std::int64_t i = 0; i < q.h; ++i) {
        const T* r = pad + (i + q.top) * q.wp + q.left;
        T* d = xc + i * q.w;
        for (std::int64_t j = 0; j < q.w; ++j) d[j] += r[j];
      }
  }
}

// Images per chunk: the columns of a chunk take about this many bytes, so
// that im2col's output is still in the cache when the product reads it.
constexpr std::uint64_t kChunkBytes = std::uint64_t{512} << 10;

// Sizes of one (chunk, group) block and the chunking of the batch.
struct Blocks {
  std::int64_t cg, mg, k, p, r, in_plane;  // R = Cg * K rows of col
  std::int64_t images = 1;                 // per chunk
  std::int64_t chunks = 0;

  Blocks(const ConvGeometry& g, const ColumnPlan& plan, std::uint64_t max_bytes, std::size_t element)
      : cg(g.in_channels / g.group),
        mg(g.out_channels / g.group),
        k(g.kernel_size()),
        p(g.output_plane()),
        r(cg * k),
        in_plane(g.input_plane()) {
    // The identity reads x in place, one image at a time; else as many images
    // as fit the chunk's bytes and the run's limit on a buffer.
    // (In double: the sizes are not checked yet, buffer_size does that.)
    const double image_bytes =
        std::max(1.0, static_cast<double>(std::max(r, mg)) * static_cast<double>(p)) * static_cast<double>(element);
    const double fit = static_cast<double>(std::min(kChunkBytes, max_bytes)) / image_bytes;
    const std::int64_t batch = std::max<std::int64_t>(1, g.batch);
    if (!plan.identity && fit >= 2) {
      images = std::min<std::int64_t>(static_cast<std::int64_t>(fit), batch);
      // Smaller chunks to make their count a multiple of 4, so that 2 or 4
      // threads get equal shares (7 chunks on 2 threads left one idle a
      // quarter of the time). Set by the shapes alone: the chunk size decides
      // the products' rounding, which must not depend on the thread count.
      const std::int64_t count = (batch + images - 1) / images;
      if (count > 1) images = (batch + (count + 3) / 4 * 4 - 1) / ((count + 3) / 4 * 4);
    }
    chunks = (g.batch + images - 1) / images;
  }
};

// A work buffer of rows x (images * P) elements of T, refused over the run's
// max_tensor_bytes before anything is allocated. With `wanted` false it is empty.
template <typename T>
std::int64_t buffer_size(const char* what, std::int64_t rows, const Blocks& s, bool wanted, std::uint64_t max_bytes) {
  if (!wanted) return 0;
  check_tensor_bytes(what, {rows, s.images * s.p}, dtype_of_v<T>, max_bytes);
  return rows * s.images * s.p;
}

// Runs chunk(first image, images, product threads, part) for every chunk.
// With at least one chunk per thread, the chunks are cut into `parts`
// consecutive runs, one per thread, whose products run on that thread; else
// the chunks run in order on this thread and each product on `threads`.
template <typename F>
void for_each_chunk(const ConvGeometry& g, const Blocks& s, std::int64_t parts, int threads, F&& chunk) {
  auto run = [&](std::int64_t first_chunk, std::int64_t end_chunk, int product_threads, std::int64_t part) {
    for (std::int64_t c = first_chunk; c < end_chunk; ++c) {
      const std::int64_t n0 = c * s.images;
      chunk(n0, std::min(s.images, g.batch - n0), product_threads, part);
    }
  };
  if (parts <= 1) {
    run(0, s.chunks, threads, 0);
    return;
  }
  parallel_ranges(static_cast<int>(parts), parts, [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) run(s.chunks * k / parts, s.chunks * (k + 1) / parts, 1, k);
  });
}

// One work buffer per part (thread), allocated before the threads start.
// Left uninitialized: every element is written before it is read (im2col
// writes the padding's zeros, the products run with beta 0), and zeroing
// up to a megabyte per call was a visible share of a ResNet training step.
template <typename T>
struct PartBuffers {
  std::unique_ptr<T[]> data;
  std::int64_t size;
  PartBuffers(std::int64_t parts, std::int64_t per_part)
      : data(new T[static_cast<std::size_t>(parts * per_part)]), size(per_part) {}
  T* of(std::int64_t part) { return data.get() + part * size; }
};

std::int64_t part_count(int threads, const Blocks& s) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(threads, s.chunks));
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
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y, std::uint64_t max_bytes,
                  int threads) {
  const ColumnPlan plan(g, max_bytes);
  const Blocks s(g, plan, max_bytes, sizeof(T));
  const std::int64_t col_size = buffer_size<T>("im2col buffer", s.r, s, !plan.identity, max_bytes);
  const std::int64_t out_size = buffer_size<T>("im2col output buffer", s.mg, s, s.images > 1, max_bytes);
  const std::int64_t parts = part_count(threads, s);
  PartBuffers<T> cols_of(parts, col_size), out_of(parts, out_size);
  const PaddedPlane fast(g);
  PartBuffers<T> pads_of(parts, plan.identity ? 0 : fast.scratch());
  std::fill(pads_of.of(0), pads_of.of(parts), T(0));  // the borders stay zero
  for_each_chunk(g, s, parts, threads, [&](std::int64_t n0, std::int64_t count, int product_threads,
                                           std::int64_t part) {
    T* col = cols_of.of(part);
    T* out = out_of.of(part);
    T* pad = pads_of.of(part);
    const std::int64_t ld = count * s.p;
    for (std::int64_t grp = 0; grp < g.group; ++grp) {
      const T* cols = x + (n0 * g.in_channels + grp * s.cg) * s.in_plane;  // the identity: x itself
      if (!plan.identity) {
        for (std::int64_t i = 0; i < count; ++i) {
          const T* xi = x + ((n0 + i) * g.in_channels + grp * s.cg) * s.in_plane;
          if (fast.usable)
            im2col_padded(fast, xi, s.cg, col + i * s.p, ld, pad);
          else
            im2col(plan, xi, s.cg, s.in_plane, col + i * s.p, ld);
        }
        cols = col;
      }
      T* y0 = y + (n0 * g.out_channels + grp * s.mg) * s.p;
      const T* wg = w + grp * s.mg * s.r;
      if (count == 1) {
        matrix_product<T>(s.mg, s.p, s.r, T(1), wg, false, cols, false, T(0), y0, product_threads);
        if (b) add_channel_bias(b + grp * s.mg, 1, s.mg, s.p, y0);
        continue;
      }
      // Mg x (count * P), image after image along the rows: into y's layout.
      matrix_product<T>(s.mg, ld, s.r, T(1), wg, false, cols, false, T(0), out, product_threads);
      for (std::int64_t i = 0; i < count; ++i)
        for (std::int64_t m = 0; m < s.mg; ++m) {
          const T* src = out + m * ld + i * s.p;
          T* dst = y0 + (i * g.out_channels + m) * s.p;
          const T bias = b ? b[grp * s.mg + m] : T(0);
          for (std::int64_t q = 0; q < s.p; ++q) dst[q] = src[q] + bias;
        }
    }
  });
}

template <typename T>
void conv_backward(const ConvGeometry& g, const T* x, const T* w, const T* dy, T* dx, T* dw, T* db,
                   std::uint64_t max_bytes, int threads) {
  const ColumnPlan plan(g, max_bytes);
  const Blocks s(g, plan, max_bytes, sizeof(T));
  const std::int64_t col_size = buffer_size<T>("im2col buffer", s.r, s, !plan.identity && dw, max_bytes);
  const std::int64_t dcol_size = buffer_size<T>("im2col gradient buffer", s.r, s, !plan.identity && dx, max_bytes);
  const std::int64_t dy_size = buffer_size<T>("im2col output gradient buffer", s.mg, s, s.images > 1, max_bytes);
  const std::int64_t parts = part_count(threads, s);
  PartBuffers<T> cols_of(parts, col_size), dcols_of(parts, dcol_size), dys_of(parts, dy_size);
  const PaddedPlane fast(g);
  // Per part, im2col's padded plane (its borders stay zero) and col2im's.
  PartBuffers<T> pads_of(parts, plan.identity ? 0 : 2 * fast.scratch());
  std::fill(pads_of.of(0), pads_of.of(parts), T(0));
  // Part 0 adds into dw, the others into zeroed partial sums added after it in order.
  const std::int64_t w_size = g.out_channels * s.r;
  std::vector<T> partial_dw(dw ? static_cast<std::size_t>((parts - 1) * w_size) : 0);
  if (dw || dx)
    for_each_chunk(g, s, parts, threads, [&](std::int64_t n0, std::int64_t count, int product_threads,
                                             std::int64_t part) {
      T* col = cols_of.of(part);
      T* dcol = dcols_of.of(part);
      T* dyc = dys_of.of(part);
      T* pad = pads_of.of(part);
      T* dw_part = !dw ? nullptr : part == 0 ? dw : partial_dw.data() + (part - 1) * w_size;
      const std::int64_t ld = count * s.p;
      for (std::int64_t grp = 0; grp < g.group; ++grp) {
        const std::int64_t x_block = (n0 * g.in_channels + grp * s.cg) * s.in_plane;
        const T* wg = w + grp * s.mg * s.r;
        // dY of the chunk as Mg x (count * P), image after image along the rows.
        const T* dyb = dy + (n0 * g.out_channels + grp * s.mg) * s.p;
        if (count > 1) {
          for (std::int64_t i = 0; i < count; ++i)
            for (std::int64_t m = 0; m < s.mg; ++m) {
              const T* src = dy + ((n0 + i) * g.out_channels + grp * s.mg + m) * s.p;
              std::copy(src, src + s.p, dyc + m * ld + i * s.p);
            }
          dyb = dyc;
        }
        if (dw) {
          const T* cols = x + x_block;
          if (!plan.identity) {
            for (std::int64_t i = 0; i < count; ++i) {
              const T* xi = x + ((n0 + i) * g.in_channels + grp * s.cg) * s.in_plane;
              if (fast.usable)
                im2col_padded(fast, xi, s.cg, col + i * s.p, ld, pad);
              else
                im2col(plan, xi, s.cg, s.in_plane, col + i * s.p, ld);
            }
            cols = col;
          }
          // dW_g (Mg x R) += dY (Mg x count*P) * col^T
          matrix_product<T>(s.mg, s.r, ld, T(1), dyb, false, cols, true, T(1), dw_part + grp * s.mg * s.r,
                            product_threads);
        }
        if (dx) {
          // dcol (R x count*P) = W_g^T * dY, then scattered back onto the input.
          if (plan.identity) {
            matrix_product<T>(s.r, s.p, s.mg, T(1), wg, true, dyb, false, T(1), dx + x_block, product_threads);
          } else {
            matrix_product<T>(s.r, ld, s.mg, T(1), wg, true, dyb, false, T(0), dcol, product_threads);
            for (std::int64_t i = 0; i < count; ++i) {
              T* dxi = dx + ((n0 + i) * g.in_channels + grp * s.cg) * s.in_plane;
              if (fast.usable) {
                col2im_padded(fast, dcol + i * s.p, ld, s.cg, dxi, pad + fast.scratch());
              } else {
                col2im_add(plan, dcol + i * s.p, ld, s.cg, s.in_plane, dxi);
              }
            }
          }
        }
      }
    });
  for (std::int64_t k = 1; k < parts && dw; ++k) {
    const T* partial = partial_dw.data() + (k - 1) * w_size;
    for (std::int64_t i = 0; i < w_size; ++i) dw[i] += partial[i];
  }
  if (db) add_channel_sums(dy, g.batch, g.out_channels, s.p, db);
}

#define NODEFLOW_CONV_KERNELS(T)                                                                             \
  template void conv_forward<T>(const ConvGeometry&, const T*, const T*, const T*, T*, std::uint64_t, int); \
  template void conv_backward<T>(const ConvGeometry&, const T*, const T*, const T*, T*, T*, T*,              \
                                 std::uint64_t, int);                                                        \
  template void add_channel_bias<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);                 \
  template void add_channel_sums<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);
NODEFLOW_CONV_KERNELS(float)
NODEFLOW_CONV_KERNELS(double)
#undef NODEFLOW_CONV_KERNELS

}  // namespace nodeflow
