// The fast pooling kernels compiled for AVX-512 (F, BW, DQ, VL), float32.
// Every standard and project header comes before the target switch, so only
// this file's own functions (in namespace avx512) use AVX-512 instructions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast_plan.hpp"
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

namespace nodeflow::fast::avx512 {
#include "nodes/pooling/fast/pool_fast_kernels.hpp"
// Instantiated here, under the target switch.
template struct PoolKernels<Lanes>;
}  // namespace nodeflow::fast::avx512

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

// Outside the target switch: taking the addresses runs on any CPU.
namespace nodeflow::fast {

const KernelTable<float>* avx512_kernels() {
  using K = avx512::PoolKernels<avx512::Lanes>;
  static const KernelTable<float> table{&K::forward, &K::average_backward, &K::max_backward};
  return &table;
}

}  // namespace nodeflow::fast

#else

namespace nodeflow::fast {
const KernelTable<float>* avx512_kernels() { return nullptr; }
}  // namespace nodeflow::fast

#endif
