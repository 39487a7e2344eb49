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

// One LayerNormalization row (one parameter per column) of row_sums: s1 =
// sum(dy * scale), s2 = sum(dy * scale * xhat) in kLanes partial sums (the
// columns past the last whole group go to lane 0), and ds += dy * xhat, db +=
// dy when wanted. Row_sums' loops kept Eigen's SSE2 packets busy with
// compute; these lanes let a clone for a wider instruction set do the pass at
// memory speed.
template <typename T, bool WantScale, bool WantBias>
[[gnu::always_inline]] inline void column_row_sums(const T* x, const T* dy, const T* scale, T mu, T is, T* ds, T* db,
                                                   std::int64_t cols, T& s1, T& s2) {
  Lanes<T> a1 = {}, a2 = {};
  const std::int64_t full = cols / kLanes * kLanes;
  for (std::int64_t i = 0; i < full; i += kLanes) {
    const Lanes<T> d = load_lanes(dy + i);
    const Lanes<T> h = (load_lanes(x + i) - mu) * is;
    const Lanes<T> gd = d * load_lanes(scale + i);
    a1 += gd;
    a2 += gd * h;
    if constexpr (WantScale) store_lanes(ds + i, load_lanes(ds + i) + d * h);
    if constexpr (WantBias) store_lanes(db + i, load_lanes(db + i) + d);
  }
  T l1[kLanes], l2[kLanes];
  store_lanes(l1, a1);
  store_lanes(l2, a2);
  for (std::int64_t i = full; i < cols; ++i) {
    const T h = (x[i] - mu) * is;
    const T gd = dy[i] * scale[i];
    l1[0] += gd;
    l2[0] += gd * h;
    if constexpr (WantScale) ds[i] += dy[i] * h;
    if constexpr (WantBias) db[i] += dy[i];
  }
  s1 = 0;
  s2 = 0;
  for (std::int64_t lane = 0; lane < kLanes; ++lane) {
    s1 += l1[lane];
    s2 += l2[lane];
  }
}

// The sum of a lane vector's elements, in lane order.
template <typename T> [[gnu::always_inline]] inline T lane_sum(const Lanes<T>& a, T tail) {
  T l[kLanes];
  store_lanes(l, a);
  l[0] += tail;
  T s = 0;
  for (std::int64_t lane = 0; lane < kLanes; ++lane) s += l[lane];
  return s;
}

// A row's statistics for the forward: mu = sum(x) / n and is = 1 / sqrt(sum((x
// - mu)^2) / n + epsilon), two passes over the row in partial sums of kLanes
// lanes, four sets of them (lane group g into set g mod 4, so the adds of
// consecutive groups do not wait on each other; a row of 768 floats was a
// chain of 48 dependent adds per pass), added pairwise, then across the
// lanes (the columns past the last whole group go to lane 0).
template <typename T> [[gnu::always_inline]] inline Lanes<T> sum_of_sets(const Lanes<T> (&a)[4]) {
  return (a[0] + a[1]) + (a[2] + a[3]);
}
template <typename T>
[[gnu::always_inline]] inline void row_statistics(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) {
  const std::int64_t full = cols / kLanes * kLanes;
  const std::int64_t quads = cols / (4 * kLanes) * (4 * kLanes);
  const T n = static_cast<T>(cols);
  Lanes<T> a[4] = {};
  std::int64_t i = 0;
  for (; i < quads; i += 4 * kLanes)
    for (int set = 0; set < 4; ++set) a[set] += load_lanes(x + i + set * kLanes);
  for (int set = 0; i < full; i += kLanes, ++set) a[set] += load_lanes(x + i);
  T tail = 0;
  for (i = full; i < cols; ++i) tail += x[i];
  mu = lane_sum(sum_of_sets<T>(a), tail) / n;
  Lanes<T> v[4] = {};
  for (i = 0; i < quads; i += 4 * kLanes)
    for (int set = 0; set < 4; ++set) {
      const Lanes<T> d = load_lanes(x + i + set * kLanes) - mu;
      v[set] += d * d;
    }
  for (int set = 0; i < full; i += kLanes, ++set) {
    const Lanes<T> d = load_lanes(x + i) - mu;
    v[set] += d * d;
  }
  tail = 0;
  for (i = full; i < cols; ++i) tail += (x[i] - mu) * (x[i] - mu);
  is = T(1) / std::sqrt(lane_sum(sum_of_sets<T>(v), tail) / n + epsilon);
}

// One LayerNormalization row of the forward (one parameter per column):
// y = (x - mu) * is * scale + bias (bias nullptr: none).
template <typename T>
[[gnu::always_inline]] inline void column_row_forward(const T* x, const T* scale, const T* bias, T epsilon, T* y,
                                                      std::int64_t cols, T& mu, T& is) {
  row_statistics(x, cols, epsilon, mu, is);
  const std::int64_t full = cols / kLanes * kLanes;
  const T m = mu, s = is;
  if (bias) {
    for (std::int64_t i = 0; i < full; i += kLanes)
      store_lanes(y + i, (load_lanes(x + i) - m) * s * load_lanes(scale + i) + load_lanes(bias + i));
    for (std::int64_t i = full; i < cols; ++i) y[i] = (x[i] - m) * s * scale[i] + bias[i];
  } else {
    for (std::int64_t i = 0; i < full; i += kLanes)
      store_lanes(y + i, (load_lanes(x + i) - m) * s * load_lanes(scale + i));
    for (std::int64_t i = full; i < cols; ++i) y[i] = (x[i] - m) * s * scale[i];
  }
}

// One such row of row_dx: dx += k * (dy * scale - m1 - (x - mu) * m2), or
// dx = ... (Overwrite, an uninitialised dx).
template <bool Overwrite, typename T>
[[gnu::always_inline]] inline void column_row_dx(const T* x, const T* dy, const T* scale, T mu, T m1, T m2, T k, T* dx,
                                                 std::int64_t cols) {
  const std::int64_t full = cols / kLanes * kLanes;
  for (std::int64_t i = 0; i < full; i += kLanes) {
    const Lanes<T> d = k * (load_lanes(dy + i) * load_lanes(scale + i) - m1 - (load_lanes(x + i) - mu) * m2);
    store_lanes(dx + i, Overwrite ? d : load_lanes(dx + i) + d);
  }
  for (std::int64_t i = full; i < cols; ++i) {
    const T d = k * (dy[i] * scale[i] - m1 - (x[i] - mu) * m2);
    dx[i] = Overwrite ? d : dx[i] + d;
  }
}

// The instantiations for each instruction set (NODEFLOW_LANES_CLONES,
// nodes/common/vector_lanes.hpp).
#define NODEFLOW_ROW_SUMS(T, S, B, SUFFIX, ...)                                                               \
  __VA_ARGS__ void column_row_sums_##T##_##S##B##SUFFIX(const T* x, const T* dy, const T* scale, T mu, T is, \
                                                         T* ds, T* db, std::int64_t cols, T& s1, T& s2) {      \
    column_row_sums<T, S, B>(x, dy, scale, mu, is, ds, db, cols, s1, s2);                                      \
  }
#define NODEFLOW_ROW_DX(T, O, SUFFIX, ...)                                                                    \
  __VA_ARGS__ void column_row_dx_##T##_##O##SUFFIX(const T* x, const T* dy, const T* scale, T mu, T m1, T m2, T k, \
                                                    T* dx, std::int64_t cols) {                                   \
    column_row_dx<O>(x, dy, scale, mu, m1, m2, k, dx, cols);                                                      \
  }
#define NODEFLOW_ROW_STATS(T, SUFFIX, ...)                                                             \
  __VA_ARGS__ void row_statistics_##T##SUFFIX(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) { \
    row_statistics(x, cols, epsilon, mu, is);                                                          \
  }
#define NODEFLOW_ROW_FORWARD(T, SUFFIX, ...)                                                                   \
  __VA_ARGS__ void column_row_forward_##T##SUFFIX(const T* x, const T* scale, const T* bias, T epsilon, T* y, \
                                                   std::int64_t cols, T& mu, T& is) {                         \
    column_row_forward(x, scale, bias, epsilon, y, cols, mu, is);                                             \
  }
#define NODEFLOW_ROW_ALL(T, SUFFIX, ...)                                                          \
  NODEFLOW_ROW_SUMS(T, 0, 0, SUFFIX, __VA_ARGS__) NODEFLOW_ROW_SUMS(T, 0, 1, SUFFIX, __VA_ARGS__) \
  NODEFLOW_ROW_SUMS(T, 1, 0, SUFFIX, __VA_ARGS__) NODEFLOW_ROW_SUMS(T, 1, 1, SUFFIX, __VA_ARGS__) \
  NODEFLOW_ROW_DX(T, 0, SUFFIX, __VA_ARGS__) NODEFLOW_ROW_DX(T, 1, SUFFIX, __VA_ARGS__)          \
  NODEFLOW_ROW_STATS(T, SUFFIX, __VA_ARGS__)                                                    \
  NODEFLOW_ROW_FORWARD(T, SUFFIX, __VA_ARGS__)
NODEFLOW_LANES_CLONES(NODEFLOW_ROW_ALL)

// The column_row_sums for T and the wanted parameter gradients.
template <typename T>
void column_row_sums_of(const T* x, const T* dy, const T* scale, T mu, T is, T* ds, T* db, std::int64_t cols, T& s1,
                        T& s2) {
  using F = void (*)(const T*, const T*, const T*, T, T, T*, T*, std::int64_t, T&, T&);
  F f;
  if constexpr (std::is_same_v<T, float>)
    f = ds ? (db ? NODEFLOW_LANES_PICK(column_row_sums_float_11) : NODEFLOW_LANES_PICK(column_row_sums_float_10))
           : (db ? NODEFLOW_LANES_PICK(column_row_sums_float_01) : NODEFLOW_LANES_PICK(column_row_sums_float_00));
  else
    f = ds ? (db ? NODEFLOW_LANES_PICK(column_row_sums_double_11) : NODEFLOW_LANES_PICK(column_row_sums_double_10))
           : (db ? NODEFLOW_LANES_PICK(column_row_sums_double_01) : NODEFLOW_LANES_PICK(column_row_sums_double_00));
  f(x, dy, scale, mu, is, ds, db, cols, s1, s2);
}

// The column_row_dx for T.
template <typename T>
void column_row_dx_of(const T* x, const T* dy, const T* scale, T mu, T m1, T m2, T k, T* dx, std::int64_t cols,
                      bool overwrite) {
  if constexpr (std::is_same_v<T, float>)
    (overwrite ? NODEFLOW_LANES_PICK(column_row_dx_float_1) : NODEFLOW_LANES_PICK(column_row_dx_float_0))(
        x, dy, scale, mu, m1, m2, k, dx, cols);
  else
    (overwrite ? NODEFLOW_LANES_PICK(column_row_dx_double_1) : NODEFLOW_LANES_PICK(column_row_dx_double_0))(
        x, dy, scale, mu, m1, m2, k, dx, cols);
}

// The row_statistics for T.
template <typename T> void row_statistics_of(const T* x, std::int64_t cols, T epsilon, T& mu, T& is) {
  if constexpr (std::is_same_v<T, float>)
    NODEFLOW_LANES_PICK(row_statistics_float)(x, cols, epsilon, mu, is);
  else
    NODEFLOW_LANES_PICK(row_statistics_double)(x, cols, epsilon, mu, is);
}

// The column_row_forward for T.
template <typename T>
void column_row_forward_of(const T* x, const T* scale, const T* bias, T epsilon, T* y, std::int64_t cols, T& mu,
                           T& is) {
  if constexpr (std::is_same_v<T, float>)
    NODEFLOW_LANES_PICK(column_row_forward_float)(x, scale, bias, epsilon, y, cols, mu, is);
  else
    NODEFLOW_LANES_PICK(column_row_forward_double)(x, scale, bias, epsilon, y, cols, mu, is);
}
#undef NODEFLOW_ROW_FORWARD
#undef NODEFLOW_ROW_STATS
#undef NODEFLOW_ROW_ALL
#undef NODEFLOW_ROW_DX
#undef NODEFLOW_ROW_SUMS
#pragma GCC diagnostic pop


template <typename T>
void forward_rows(const RowLayout& l, const T* x, const T* scale, const T* bias, T epsilon, T* y, T* mean, T* inv_std,
                  int threads) {
  const std::int64_t per_row = l.per_row;
  parallel_ranges(threads, l.rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t p0 = (r % l.groups) * per_row;
      T mu, is;
      if (l.span == 1) {
        column_row_forward_of(x + r * l.cols, scale + p0, bias ? bias + p0 : nullptr, epsilon, y + r * l.cols,
                              l.cols, mu, is);
        mean[r] = mu;
        inv_std[r] = is;
        continue;
      }
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
template <typename T>
void row_sums(const RowLayout& l, std::int64_t r, const T* x, T mu, T is, const T* scale, const T* dy, T* ds, T* db,
              T& s1, T& s2) {
  const std::int64_t per_row = l.per_row;
  const std::int64_t p0 = (r % l.groups) * per_row;
  const CMap<T> xr(x + r * l.cols, l.cols);
  const CMap<T> dr(dy + r * l.cols, l.cols);
  s1 = 0;
  s2 = 0;
  if (l.span == 1) {
    column_row_sums_of(x + r * l.cols, dy + r * l.cols, scale + p0, mu, is, ds ? ds + p0 : nullptr,
                       db ? db + p0 : nullptr, l.cols, s1, s2);
    return;
  }
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
// -di * inv_std^3 * (x - mu) / n: both fold into the two row constants.
template <typename T>
void row_dx(const RowLayout& l, std::int64_t r, const T* x, T mu, T is, const T* scale, const T* dy, T s1, T s2, T dm,
            T di, T dx_scale, T* dx, bool overwrite) {
  const std::int64_t per_row = l.per_row;
  const std::int64_t p0 = (r % l.groups) * per_row;
  const T n = static_cast<T>(l.cols);
  const T m1 = s1 / n - dm / (n * is);
  const T m2 = s2 / n * is + di * is * is / n;  // times (x - mu)
  const T k = dx_scale * is;
  const CMap<T> xr(x + r * l.cols, l.cols);
  MMap<T> out(dx + r * l.cols, l.cols);
  if (overwrite && (!dy || l.span != 1)) out.setZero();  // the paths below add
  if (!dy) {
    out += k * (-m1 - (xr - mu) * m2);
    return;
  }
  const CMap<T> dr(dy + r * l.cols, l.cols);
  if (l.span == 1) {
    column_row_dx_of(x + r * l.cols, dy + r * l.cols, scale + p0, mu, m1, m2, k, dx + r * l.cols, l.cols, overwrite);
    return;
  }
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

template <typename T>
void backward_rows(const RowLayout& l, const T* x, const T* mean, const T* inv_std, const T* scale,
                   const RowGradientPointers<T>& g, int threads) {
  // The parameter gradients sum over rows: each chunk of rows has its own
  // partial sums, added in chunk order, so the result does not depend on
  // how many threads ran (up to 8).
  const std::int64_t chunks = std::min<std::int64_t>(l.rows, std::max(8, threads));
  const std::int64_t p = l.params();
  const bool want_scale = g.dscale && g.dy, want_bias = g.dbias && g.dy;
  std::vector<T> partial_s(want_scale ? static_cast<std::size_t>(chunks * p) : 0, T(0));
  std::vector<T> partial_b(want_bias ? static_cast<std::size_t>(chunks * p) : 0, T(0));
  parallel_ranges(threads, chunks, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      T* ds = want_scale ? partial_s.data() + c * p : nullptr;
      T* db = want_bias ? partial_b.data() + c * p : nullptr;
      for (std::int64_t r = l.rows * c / chunks, e = l.rows * (c + 1) / chunks; r < e; ++r) {
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
