#pragma once
// Backward, MaxPool: dX[argmax] += scale * dY, in the reference's order.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// Throws RunError unless every saved argmax of `plane` (am: its first)
/// lies in [origin, origin + in_plane); kFlat: flat indices (origin the
/// plane's first input), else offsets (origin 0).
template <class B>
template <bool kFlat, class A>
inline void PoolKernels<B>::check_argmax(const Plan& plan, const A* am, std::int64_t plane) {
  const std::int64_t origin = kFlat ? plane * plan.in_plane : 0;
  // A branch-free min/max (vectorized by the compiler) first; the loop
  // that names the culprit runs only on failure. No subtraction: a
  // corrupt value near the type's limits must not overflow.
  A lo = std::numeric_limits<A>::max(), hi = std::numeric_limits<A>::min();
  for (std::int64_t o = 0; o < plan.out_plane; ++o) {
    lo = std::min(lo, am[o]);
    hi = std::max(hi, am[o]);
  }
  if (lo >= origin && hi < origin + plan.in_plane) return;
  for (std::int64_t o = 0; o < plan.out_plane; ++o)
    if (am[o] < origin || am[o] >= origin + plan.in_plane)
      throw_argmax_outside(am[o], plane * plan.out_plane + o, plane, plan.in_plane, !kFlat);
}

template <class B>
inline void PoolKernels<B>::max_backward(const Plan& plan, SavedArgmax argmax, const T* dy,
                                         double scale, T* dx, std::int64_t begin,
                                         std::int64_t end) {
  if (argmax.offsets)
    max_backward_planes(plan, argmax.offsets, dy, scale, dx, begin, end);
  else
    max_backward_planes(plan, argmax.flat, dy, scale, dx, begin, end);
}

/// MaxPool's backward over planes [begin, end) from int64 flat indices or
/// int32 offsets within each plane.
template <class B>
template <class A>
inline void PoolKernels<B>::max_backward_planes(const Plan& plan, const A* argmax, const T* dy,
                                                double scale, T* dx, std::int64_t begin,
                                                std::int64_t end) {
  constexpr bool kFlat = std::is_same_v<A, std::int64_t>;
  const V scale_v = B::broadcast(static_cast<C>(scale));
  if constexpr (!kFlat && N > 1) {
    if (fused_backward_ok(plan))
      return fused_max_backward(plan, argmax, dy, scale_v, dx, begin, end);
  }
  // Zeroed once: the pass that adds a plane's sums to dX zeroes them again.
  std::vector<C> buffer(at(kScatterPlanes * plan.in_plane), C(0));
  for (std::int64_t first = begin; first < end; first += kScatterPlanes) {
    const std::int64_t count = std::min(kScatterPlanes, end - first);
    const A* am[kScatterPlanes];
    const T* dyp[kScatterPlanes];
    C* sums[kScatterPlanes];
    std::int64_t origin[kScatterPlanes];  // what each plane's argmax counts from
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t plane = first + k;
      sums[k] = buffer.data() + k * plan.in_plane;
      check_argmax<kFlat>(plan, argmax + plane * plan.out_plane, plane);
      am[k] = argmax + plane * plan.out_plane;
      origin[k] = kFlat ? plane * plan.in_plane : 0;
      dyp[k] = dy + plane * plan.out_plane;
    }
    const bool more = first + count < end;
    if (count == kScatterPlanes)
      scatter<kScatterPlanes>(plan, am, origin, dyp, sums, more);
    else
      scatter<1>(plan, am, origin, dyp, sums, more);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t plane = first + k;
      T* dxp = dx + plane * plan.in_plane;
      // The next plane's dX, one line per vector updated here.
      const T* ahead = plane + 1 < end ? dxp + plan.in_plane : nullptr;
      for (std::int64_t i = 0; i < plan.in_plane; i += N) {
        if (ahead && i % (64 / sizeof(T)) < N) __builtin_prefetch(ahead + i, 1, 3);
        const M m = B::first_n(plan.in_plane - i);
        update(dxp + i, B::load(sums[k] + i, m), scale_v, std::min(N, plan.in_plane - i));
        B::store(sums[k] + i, B::zero(), m);
      }
    }
  }
}

/// MaxPool's backward on the fused geometry (fused_backward_ok) from int32
/// offsets: no input is in two windows, so each dX row is updated once, in
/// one pass, from its window row's dY and argmax, without the scatter's
/// per-plane sums: input 2k + s of a row (s = 0, 1) takes 0 + dY[k] where
/// output k's argmax is that input, else 0, and dX + scale * that is the
/// scatter's arithmetic, so the result is bitwise the same. (A saved offset
/// inside the plane but outside its window, which no forward writes, is
/// ignored here where the scatter would add it; offsets outside the plane
/// are refused as there.)
template <class B>
inline void PoolKernels<B>::fused_max_backward(const Plan& plan, const std::int32_t* argmax,
                                               const T* dy, V scale, T* dx, std::int64_t begin,
                                               std::int64_t end) {
  const std::int64_t width = plan.axes.back().in, outs = plan.axes.back().out;
  const std::int64_t in_plane = plan.in_plane, out_plane = plan.out_plane;
  // Per pair of dX vectors (inputs [2pN, 2pN + 2N)): the lanes of its N
  // outputs and of its two dX vectors, the same in every row.
  const std::int64_t pairs = (width + 2 * N - 1) / (2 * N);
  std::vector<MBox, Aligned<MBox>> lanes(at(3 * pairs));
  for (std::int64_t p = 0; p < pairs; ++p) {
    lanes[at(3 * p)].v = B::first_n(outs - p * N);
    lanes[at(3 * p + 1)].v = B::first_n(width - 2 * p * N);
    lanes[at(3 * p + 2)].v = B::first_n(width - 2 * p * N - N);
  }
  const I evens = B::iota(0, 2);  // lane j: the even input of output j
  const FusedInputRows input_rows(plan);
  for (std::int64_t plane = begin; plane < end; ++plane) {
    const std::int32_t* am = argmax + plane * out_plane;
    check_argmax<false>(plan, am, plane);
    const T* dyp = dy + plane * out_plane;
    T* dxp = dx + plane * in_plane;
    const bool more = plane + 1 < end;
    input_rows.each(0, plan.axes[0].in, [&](std::int64_t r, std::int64_t w) {
      T* row = dxp + r * width;
      const std::int64_t window_row = std::max<std::int64_t>(w, 0) * outs;  // w < 0: unused
      const std::int32_t* am_row = am + window_row;
      const T* dy_row = dyp + window_row;
      const I row_evens = B::add_i(evens, r * width);
      for (std::int64_t p = 0; p < pairs; ++p) {
        const M out_m = lanes[at(3 * p)].v, lo_m = lanes[at(3 * p + 1)].v;
        V even = B::zero(), odd = B::zero();
        if (w >= 0) {
          if (more) {
            __builtin_prefetch(am_row + p * N + out_plane, 0, 3);
            __builtin_prefetch(dy_row + p * N + out_plane, 0, 3);
          }
          const I winner = B::load_i(am_row + p * N, out_m);
          const V share = B::add(B::zero(), B::load(dy_row + p * N, out_m));
          const I at_even = B::add_i(row_evens, 2 * p * N);
          even = B::select(B::equal_i(out_m, winner, at_even), share, B::zero());
          odd = B::select(B::equal_i(out_m, winner, B::add_i(at_even, 1)), share, B::zero());
        }
        V lo, hi;
        B::interleave(even, odd, lo, hi);
        T* at_dx = row + 2 * p * N;
        if (more) {
          __builtin_prefetch(at_dx + in_plane, 1, 3);
          __builtin_prefetch(at_dx + N + in_plane, 1, 3);
        }
        B::store(at_dx, B::add(B::load(at_dx, lo_m), B::mul(scale, lo)), lo_m);
        if (2 * p * N + N < width) {
          const M hi_m = lanes[at(3 * p + 2)].v;
          B::store(at_dx + N, B::add(B::load(at_dx + N, hi_m), B::mul(scale, hi)), hi_m);
        }
      }
    });
  }
}

/// sums[k][am[k][o] - origin[k]] += dy[k][o] for the outputs of K planes
/// in output order, the planes interleaved (the argmax checked in range);
/// `more`: prefetch the next K planes'.
template <class B>
template <std::int64_t K, class A>
inline void PoolKernels<B>::scatter(const Plan& plan, const A* const* am,
                                    const std::int64_t* origin, const T* const* dyp, C* const* sums,
                                    bool more) {
  const std::int64_t ahead = K * plan.out_plane;
  std::int64_t o = 0;
  for (; o + 8 <= plan.out_plane; o += 8) {
    if (more)
      for (std::int64_t k = 0; k < K; ++k) {
        if (o % (64 / sizeof(A)) == 0) __builtin_prefetch(am[k] + ahead + o, 0, 3);
        if (o % (64 / sizeof(T)) == 0) __builtin_prefetch(dyp[k] + ahead + o, 0, 3);
      }
    for (std::int64_t u = o; u < o + 8; ++u)
      for (std::int64_t k = 0; k < K; ++k)
        sums[k][am[k][u] - origin[k]] += static_cast<C>(dyp[k][u]);
  }
  for (; o < plan.out_plane; ++o)
    for (std::int64_t k = 0; k < K; ++k)
      sums[k][am[k][o] - origin[k]] += static_cast<C>(dyp[k][o]);
}

}  // namespace nodeflow::fast
