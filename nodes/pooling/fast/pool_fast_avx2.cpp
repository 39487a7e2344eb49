// The fast pooling kernels compiled for AVX2, float32.
// Every standard and project header comes before the target switch, so only
// this file's own functions (in namespace avx2) use AVX2 instructions.
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
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#include "nodes/pooling/fast/pool_fast_simd_avx2.hpp"

namespace nodeflow::fast::avx2 {
#include "nodes/pooling/fast/pool_fast_kernels.hpp"
// Instantiated here, under the target switch.
template struct PoolKernels<Lanes>;
}  // namespace nodeflow::fast::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// Outside the target switch: taking the addresses runs on any CPU.
namespace nodeflow::fast {

const KernelTable<float>* avx2_kernels() {
  using K = avx2::PoolKernels<avx2::Lanes>;
  static const KernelTable<float> table{&K::forward, &K::average_backward, &K::max_backward};
  return &table;
}

}  // namespace nodeflow::fast

#else

namespace nodeflow::fast {
const KernelTable<float>* avx2_kernels() { return nullptr; }
}  // namespace nodeflow::fast

#endif
