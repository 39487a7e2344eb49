// The fast pooling kernels compiled for AVX-512 (F, BW, DQ, VL), float32.
// Every header from outside the kernels comes before the target switch, so
// only the kernels and their lane backend use AVX-512 instructions.
#include "nodes/pooling/fast/kernels/dependencies.hpp"
#include "nodes/pooling/fast/pool_fast_table.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl")
// GCC 12's AVX-512 headers start some intrinsics from a self-initialised
// variable and warn about it once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "nodes/pooling/fast/pool_fast_simd_avx512.hpp"
#include "nodes/pooling/fast/pool_fast_kernels.hpp"

// Instantiated here, under the target switch.
template struct nodeflow::fast::PoolKernels<nodeflow::fast::avx512::Lanes>;

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

// Outside the target switch: taking the addresses runs on any CPU.
const nodeflow::fast::KernelTable<float>& nodeflow::fast::avx512_kernels() {
  static constexpr auto table = kernel_table<PoolKernels<avx512::Lanes>>();
  return table;
}

#endif  // __x86_64__
