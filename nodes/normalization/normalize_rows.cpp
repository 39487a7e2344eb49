// The one translation unit of the normalization ops' Eigen kernels: rows are
// split over the threads; each row is short enough for the cache in the usual
// shapes (a transformer's 768 features), so its passes cost little beyond the
// one read of x and write of y.
#include "nodes/normalization/normalize_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "core/accumulate.hpp"
#include "core/parallel.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/stream_lines.hpp"
#include "nodes/common/vector_lanes.hpp"

namespace nodeflow {
namespace {

template <typename T> using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T> using CMap = Eigen::Map<const Arr<T>>;
template <typename T> using MMap = Eigen::Map<Arr<T>>;

// The partial sums of a row in the lanes of nodes/common/vector_lanes.hpp;
// the file is built without contracting products into sums (CMakeLists.txt),
// so each instruction set's clone below gives the same bits.
using lanes::kLanes;
using lanes::Lanes;
using lanes::load_lanes;
using lanes::store_lanes;
#pragma GCC diagnostic push

// The sum of a lane vector's elements, in lane order.
template <typename T> [[gnu::always_inline]] inline T lane_sum(const Lanes<T>& a, T tail) {
  T l[kLanes];
  store_lanes(l, a);
  l[0] += tail;
  T s = 0;
  for (std::int64_t lane = 0; lane < kLanes; ++lane) s += l[lane];
  return s;
}

// The lane groups [i, i + kLanes) of a row of `cols` in order, each with its
// set of partial sums: four sets (group g into set g mod 4, so the adds of
// consecutive groups do not wait on each other; a row of 768 floats was a
// chain of 48 dependent adds per pass), added pairwise, then across the lanes
// (lane_sum, the columns past the last whole group going to lane 0).
template <typename F> [[gnu::always_inline]] inline void for_each_group(std::int64_t cols, F&& f) {
  const std::int64_t full = cols / kLanes * kLanes;
  const std::int64_t quads = cols / (4 * kLanes) * (4 * kLanes);
  std::int64_t i = 0;
  for (; i < quads; i += 4 * kLanes)
    for (int set = 0; set < 4; ++set) f(i + set * kLanes, set);
  for (int set = 0; i < full; i += kLanes, ++set) f(i, set);
}
template <typename T> [[gnu::always_inline]] inline Lanes<T> sum_of_sets(const Lanes<T> (&a)[4]) {
  return (a[0] + a[1]) + (a[2] + a[3]);
}

// A row's statistics for the forward, in two passes as ONNX's
// LayerNormalization-17 defines them: mu = sum(x) / n (row_sum), then is = 1 /
// sqrt(sum((x - mu)^2) / n + epsilon) (row_inv_std).
template <typename T> [[gnu::always_inline]] inline T row_sum(const T* x, std::int64_t cols) {
  Lanes<T> a[4] = {};
  for_each_group(cols, [&](std::int64_t i, int set) { a[set] += load_lanes(x + i); });
  T tail = 0;
  for (std::int64_t i = cols / kLanes * kLanes; i < cols; ++i) tail += x[i];
  return lane_sum(sum_of_sets<T>(a), tail);
}
template <typename T> [[gnu::always_inline]] inline T row_inv_std(const T* x, std::int64_t cols, T mu, T epsilon) {
  Lanes<T> v[4] = {};
  for_each_group(cols, [&](std::int64_t i, int set) {
    const Lanes<T> d = load_lanes(x + i) - mu;
    v[set] += d * d;
  });
  T tail = 0;
  for (std::int64_t i = cols / kLanes * kLanes; i < cols; ++i) tail += (x[i] - mu) * (x[i] - mu);
  return T(1) / std::sqrt(lane_sum(sum_of_sets<T>(v), tail) / static_cast<T>(cols) + epsilon);
}
template <typename T>
[[gnu::always_inline]] inline void row_statistics(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) {
  mu = row_sum(x, cols) / static_cast<T>(cols);
  is = row_inv_std(x, cols, mu, epsilon);
}

// One LayerNormalization row of the forward (one parameter per column), its
// mean mu given: is (row_inv_std), then y = (x - mu) * is * scale + bias (bias
// nullptr: none). With `next` (nullptr: none), the next row's row_sum, in the
// same order, taken in the pass that writes y: the next row then arrives from
// memory while this one's y leaves, which took less time here than a pass of
// its own before its statistics (README, "The ops beyond pooling").
template <typename T>
[[gnu::always_inline]] inline T column_row_forward(const T* x, const T* next, const T* scale, const T* bias,
                                                   T epsilon, T* y, std::int64_t cols, T mu, T& is) {
  is = row_inv_std(x, cols, mu, epsilon);
  const T s = is;
  Lanes<T> a[4] = {};
  T tail = 0;
  const std::int64_t full = cols / kLanes * kLanes;
  const auto y_group = [&](std::int64_t i) {
    const Lanes<T> v = (load_lanes(x + i) - mu) * s * load_lanes(scale + i);
    store_lanes(y + i, bias ? v + load_lanes(bias + i) : v);
  };
  if (next) {
    for_each_group(cols, [&](std::int64_t i, int set) {
      a[set] += load_lanes(next + i);
      y_group(i);
    });
    for (std::int64_t i = full; i < cols; ++i) tail += next[i];
  } else {
    for_each_group(cols, [&](std::int64_t i, int) { y_group(i); });
  }
  for (std::int64_t i = full; i < cols; ++i) {
    const T v = (x[i] - mu) * s * scale[i];
    y[i] = bias ? v + bias[i] : v;
  }
  return next ? lane_sum(sum_of_sets<T>(a), tail) : T(0);
}

// One LayerNormalization row's (one parameter per column) sums for row_dx:
// s1 = sum(dy * scale), s2 = sum(dy * scale * xhat), in four sets of partial
// sums (for_each_group).
template <typename T>
[[gnu::always_inline]] inline void column_sums_group(const T* x, const T* dy, const T* scale, T mu, T is,
                                                     std::int64_t i, Lanes<T>& a1, Lanes<T>& a2) {
  const Lanes<T> gd = load_lanes(dy + i) * load_lanes(scale + i);
  a1 += gd;
  a2 += gd * ((load_lanes(x + i) - mu) * is);
}
template <typename T>
[[gnu::always_inline]] inline void column_row_sums(const T* x, const T* dy, const T* scale, T mu, T is,
                                                   std::int64_t cols, T& s1, T& s2) {
  Lanes<T> a1[4] = {}, a2[4] = {};
  for_each_group(cols, [&](std::int64_t i, int set) { column_sums_group(x, dy, scale, mu, is, i, a1[set], a2[set]); });
  T t1 = 0, t2 = 0;
  for (std::int64_t i = cols / kLanes * kLanes; i < cols; ++i) {
    const T gd = dy[i] * scale[i];
    t1 += gd;
    t2 += gd * ((x[i] - mu) * is);
  }
  s1 = lane_sum(sum_of_sets<T>(a1), t1);
  s2 = lane_sum(sum_of_sets<T>(a2), t2);
}

// How column_rows_gradients writes dx: adds into it, overwrites it
// (uninitialised) or overwrites it with non-temporal stores (stream_lanes,
// every row 16-byte aligned; the caller fences).
enum class DxStore { kAdd, kOverwrite, kStream };

// R consecutive such rows (row j at x + j * ld, dy + j * ld, dx + j * ld, with
// mu[j], is[j] and row_dx's constants m1[j], m2[j], k[j]): the parameter
// gradients ds += dy * xhat and db += dy, and dx's rows, dx (+)= k * (dy *
// scale - m1 - (x - mu) * m2). The rows of a block share each load of scale,
// ds and db and each store of ds and db, which one row at a time spent most
// of its pass on; ds and db add the rows in order, so their bits do not
// depend on R. `ahead` (0: none) prefetches x and dy that many elements on
// into the level-2 cache: the pass reads the rows' x and dy from the level-1
// cache, so its time is spent while the rows to come arrive from memory.
template <DxStore Store, int R, typename T>
[[gnu::always_inline]] inline void column_rows_gradients(const T* x, const T* dy, std::int64_t ld, const T* scale,
                                                         const T* mu, const T* is, const T* m1, const T* m2,
                                                         const T* k, T* ds, T* db, T* dx, std::int64_t cols,
                                                         std::int64_t ahead) {
  const std::int64_t full = cols / kLanes * kLanes;
  for (std::int64_t i = 0; i < full; i += kLanes) {
    const Lanes<T> sc = load_lanes(scale + i);
    Lanes<T> gs = load_lanes(ds + i), gb = load_lanes(db + i);
    for (int j = 0; j < R; ++j) {
      const std::int64_t o = j * ld + i;
      if (ahead)
        for (std::size_t b = 0; b < sizeof(Lanes<T>); b += 64) {
          __builtin_prefetch(reinterpret_cast<const char*>(x + ahead + o) + b, 0, 2);
          __builtin_prefetch(reinterpret_cast<const char*>(dy + ahead + o) + b, 0, 2);
        }
      const Lanes<T> d = load_lanes(dy + o);
      const Lanes<T> xc = load_lanes(x + o) - mu[j];
      gs += d * (xc * is[j]);
      gb += d;
      const Lanes<T> g = k[j] * (d * sc - m1[j] - xc * m2[j]);
      if constexpr (Store == DxStore::kAdd)
        store_lanes(dx + o, load_lanes(dx + o) + g);
      else if constexpr (Store == DxStore::kOverwrite)
        store_lanes(dx + o, g);
      else
        lanes::stream_lanes(dx + o, g);
    }
    store_lanes(ds + i, gs);
    store_lanes(db + i, gb);
  }
  for (int j = 0; j < R; ++j)
    for (std::int64_t i = full; i < cols; ++i) {
      const std::int64_t o = j * ld + i;
      const T xc = x[o] - mu[j];
      ds[i] += dy[o] * (xc * is[j]);
      db[i] += dy[o];
      const T g = k[j] * (dy[o] * scale[i] - m1[j] - xc * m2[j]);
      dx[o] = Store == DxStore::kAdd ? dx[o] + g : g;
    }
}

// The instantiations for each instruction set (NODEFLOW_LANES_CLONES,
// nodes/common/vector_lanes.hpp).
#define NODEFLOW_ROW_SUMS(T, SUFFIX, ...)                                                                 \
  __VA_ARGS__ void column_row_sums_##T##SUFFIX(const T* x, const T* dy, const T* scale, T mu, T is,         \
                                               std::int64_t cols, T& s1, T& s2) {                           \
    column_row_sums(x, dy, scale, mu, is, cols, s1, s2);                                                     \
  }
#define NODEFLOW_ROW_GRADIENTS(T, STORE, R, SUFFIX, ...)                                                  \
  __VA_ARGS__ void column_rows_gradients_##T##_##STORE##_##R##SUFFIX(                                        \
      const T* x, const T* dy, std::int64_t ld, const T* scale, const T* mu, const T* is, const T* m1,      \
      const T* m2, const T* k, T* ds, T* db, T* dx, std::int64_t cols, std::int64_t ahead) {               \
    column_rows_gradients<DxStore::k##STORE, R>(x, dy, ld, scale, mu, is, m1, m2, k, ds, db, dx, cols, ahead); \
  }
#define NODEFLOW_ROW_STATS(T, SUFFIX, ...)                                                             \
  __VA_ARGS__ void row_statistics_##T##SUFFIX(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) { \
    row_statistics(x, cols, epsilon, mu, is);                                                          \
  }
#define NODEFLOW_ROW_SUM(T, SUFFIX, ...) \
  __VA_ARGS__ T row_sum_##T##SUFFIX(const T* x, std::int64_t cols) { return row_sum(x, cols); }
#define NODEFLOW_ROW_FORWARD(T, SUFFIX, ...)                                                                    \
  __VA_ARGS__ T column_row_forward_##T##SUFFIX(const T* x, const T* next, const T* scale, const T* bias,       \
                                               T epsilon, T* y, std::int64_t cols, T mu, T& is) {              \
    return column_row_forward(x, next, scale, bias, epsilon, y, cols, mu, is);                                 \
  }
#define NODEFLOW_ROW_ALL(T, SUFFIX, ...)                                                                        \
  NODEFLOW_ROW_SUMS(T, SUFFIX, __VA_ARGS__)                                                                     \
  NODEFLOW_ROW_GRADIENTS(T, Add, 1, SUFFIX, __VA_ARGS__)                                                        \
  NODEFLOW_ROW_GRADIENTS(T, Overwrite, 1, SUFFIX, __VA_ARGS__)                                                  \
  NODEFLOW_ROW_GRADIENTS(T, Add, 4, SUFFIX, __VA_ARGS__)                                                        \
  NODEFLOW_ROW_GRADIENTS(T, Overwrite, 4, SUFFIX, __VA_ARGS__)                                                  \
  NODEFLOW_ROW_GRADIENTS(T, Stream, 4, SUFFIX, __VA_ARGS__)                                                     \
  NODEFLOW_ROW_STATS(T, SUFFIX, __VA_ARGS__)                                                                    \
  NODEFLOW_ROW_SUM(T, SUFFIX, __VA_ARGS__)                                                                      \
  NODEFLOW_ROW_FORWARD(T, SUFFIX, __VA_ARGS__)
NODEFLOW_LANES_CLONES(NODEFLOW_ROW_ALL)

// LayerNormalization's backward writes its gradients this many rows at a
// time (column_rows_gradients).
constexpr int kBlockRows = 4;

// The column_row_sums for T.
template <typename T>
void column_row_sums_of(const T* x, const T* dy, const T* scale, T mu, T is, std::int64_t cols, T& s1, T& s2) {
  if constexpr (std::is_same_v<T, float>)
    NODEFLOW_LANES_PICK(column_row_sums_float)(x, dy, scale, mu, is, cols, s1, s2);
  else
    NODEFLOW_LANES_PICK(column_row_sums_double)(x, dy, scale, mu, is, cols, s1, s2);
}

// The column_rows_gradients for T, R (1 or kBlockRows) and `store` (kStream
// with kBlockRows only).
#define NODEFLOW_PICK_GRADIENTS(T)                                                                          \
  (R == 1 ? (store == DxStore::kAdd ? NODEFLOW_LANES_PICK(column_rows_gradients_##T##_Add_1)               \
                                    : NODEFLOW_LANES_PICK(column_rows_gradients_##T##_Overwrite_1))        \
   : store == DxStore::kAdd       ? NODEFLOW_LANES_PICK(column_rows_gradients_##T##_Add_4)                 \
   : store == DxStore::kOverwrite ? NODEFLOW_LANES_PICK(column_rows_gradients_##T##_Overwrite_4)           \
                                  : NODEFLOW_LANES_PICK(column_rows_gradients_##T##_Stream_4))
template <typename T, int R>
void column_rows_gradients_of(const T* x, const T* dy, std::int64_t ld, const T* scale, const T* mu, const T* is,
                              const T* m1, const T* m2, const T* k, T* ds, T* db, T* dx, std::int64_t cols,
                              DxStore store, std::int64_t ahead) {
  static_assert(R == 1 || R == kBlockRows);
  if constexpr (std::is_same_v<T, float>)
    NODEFLOW_PICK_GRADIENTS(float)(x, dy, ld, scale, mu, is, m1, m2, k, ds, db, dx, cols, ahead);
  else
    NODEFLOW_PICK_GRADIENTS(double)(x, dy, ld, scale, mu, is, m1, m2, k, ds, db, dx, cols, ahead);
}
#undef NODEFLOW_PICK_GRADIENTS

// The row_statistics for T.
template <typename T> void row_statistics_of(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) {
  if constexpr (std::is_same_v<T, float>)
    NODEFLOW_LANES_PICK(row_statistics_float)(x, cols, epsilon, mu, is);
  else
    NODEFLOW_LANES_PICK(row_statistics_double)(x, cols, epsilon, mu, is);
}

// The row_sum for T.
template <typename T> T row_sum_of(const T* x, std::int64_t cols) {
  if constexpr (std::is_same_v<T, float>)
    return NODEFLOW_LANES_PICK(row_sum_float)(x, cols);
  else
    return NODEFLOW_LANES_PICK(row_sum_double)(x, cols);
}

// The column_row_forward for T.
template <typename T>
T column_row_forward_of(const T* x, const T* next, const T* scale, const T* bias, T epsilon, T* y,
                        std::int64_t cols, T mu, T& is) {
  if constexpr (std::is_same_v<T, float>)
    return NODEFLOW_LANES_PICK(column_row_forward_float)(x, next, scale, bias, epsilon, y, cols, mu, is);
  else
    return NODEFLOW_LANES_PICK(column_row_forward_double)(x, next, scale, bias, epsilon, y, cols, mu, is);
}
#undef NODEFLOW_ROW_FORWARD
#undef NODEFLOW_ROW_SUM
#undef NODEFLOW_ROW_STATS
#undef NODEFLOW_ROW_ALL
#undef NODEFLOW_ROW_GRADIENTS
#undef NODEFLOW_ROW_SUMS
#pragma GCC diagnostic pop


template <typename T>
void forward_rows(const RowLayout& l, const T* x, const T* scale, const T* bias, T epsilon, T* y, T* mean, T* inv_std,
                  int threads) {
  const std::int64_t per_row = l.per_row;
  const T n = static_cast<T>(l.cols);
  parallel_ranges(threads, l.rows, [&](std::int64_t begin, std::int64_t end) {
    if (l.span == 1 && begin < end) {
      // Each row's sum comes from the previous row's pass (column_row_forward).
      T sum = row_sum_of(x + begin * l.cols, l.cols);
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t p0 = (r % l.groups) * per_row;
        const T* next = r + 1 < end ? x + (r + 1) * l.cols : nullptr;
        mean[r] = sum / n;
        sum = column_row_forward_of(x + r * l.cols, next, scale + p0, bias ? bias + p0 : nullptr, epsilon,
                                    y + r * l.cols, l.cols, mean[r], inv_std[r]);
      }
      return;
    }
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t p0 = (r % l.groups) * per_row;
      T mu, is;
      row_statistics_of(x + r * l.cols, l.cols, epsilon, mu, is);
      mean[r] = mu;
      inv_std[r] = is;
      const CMap<T> xr(x + r * l.cols, l.cols);
      MMap<T> yr(y + r * l.cols, l.cols);
      for (std::int64_t j = 0; j < per_row; ++j) {
        const T g = scale[p0 + j] * is;
        const T b = bias ? bias[p0 + j] : T(0);
        yr.segment(j * l.span, l.span) = (xr.segment(j * l.span, l.span) - mu) * g + b;
      }
    }
  });
}

// One row's sums for the x gradient: s1 = sum(dy * scale), s2 = sum(dy * scale * xhat);
// the parameter gradients of the row go into ds, db (nullptr: not wanted).
// The rows of span 1 with dy take column_rows below instead.
template <typename T>
void row_sums(const RowLayout& l, std::int64_t r, const T* x, T mu, T is, const T* scale, const T* dy, T* ds, T* db,
              T& s1, T& s2) {
  const std::int64_t per_row = l.per_row;
  const std::int64_t p0 = (r % l.groups) * per_row;
  const CMap<T> xr(x + r * l.cols, l.cols);
  const CMap<T> dr(dy + r * l.cols, l.cols);
  s1 = 0;
  s2 = 0;
  for (std::int64_t j = 0; j < per_row; ++j) {
    const auto d = dr.segment(j * l.span, l.span);
    const T sum_dy = d.sum();
    const T sum_dy_h = (d * (xr.segment(j * l.span, l.span) - mu)).sum() * is;
    s1 += scale[p0 + j] * sum_dy;
    s2 += scale[p0 + j] * sum_dy_h;
    if (ds) ds[p0 + j] += sum_dy_h;
    if (db) db[p0 + j] += sum_dy;
  }
}

// dx += k * (dy * scale - s1 / n - xhat * s2 / n), k = dx_scale * inv_std: the
// mean and the variance depend on x, which gives the two sums' terms. A
// gradient dm of the mean output adds dm / n, one di of inv_std adds
// -di * inv_std^3 * (x - mu) / n: both fold into the two row constants
// m1 and m2 (the factor of x - mu).
template <typename T> struct DxConstants {
  T m1, m2, k;
};
template <typename T> DxConstants<T> dx_constants(std::int64_t cols, T is, T s1, T s2, T dm, T di, T dx_scale) {
  const T n = static_cast<T>(cols);
  return {s1 / n - dm / (n * is), s2 / n * is + di * is * is / n, dx_scale * is};
}

// Row r's dx (dy nullptr: no dy) as row_sums'.
template <typename T>
void row_dx(const RowLayout& l, std::int64_t r, const T* x, T mu, T is, const T* scale, const T* dy, T s1, T s2, T dm,
            T di, T dx_scale, T* dx, bool overwrite) {
  const std::int64_t per_row = l.per_row;
  const std::int64_t p0 = (r % l.groups) * per_row;
  const auto [m1, m2, k] = dx_constants(l.cols, is, s1, s2, dm, di, dx_scale);
  const CMap<T> xr(x + r * l.cols, l.cols);
  MMap<T> out(dx + r * l.cols, l.cols);
  if (overwrite) out.setZero();  // the loops below add
  if (!dy) {
    out += k * (-m1 - (xr - mu) * m2);
    return;
  }
  const CMap<T> dr(dy + r * l.cols, l.cols);
  for (std::int64_t j = 0; j < per_row; ++j)
    out.segment(j * l.span, l.span) +=
        k * (dr.segment(j * l.span, l.span) * scale[p0 + j] - m1 - (xr.segment(j * l.span, l.span) - mu) * m2);
}

template <typename T> struct RowGradientPointers {
  const T* dy;
  const T* dmean;
  const T* dinv_std;
  T* dx;
  T dx_scale;
  bool dx_overwrite;
  T* dscale;
  T* dbias;
};

// R rows from r of a backward with dy whose rows have one parameter per
// column (span 1; R > 1 with one set of parameters only: LayerNormalization):
// each row's sums, then the rows' parameter gradients into ds and db and
// their dx into dx (R rows of l.cols from r's, written as `store` says).
template <int R, typename T>
void column_rows(const RowLayout& l, std::int64_t r, const T* x, const T* mean, const T* inv_std, const T* scale,
                 const RowGradientPointers<T>& g, T* ds, T* db, T* dx, DxStore store) {
  const std::int64_t o = r * l.cols;
  const std::int64_t p0 = (r % l.groups) * l.per_row;
  T m1[R], m2[R], k[R];
  for (int j = 0; j < R; ++j) {
    T s1, s2;
    column_row_sums_of(x + o + j * l.cols, g.dy + o + j * l.cols, scale + p0, mean[r + j], inv_std[r + j], l.cols,
                       s1, s2);
    const auto c = dx_constants(l.cols, inv_std[r + j], s1, s2, g.dmean ? g.dmean[r + j] : T(0),
                                g.dinv_std ? g.dinv_std[r + j] : T(0), g.dx_scale);
    m1[j] = c.m1;
    m2[j] = c.m2;
    k[j] = c.k;
  }
  // Two blocks on (with 768 columns, 24 KiB of each of x and dy).
  const std::int64_t ahead = R > 1 && r + 3 * R <= l.rows ? 2 * R * l.cols : 0;
  column_rows_gradients_of<T, R>(x + o, g.dy + o, l.cols, scale + p0, mean + r, inv_std + r, m1, m2, k, ds + p0,
                                 db + p0, dx, l.cols, store, ahead);
}

template <typename T>
void backward_rows(const RowLayout& l, const T* x, const T* mean, const T* inv_std, const T* scale,
                   const RowGradientPointers<T>& g, int threads) {
  // The parameter gradients sum over rows: each chunk of rows has its own
  // partial sums, added in chunk order, so the result does not depend on
  // how many threads ran (up to 8).
  const std::int64_t chunks = std::min<std::int64_t>(l.rows, std::max(8, threads));
  const std::int64_t p = l.params();
  const bool want_scale = g.dscale && g.dy, want_bias = g.dbias && g.dy;
  // column_rows writes every gradient: the ones nobody wants go to scratch
  // (the partial sums, and a block of dx rows per thread).
  const bool columns = l.span == 1 && g.dy;
  std::vector<T> partial_s(want_scale || columns ? static_cast<std::size_t>(chunks * p) : 0, T(0));
  std::vector<T> partial_b(want_bias || columns ? static_cast<std::size_t>(chunks * p) : 0, T(0));
  // A block of column_rows writes one line into each of its rows in turn,
  // for which the reads for ownership of plain stores are not prefetched:
  // a large overwritten dx streams, as Transpose's tiles do
  // (stream_lines::kScatteredStreamBytes).
  const DxStore store = !g.dx || g.dx_overwrite ? DxStore::kOverwrite : DxStore::kAdd;
  const bool stream = g.dx && g.dx_overwrite &&
                      static_cast<std::size_t>(l.rows * l.cols) * sizeof(T) >= stream_lines::kScatteredStreamBytes &&
                      reinterpret_cast<std::uintptr_t>(g.dx) % 16 == 0 && l.cols * sizeof(T) % 16 == 0;
  parallel_ranges(threads, chunks, [&](std::int64_t cb, std::int64_t ce) {
    std::vector<T> scratch(columns && !g.dx ? static_cast<std::size_t>(kBlockRows * l.cols) : 0);
    const auto dx_at = [&](std::int64_t row) { return g.dx ? g.dx + row * l.cols : scratch.data(); };
    for (std::int64_t c = cb; c < ce; ++c) {
      T* ds = partial_s.empty() ? nullptr : partial_s.data() + c * p;
      T* db = partial_b.empty() ? nullptr : partial_b.data() + c * p;
      std::int64_t r = l.rows * c / chunks;
      const std::int64_t e = l.rows * (c + 1) / chunks;
      if (columns) {
        if (l.groups == 1)
          for (; r + kBlockRows <= e; r += kBlockRows)
            column_rows<kBlockRows>(l, r, x, mean, inv_std, scale, g, ds, db, dx_at(r),
                                    stream ? DxStore::kStream : store);
        for (; r < e; ++r) column_rows<1>(l, r, x, mean, inv_std, scale, g, ds, db, dx_at(r), store);
        if (stream) lanes::store_fence();
        continue;
      }
      for (; r < e; ++r) {
        T s1 = 0, s2 = 0;
        if (g.dy) row_sums(l, r, x, mean[r], inv_std[r], scale, g.dy, ds, db, s1, s2);
        if (g.dx)
          row_dx(l, r, x, mean[r], inv_std[r], scale, g.dy, s1, s2, g.dmean ? g.dmean[r] : T(0),
                 g.dinv_std ? g.dinv_std[r] : T(0), g.dx_scale, g.dx, g.dx_overwrite);
      }
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c) {
    if (want_scale) MMap<T>(g.dscale, p) += CMap<T>(partial_s.data() + c * p, p);
    if (want_bias) MMap<T>(g.dbias, p) += CMap<T>(partial_b.data() + c * p, p);
  }
}

template <typename T> const T* data_or_null(const Tensor& t) { return t.empty() ? nullptr : t.data<T>(); }

}  // namespace

RowStatistics normalize_rows(const RowLayout& layout, const Tensor& x, const Tensor& scale, const Tensor& bias,
                             double epsilon, int threads) {
  const DType ct = x.dtype();
  RowStatistics s{Tensor::uninitialized(ct, x.shape()), Tensor::uninitialized(ct, {layout.rows}),
                  Tensor::uninitialized(ct, {layout.rows})};
  visit_compute_dtype(ct, [&](auto tag) {
    using T = decltype(tag);
    forward_rows<T>(layout, x.data<T>(), scale.data<T>(), data_or_null<T>(bias), static_cast<T>(epsilon),
                    s.y.data<T>(), s.mean.data<T>(), s.inv_std.data<T>(), threads);
  });
  return s;
}

void normalize_rows_backward(const RowLayout& layout, const Tensor& x, const Tensor& mean, const Tensor& inv_std,
                             const Tensor& scale, const RowGradients& g, int threads) {
  const DType ct = x.dtype();
  const auto present = [](const Tensor* t) { return t && !t->empty(); };
  // dx in another dtype than x: a work tensor in x's, added into dx at the end.
  const bool want_dx = present(g.dx);
  const bool direct = !want_dx || g.dx->dtype() == ct;
  Tensor work = direct ? Tensor{} : Tensor(ct, x.shape());
  if (want_dx && !direct && g.dx_overwrite) zero_fill(*g.dx, threads);  // work is added into it
  visit_compute_dtype(ct, [&](auto tag) {
    using T = decltype(tag);
    const auto in = [&](const Tensor* t) -> const T* { return present(t) ? t->data<T>() : nullptr; };
    const auto out = [&](Tensor* t) -> T* { return present(t) ? t->data<T>() : nullptr; };
    const RowGradientPointers<T> p{in(g.dy),
                                   in(g.dmean),
                                   in(g.dinv_std),
                                   direct ? out(g.dx) : work.data<T>(),
                                   static_cast<T>(direct ? g.dx_scale : 1.0),
                                   direct && g.dx_overwrite,
                                   out(g.dscale),
                                   out(g.dbias)};
    backward_rows<T>(layout, x.data<T>(), mean.data<T>(), inv_std.data<T>(), scale.data<T>(), p, threads);
  });
  if (!direct) accumulate_gradient(*g.dx, work, g.dx_scale);
}

}  // namespace nodeflow
