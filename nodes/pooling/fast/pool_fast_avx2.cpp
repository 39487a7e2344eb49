// The fast pooling kernels compiled for AVX2, float32. Every header from
// outside the kernels comes before the target switch, so only the kernels
// and their lane backend use AVX2 instructions.
#include "nodes/pooling/fast/kernels/dependencies.hpp"
#include "nodes/pooling/fast/pool_fast_table.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#include "nodes/pooling/fast/pool_fast_simd_avx2.hpp"
#include "nodes/pooling/fast/pool_fast_kernels.hpp"

// Instantiated here, under the target switch.
template struct nodeflow::fast::PoolKernels<nodeflow::fast::avx2::Lanes>;

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// Outside the target switch: taking the addresses runs on any CPU.
const nodeflow::fast::KernelTable<float>& nodeflow::fast::avx2_kernels() {
  static constexpr auto table = kernel_table<PoolKernels<avx2::Lanes>>();
  return table;
}

#endif  // __x86_64__
