#pragma once
// What the fast pooling kernels, PoolKernels<B> (kernels/pool_kernels.hpp),
// use of their lane backend B, stated once for the three backends
// (pool_fast_simd_portable.hpp: one lane, any dtype; pool_fast_simd_avx2.hpp
// and pool_fast_simd_avx512.hpp: float32 vectors).
//
// Types: T, the element type in memory; C, the type the kernels compute in
// (T for MaxPool, accumulator_t<T> for sums); V, a vector of N lanes of C; M,
// a mask of N lanes; I, N int32 lane indexes; kHasPow, whether pow and root
// exist (LpPool with p > 2 runs on the portable backend). A masked load or
// store touches only the lanes in its mask, so its address may lie outside
// the tensor where the mask leaves nothing to read.
#include <cstdint>

namespace nodeflow::fast {

template <class B>
concept LaneBackend =
    requires(typename B::V v, typename B::V& out, typename B::M m, typename B::I i,
             typename B::C c, const typename B::T* x, typename B::T* y, const std::int32_t* xi,
             std::int32_t* yi, std::int64_t* flat, std::int64_t n, unsigned bits) {
      // Masks.
      B::none();
      B::first_n(n);       // lanes [0, n)
      B::lanes(n, n);      // lanes [lo, hi)
      B::mand(m, m);
      B::mor(m, m);
      B::mnot(m);
      B::any(m);
      B::from_bits(bits);  // lane j set when bit j of `bits` is
      // Loads (0 in the lanes outside the mask) and stores.
      B::zero();
      B::broadcast(c);
      B::load(x);
      B::load(x, m);
      B::store(y, v);
      B::store(y, v, m);
      B::load_at(x, n, m);           // lane j <- x[off + j]
      B::load_strided(x, n, n, m);   // lane j <- x[off + j * stride]
      B::load_or(x, m, v);           // lane j <- p[j] in m, fill[j] in the others
      // Lane moves.
      B::shift_in(v, v);                // [prev[N-1], cur[0], ..., cur[N-2]]
      B::deinterleave(v, v, out, out);  // even and odd lanes of the 2N values a, b (a first)
      // Arithmetic.
      B::add(v, v);
      B::mul(v, v);
      B::div(v, v);
      B::abs(v);
      B::sqrt(v);
      B::reduce_add(v);  // the sum of the lanes, as a C
      // Comparisons. beats is MaxPool's order: candidate replaces best when
      // strictly greater, or NaN while best is not; greater is the ordered
      // candidate > best (false when either is NaN), max(candidate, best) is
      // candidate where greater, else best; the `where` forms clear the lanes
      // outside their first argument.
      B::beats(v, v);
      B::greater(v, v);
      B::greater(m, v, v);
      B::max(v, v);
      B::equal(v, v);
      B::equal(m, v, v);
      B::unordered(v);     // lanes holding NaN
      B::unordered(v, v);  // lanes where a or b is NaN
      B::select(m, v, v);  // a in m, b in the others
      // Lane indexes.
      B::iota(n, n);  // lane j: base + j * step
      B::add_i(i, n);
      B::select_i(m, i, i);
      B::equal_i(m, i, i);  // lanes in `where` with a[j] == b[j]
      B::load_i(xi, m);
      B::store_i(yi, i, m);
      B::store_index64(flat, i, n, m);  // p[j] = base + idx[j] as int64 for the lanes in m
    } &&
    (B::N == 1 ||
     requires(typename B::V v, typename B::V& out, typename B::M m, const typename B::T* x) {
       B::load_even(x, m, m);          // lane j <- p[2j]: p[0, N) read under m0, p[N, 2N) under m1
       B::interleave(v, v, out, out);  // (even, odd) interleaved: lo the first N, hi the rest
     }) &&
    (!B::kHasPow || requires(typename B::V v, std::int64_t n) {
      B::pow(v, n);   // v^e
      B::root(v, n);  // v^(1/p)
    });

/// What the float32 vector backends share.
struct Float32Lanes {
  using T = float;
  using C = float;
  static constexpr bool kHasPow = false;
};

}  // namespace nodeflow::fast
