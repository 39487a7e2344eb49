// The one translation unit of the normalization ops' Eigen kernels: rows are
// split over the threads; each row is short enough for the cache in the usual
// shapes (a transformer's 768 features), so its passes cost little beyond the
// one read of x and write of y.
#include "nodes/normalization/normalize_rows.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "nodes/common/layer_common.hpp"
#include "nodes/common/parallel.hpp"

namespace nodeflow {
namespace {

template <typename T> using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T> using CMap = Eigen::Map<const Arr<T>>;
template <typename T> using MMap = Eigen::Map<Arr<T>>;

template <typename T>
void forward_rows(const RowLayout& l, const T* x, const T* scale, const T* bias, T epsilon, T* y, T* mean, T* inv_std,
                  int threads) {
  const std::int64_t per_row = l.per_row;
  const T n = static_cast<T>(l.cols);
  parallel_ranges(threads, l.rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const CMap<T> xr(x + r * l.cols, l.cols);
      MMap<T> yr(y + r * l.cols, l.cols);
      const T mu = xr.sum() / n;
      const T is = T(1) / std::sqrt((xr - mu).square().sum() / n + epsilon);
      mean[r] = mu;
      inv_std[r] = is;
      const std::int64_t p0 = (r % l.groups) * per_row;
      if (l.span == 1) {
        const CMap<T> g(scale + p0, l.cols);
        if (bias)
          yr = (xr - mu) * is * g + CMap<T>(bias + p0, l.cols);
        else
          yr = (xr - mu) * is * g;
        continue;
      }
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
    // One pass for the two sums and the two parameter updates (four Eigen
    // expressions would each stream the row again); the lanes of partial
    // sums let the compiler vectorise without reassociating.
    constexpr std::int64_t kLanes = 8;
    T a1[kLanes] = {}, a2[kLanes] = {};
    const T* xp = x + r * l.cols;
    const T* dp = dy + r * l.cols;
    const T* gp = scale + p0;
    const std::int64_t full = l.cols / kLanes * kLanes;
    const auto step = [&](std::int64_t i, std::int64_t lane) {
      const T h = (xp[i] - mu) * is;
      const T gd = dp[i] * gp[i];
      a1[lane] += gd;
      a2[lane] += gd * h;
      if (ds) ds[p0 + i] += dp[i] * h;
      if (db) db[p0 + i] += dp[i];
    };
    for (std::int64_t i = 0; i < full; i += kLanes)
      for (std::int64_t lane = 0; lane < kLanes; ++lane) step(i + lane, lane);
    for (std::int64_t i = full; i < l.cols; ++i) step(i, 0);
    for (std::int64_t lane = 0; lane < kLanes; ++lane) {
      s1 += a1[lane];
      s2 += a2[lane];
    }
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
            T di, T dx_scale, T* dx) {
  const std::int64_t per_row = l.per_row;
  const std::int64_t p0 = (r % l.groups) * per_row;
  const T n = static_cast<T>(l.cols);
  const T m1 = s1 / n - dm / (n * is);
  const T m2 = s2 / n * is + di * is * is / n;  // times (x - mu)
  const T k = dx_scale * is;
  const CMap<T> xr(x + r * l.cols, l.cols);
  MMap<T> out(dx + r * l.cols, l.cols);
  if (!dy) {
    out += k * (-m1 - (xr - mu) * m2);
    return;
  }
  const CMap<T> dr(dy + r * l.cols, l.cols);
  if (l.span == 1) {
    out += k * (dr * CMap<T>(scale + p0, l.cols) - m1 - (xr - mu) * m2);
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
        // dx's row is read after the sums: fetch it while they stream x and dy.
        if (g.dx)
          for (std::int64_t i = 0; i < l.cols; i += 64 / static_cast<std::int64_t>(sizeof(T)))
            __builtin_prefetch(g.dx + r * l.cols + i, 1);
        if (g.dy) row_sums(l, r, x, mean[r], inv_std[r], scale, g.dy, ds, db, s1, s2);
        if (g.dx)
          row_dx(l, r, x, mean[r], inv_std[r], scale, g.dy, s1, s2, g.dmean ? g.dmean[r] : T(0),
                 g.dinv_std ? g.dinv_std[r] : T(0), g.dx_scale, g.dx);
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
  visit_compute_dtype(ct, [&](auto tag) {
    using T = decltype(tag);
    const auto in = [&](const Tensor* t) -> const T* { return present(t) ? t->data<T>() : nullptr; };
    const auto out = [&](Tensor* t) -> T* { return present(t) ? t->data<T>() : nullptr; };
    const RowGradientPointers<T> p{in(g.dy),
                                   in(g.dmean),
                                   in(g.dinv_std),
                                   direct ? out(g.dx) : work.data<T>(),
                                   static_cast<T>(direct ? g.dx_scale : 1.0),
                                   out(g.dscale),
                                   out(g.dbias)};
    backward_rows<T>(layout, x.data<T>(), mean.data<T>(), inv_std.data<T>(), scale.data<T>(), p, threads);
  });
  if (!direct) accumulate_gradient(*g.dx, work, g.dx_scale);
}

}  // namespace nodeflow
