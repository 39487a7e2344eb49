#pragma once
// Forward, one window over the whole plane (global pooling).
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// The plane's sum, finished: the average, or the Lp root.
template <class B>
template <SumTerm tr>
inline auto PoolKernels<B>::finish_sum(const Plan& plan, C sum, C divisor) -> C {
  if (plan.reduce == Reduce::Average) return sum / divisor;
  if (plan.p == 1) return sum;
  if (plan.p == 2) return std::sqrt(sum);
  return static_cast<C>(std::pow(sum, C(1) / static_cast<C>(plan.p)));
}

template <class B>
template <SumTerm tr>
inline bool PoolKernels<B>::whole_plane_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                                            std::int64_t end) {
  const std::int64_t size = plan.in_plane;
  const auto divisor = plan.reduce == Reduce::Average
                           ? static_cast<C>(plan.axes[0].divisor[0] * plan.inner_divisor[0])
                           : C(1);
  if constexpr (N > 1) {
    const std::int64_t vectors = (size + N - 1) / N;
    if (vectors <= 4)
      return small_plane_sums<tr>(plan, x, y, divisor, begin, end, vectors);
  }
  const std::int64_t ahead = planes_ahead(plan);
  bool in_range = true;
  for (std::int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * size;
    if (plane + ahead < plan.planes) prefetch_row(xp + ahead * size, size);
    V acc0 = B::zero(), acc1 = B::zero(), acc2 = B::zero(), acc3 = B::zero();
    std::int64_t i = 0;
    for (; i + 4 * N <= size; i += 4 * N) {
      acc0 = B::add(acc0, transform<tr>(B::load(xp + i), plan.p));
      acc1 = B::add(acc1, transform<tr>(B::load(xp + i + N), plan.p));
      acc2 = B::add(acc2, transform<tr>(B::load(xp + i + 2 * N), plan.p));
      acc3 = B::add(acc3, transform<tr>(B::load(xp + i + 3 * N), plan.p));
    }
    for (; i < size; i += N)
      acc0 = B::add(acc0, transform<tr>(B::load(xp + i, B::first_n(size - i)), plan.p));
    const C sum = B::reduce_add(B::add(B::add(acc0, acc1), B::add(acc2, acc3)));
    const C value = finish_sum<tr>(plan, sum, divisor);
    in_range = in_range && !scalar_out_of_range(value, plan);
    y[plane] = static_cast<T>(value);
  }
  return in_range;
}

/// Planes of at most 4 vectors (7 x 7 = 49 elements: 4): the vector count
/// is a template argument, so each plane is straight code. The general
/// version's loops of a few iterations per plane took 1.75x its time on
/// 7 x 7 planes (P4), though its horizontal sums were not the cost (summing
/// N planes' vectors at once changed nothing).
template <class B>
template <SumTerm tr>
inline bool PoolKernels<B>::small_plane_sums(const Plan& plan, const T* x, T* y, C divisor,
                                             std::int64_t begin, std::int64_t end,
                                             std::int64_t vectors) {
  bool in_range = true;
  auto run = [&](auto count) {
    constexpr int K = decltype(count)::value;
    const std::int64_t size = plan.in_plane;
    const M last = B::first_n(size - (K - 1) * N);
    const std::int64_t ahead = planes_ahead(plan) * size;
    const std::int64_t stop = std::max(begin, std::min(end, plan.planes - planes_ahead(plan)));
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * size;
      if (plane < stop) {
        // Every line the plane `ahead` on spans (it starts anywhere in one).
        for (int k = 0; k < K; ++k) __builtin_prefetch(xp + ahead + k * N, 0, 3);
        __builtin_prefetch(xp + ahead + size - 1, 0, 3);
      }
      // Named vectors, not an array: an array of them stayed on the stack.
      auto vec = [&](int k) {
        return transform<tr>(k + 1 < K ? B::load(xp + k * N) : B::load(xp + k * N, last),
                             plan.p);
      };
      V sum = B::add(B::zero(), vec(0));  // the reference's sum starts from 0: no -0
      if constexpr (K == 2) sum = B::add(sum, vec(1));
      if constexpr (K == 3) sum = B::add(B::add(sum, vec(1)), vec(2));
      if constexpr (K == 4) sum = B::add(B::add(sum, vec(1)), B::add(vec(2), vec(3)));
      const C value = finish_sum<tr>(plan, B::reduce_add(sum), divisor);
      in_range = in_range && !scalar_out_of_range(value, plan);
      y[plane] = static_cast<T>(value);
    }
  };
  switch (vectors) {
    case 1: run(std::integral_constant<int, 1>{}); break;
    case 2: run(std::integral_constant<int, 2>{}); break;
    case 3: run(std::integral_constant<int, 3>{}); break;
    default: run(std::integral_constant<int, 4>{});
  }
  return in_range;
}

template <class B>
template <bool kIdx>
inline void PoolKernels<B>::whole_plane_max(const Plan& plan, const T* x, T* y, Argmax argmax,
                                            std::int64_t begin, std::int64_t end) {
  const std::int64_t size = plan.in_plane;
  const std::int64_t ahead = planes_ahead(plan);
  for (std::int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * size;
    if (plane + ahead < plan.planes) prefetch_row(xp + ahead * size, size);
    V best = B::zero();
    I best_idx = B::iota(0, 0);
    M seen = B::none();
    for (std::int64_t i = 0; i < size; i += N) {
      const M valid = B::first_n(size - i);
      const V v = B::load(xp + i, valid);
      const M take = B::mand(valid, B::mor(B::mnot(seen), B::beats(v, best)));
      best = B::select(take, v, best);
      best_idx = B::select_i(take, B::iota(i, 1), best_idx);
      seen = B::mor(seen, valid);
    }
    // Lane j saw the positions = j mod N: its winner is the first maximum
    // there; the plane's is the lanes' maximum with the smallest position.
    C values[N];
    std::int32_t positions[N];
    B::store(values, best, B::first_n(N));
    B::store_i(positions, best_idx, B::first_n(N));
    std::int64_t w = 0;
    for (std::int64_t l = 1; l < std::min(N, size); ++l) {
      if (scalar_beats(values[l], values[w]) ||
          (!scalar_beats(values[w], values[l]) && positions[l] < positions[w]))
        w = l;
    }
    y[plane] = static_cast<T>(values[w]);
    if constexpr (kIdx) {
      if (argmax.offsets)
        argmax.offsets[plane] = positions[w];
      else
        argmax.flat[plane] = plane * size + positions[w];
    }
  }
}

}  // namespace nodeflow::fast
