#pragma once
// What the float32 vector backends of the fast pooling kernels
// (pool_fast_simd_avx2.hpp, pool_fast_simd_avx512.hpp) share. Each backend
// gives PoolKernels T, the element type in memory, C, the type the kernels
// compute in, and kHasPow, whether it has pow (LpPool with p > 2 runs on the
// portable backend); then V, M and I: a vector of N lanes of C, a lane mask
// and a vector of N int32 lane indexes.

namespace nodeflow::fast {

struct Float32Lanes {
  using T = float;
  using C = float;
  static constexpr bool kHasPow = false;
};

}  // namespace nodeflow::fast
