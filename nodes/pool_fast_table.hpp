#pragma once
// The entry points each instruction-set build of the fast pooling kernels
// (pool_fast_kernels.hpp) exports, as a table of plain function pointers:
// pool_fast.cpp picks a table for the CPU and splits the work items of a
// Plan among threads. Every entry handles the items [begin, end).
#include <cstdint>

#include "core/dtype.hpp"
#include "nodes/pool_fast_plan.hpp"

namespace nodeflow::fast {

template <typename T>
struct KernelTable {
  /// Forward (max, average or Lp per plan.reduce); a non-empty argmax is filled.
  void (*forward)(const Plan&, const T* x, T* y, Argmax argmax, std::int64_t begin,
                  std::int64_t end) = nullptr;
  /// dx += scale * AveragePool's gradient; items are Plan::backward_items().
  void (*average_backward)(const Plan&, const T* dy, double scale, T* dx, std::int64_t begin,
                           std::int64_t end) = nullptr;
  /// dx += scale * MaxPool's gradient; items are planes.
  void (*max_backward)(const Plan&, SavedArgmax argmax, const T* dy, double scale, T* dx,
                       std::int64_t begin, std::int64_t end) = nullptr;
};

/// Plain C++ kernels for every pooling dtype (the float32 fallback too).
template <typename T>
const KernelTable<T>& portable_kernels();

/// LpPool's backward in the reference's order (bitwise the same result),
/// over planes [begin, end) of x, y and dy.
template <typename T>
void lp_backward_planes(const Plan& plan, const T* x, const T* y, const T* dy, double scale, T* dx,
                        std::int64_t begin, std::int64_t end);

/// float32 kernels for AVX2 + FMA and for AVX-512 (F, BW, DQ, VL); null when
/// the library was built for another architecture.
const KernelTable<float>* avx2_kernels();
const KernelTable<float>* avx512_kernels();

}  // namespace nodeflow::fast
