#pragma once
// The entry points each instruction-set build of the fast pooling kernels
// (PoolKernels, pool_fast_kernels.hpp) exports, as a table of plain function pointers:
// pool_fast.cpp picks a table for the CPU and splits the work items of a
// Plan among threads. Every entry handles the items [begin, end).
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "nodes/pooling/fast/pool_fast_plan.hpp"

namespace nodeflow::fast {

template <typename T>
struct KernelTable {
  /// Forward (max, average or Lp per plan.reduce); a non-empty argmax is
  /// filled. Returns false when an average or Lp value of the items may be
  /// wrong (not finite, or below plan.value_floor): redo_windows fixes them.
  bool (*forward)(const Plan&, const T* x, T* y, Argmax argmax, std::int64_t begin,
                  std::int64_t end) = nullptr;
  /// dx += scale * AveragePool's gradient; items are Plan::backward_items().
  /// Elements whose shares |dY| / divisor exceed plan.term_limit are left
  /// alone and appended to `redo`, for average_backward_wide.
  void (*average_backward)(const Plan&, const T* dy, double scale, T* dx, std::int64_t begin,
                           std::int64_t end, std::vector<GradientRedo>& redo) = nullptr;
  /// dx += scale * MaxPool's gradient; items are planes.
  void (*max_backward)(const Plan&, SavedArgmax argmax, const T* dy, double scale, T* dx,
                       std::int64_t begin, std::int64_t end) = nullptr;
};

/// The table of the kernels K (a PoolKernels instantiation); integer dtypes
/// have MaxPool's forward only.
template <class K>
constexpr KernelTable<typename K::T> kernel_table() {
  KernelTable<typename K::T> table;
  table.forward = &K::forward;
  if constexpr (!std::is_integral_v<typename K::T>) {
    table.average_backward = &K::average_backward;
    table.max_backward = &K::max_backward;
  }
  return table;
}

/// Plain C++ kernels for every pooling dtype (the float32 fallback too).
template <typename T>
const KernelTable<T>& portable_kernels();

/// LpPool's backward in the reference's order (bitwise the same result),
/// over planes [begin, end) of x, y and dy; `wide`: the sums run in float64,
/// as the reference kernel's do when pool_math::gradient_fits is false.
template <typename T>
void lp_backward_planes(const Plan& plan, const T* x, const T* y, const T* dy, double scale, T* dx,
                        std::int64_t begin, std::int64_t end, bool wide);

/// Writes again, exactly (pool_math::window_average, window_lp), the
/// average or Lp outputs of forward items [begin, end) that the fast sums
/// may have got wrong: those not finite or below plan.value_floor.
template <typename T>
void redo_windows(const Plan& plan, const T* x, T* y, std::int64_t begin, std::int64_t end);

/// AveragePool's gradient for the elements of `redo`, summed in float64
/// (pool_math::WideGradient): dx += scale * the sum of dY / divisor over the
/// windows holding each element.
template <typename T>
void average_backward_wide(const Plan& plan, const T* dy, double scale, T* dx,
                           const GradientRedo& redo);

#if defined(__x86_64__)
/// float32 kernels for AVX2 + FMA and for AVX-512 (F, BW, DQ, VL), built for
/// x86-64 only.
const KernelTable<float>& avx2_kernels();
const KernelTable<float>& avx512_kernels();
#endif

}  // namespace nodeflow::fast
