#pragma once
// PoolKernels<B>: the fast pooling kernels, written once over a lane backend
// B (pool_fast_simd.hpp: one-lane portable code, AVX2 or AVX-512). The
// members are declared here, piece by piece, with the small helpers that
// every piece uses; each piece's file defines its members
// (pool_fast_kernels.hpp includes them all).
//
// Every function is a member of PoolKernels<B>, so each backend's kernels are
// symbols of their own: the AVX-512 ones, compiled under AVX-512 target
// options, can never be what the linker picks for a call made on a CPU
// without AVX-512. Whatever else the pieces use comes from dependencies.hpp,
// which each instruction-set file includes before its target switch.
#include "nodes/pooling/fast/kernels/dependencies.hpp"

namespace nodeflow::fast {

/// What a sum adds per element: x, |x|, x^2 or |x|^p (LpPool).
enum class SumTerm { Identity, Abs, Square, Pow };

template <class B>
struct PoolKernels {
  static_assert(LaneBackend<B>);

  using T = typename B::T;
  using C = typename B::C;
  using V = typename B::V;
  using M = typename B::M;
  using I = typename B::I;
  static constexpr std::int64_t N = B::N;

  static std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

  /// B::beats for one value (NaN never equals itself).
  static bool scalar_beats(C candidate, C best) {
    if (best != best) return false;
    return candidate != candidate || candidate > best;
  }

  template <SumTerm tr>
  static V transform(V v, std::int64_t p) {
    if constexpr (tr == SumTerm::Identity) {
      return v;
    } else if constexpr (tr == SumTerm::Abs) {
      return B::abs(v);
    } else if constexpr (tr == SumTerm::Square) {
      return B::mul(v, v);
    } else {
      return B::pow(B::abs(v), p);
    }
  }

  /// Storage for vector-typed elements: under a target pragma, GCC 12's
  /// std::allocator hands out 16-byte alignment for 32-byte __m256 members.
  /// The 64-byte boundary is taken inside a plain malloc block (the block's
  /// address is kept just before it): glibc's aligned allocation bypasses its
  /// per-thread cache and leaves free fragments around each block, and these
  /// scratch vectors are made on every call, so in a graph holding tens of
  /// thousands of live tensors that cost grew with the graph.
  template <typename U>
  struct Aligned {
    using value_type = U;
    Aligned() = default;
    template <typename W>
    explicit Aligned(const Aligned<W>&) {}
    U* allocate(std::size_t n) {
      if (n > (std::numeric_limits<std::size_t>::max() - 64) / sizeof(U))
        throw std::bad_array_new_length();
      void* block = std::malloc(n * sizeof(U) + 64);
      if (!block) throw std::bad_alloc();
      // malloc's 16-byte alignment leaves 16 to 64 bytes before the boundary.
      const auto at = (reinterpret_cast<std::uintptr_t>(block) + 64) & ~std::uintptr_t(63);
      reinterpret_cast<void**>(at)[-1] = block;
      return reinterpret_cast<U*>(at);
    }
    void deallocate(U* p, std::size_t) { std::free(reinterpret_cast<void**>(p)[-1]); }
    bool operator==(const Aligned&) const { return true; }
  };

  /// A lane index vector or a mask as a plain element: std::vector<bool> is
  /// no container of bools, and vector types lose their attributes as
  /// template arguments.
  struct IBox {
    I v;
  };

  struct MBox {
    M v;
  };

  /// Most load masks a row reader or spreader keeps ([vector][tap]): past
  /// this (huge kernels over long rows: 20,000 taps by 1,250 vectors took
  /// 2 GB of AVX2 masks) they take the general paths, whose memory grows
  /// with the row alone.
  static constexpr std::int64_t kMaxRowMasks = std::int64_t{1} << 16;

  /// The lowest value of C: what the padding holds for MaxPool.
  static C lowest() {
    if constexpr (std::is_integral_v<C>)
      return std::numeric_limits<C>::lowest();
    else
      return -std::numeric_limits<C>::infinity();
  }

  /// Calls f(std::integral_constant<int, K>) with K = n when n is one of Ks
  /// (the loops over n unroll), else with K = 0 (a loop over n).
  template <int... Ks, typename F>
  static void with_count(std::int64_t n, F&& f) {
    const bool fixed = ((n == Ks && (f(std::integral_constant<int, Ks>{}), true)) || ...);
    if (!fixed) f(std::integral_constant<int, 0>{});
  }

  /// with_count for a window's taps: 2 or 3 unroll.
  template <typename F>
  static void with_taps(std::int64_t n, F&& f) {
    with_count<2, 3>(n, f);
  }

  /// f(i, m) for the vectors i = 0, N, 2N ... of n elements, m the lanes
  /// inside n: a constant for the full vectors, whose loop computes no mask.
  template <typename F>
  static void for_vectors(std::int64_t n, F&& f) {
    const M all = B::first_n(N);
    std::int64_t i = 0;
    for (; i + N <= n; i += N) f(i, all);
    if (i < n) f(i, B::first_n(n - i));
  }

  /// for_vectors for a row that may be short: up to 4 vectors (rows 28, 55
  /// or 56 wide, say) are straight code, which measured faster than a loop of
  /// a few iterations per row in the fused AveragePool backward (P6: 0.93x)
  /// but slower in outer_max (P1, P7 forward: up to 1.2x), so it is used
  /// only where measured.
  template <typename F>
  static void for_row_vectors(std::int64_t n, F&& f) {
    const M all = B::first_n(N), tail = B::first_n(n - (n - 1) / N * N);
    switch ((n + N - 1) / N) {
      case 1: f(0, tail); return;
      case 2: f(0, all); f(N, tail); return;
      case 3: f(0, all); f(N, all); f(2 * N, tail); return;
      case 4: f(0, all); f(N, all); f(2 * N, all); f(3 * N, tail); return;
      default: for_vectors(n, f);
    }
  }

  /// A row's tap offsets (RowInput::tap_pos) as locals when there are K > 0:
  /// the masked stores are assumed to alias anything, so offsets read
  /// through the RowInput would be loaded again for every vector.
  template <int K>
  struct TapOffsets {
    std::int64_t local[K > 0 ? K : 1];
    const std::int64_t* all;  ///< K == 0: read through
    explicit TapOffsets(const std::vector<std::int64_t>& tap_pos) : all(tap_pos.data()) {
      if constexpr (K > 0)
        for (int k = 0; k < K; ++k) local[k] = tap_pos[at(k)];
    }
    std::int64_t operator[](std::int64_t k) const {
      if constexpr (K > 0) return local[k];
      return all[k];
    }
  };

  /// Input position of output 0's first tap along a (tap t_first).
  static std::int64_t first_tap(const AxisPlan& a) { return a.t_first * a.dilation - a.pad_begin; }

  /// Rows the windows [ob, oe) of a read, from position ob*s + first_tap(a).
  static std::int64_t span_rows(const AxisPlan& a, std::int64_t ob, std::int64_t oe) {
    return (oe - 1 - ob) * a.stride + (a.t_end - a.t_first - 1) * a.dilation + 1;
  }

  /// Asks for n elements of a later item ahead of time (about one item
  /// ahead), for reading or (kWrite) for writing: the hardware prefetchers
  /// stop at page boundaries and an item spans many pages, and measured on
  /// the benchmark machine this halves the time of the backward passes.
  template <bool kWrite = false, typename U>
  static void prefetch_row(const U* row, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += 64 / static_cast<std::int64_t>(sizeof(U)))
      __builtin_prefetch(row + i, kWrite ? 1 : 0, 3);
  }

  /// Whole-plane loops: how many planes ahead to prefetch (about 2 KiB).
  static std::int64_t planes_ahead(const Plan& plan) {
    return std::max<std::int64_t>(1, 2048 / (plan.in_plane * static_cast<std::int64_t>(sizeof(T))));
  }

  static std::int64_t in_product(const Plan& plan, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t k = from; k < to; ++k) n *= plan.axes[k].in;
    return n;
  }

  /// Most input rows of one fused window.
  static constexpr std::int64_t kFusedRows = 16;

  /// dx[0..n) = dx + scale * g (lanes past n untouched).
  static void update(T* dx, V g, V scale, std::int64_t n) {
    const M m = B::first_n(n);
    B::store(dx, B::add(B::load(dx, m), B::mul(scale, g)), m);
  }

  static C first_lane(V v) {
    C lanes[N];
    B::store(lanes, v, B::first_n(N));
    return lanes[0];
  }

  /// Planes whose scatters MaxPool's backward interleaves: where windows
  /// overlap, consecutive outputs often share their argmax, and each such
  /// add waits for the one before it; another plane's adds fill that wait.
  static constexpr std::int64_t kScatterPlanes = 2;

  // ---- Forward, last axis: how a row is read (kernels/row_input.hpp)
  static std::vector<MBox, Aligned<MBox>> run_masks(std::int64_t in, std::int64_t vectors,
                                                    const std::vector<std::int64_t>& shift);
  struct RowInput;

  // ---- Forward, last axis: a row into its window sums or maxima (kernels/row_reduce.hpp)
  template <int K, SumTerm tr>
  static void row_sum(RowInput& row, const T* x, C* out, std::int64_t p, std::int64_t rows = 1,
                      std::int64_t ahead = 0);
  static void prefetch_pair(const T* later, std::int64_t v, std::int64_t ahead);
  template <int K, bool kIdx>
  static M row_max(RowInput& row, const T* x, std::int64_t row_base, C* out, std::int32_t* out_idx,
                   std::int64_t rows = 1, std::int64_t ahead = 0);
  struct RowTap;
  struct RowVector;
  struct RowProgram;
  template <bool kIdx>
  static void row_max_exact(const RowProgram& prog, const T* x, std::int64_t row_base, C* out,
                            std::int32_t* out_idx);

  // ---- Forward, the other axes, from scratch rows (kernels/outer_axes.hpp)
  struct Stages;
  static std::int64_t row_in_buffer(const Stages& st, const Plan& plan, std::size_t k,
                                    std::int64_t part, std::int64_t first0, std::int64_t v_lo);
  struct SumToBuffer;
  static bool divisors_per_row(const Plan& plan);
  template <SumTerm tr, bool kPerRow>
  struct SumToOutput;
  static M sum_out_of_range(V r, V floor);
  static bool scalar_out_of_range(C r, const Plan& plan);
  template <int K, class Sink>
  static void outer_sum(const AxisPlan& a, const C* src, std::int64_t f, std::int64_t ob,
                        std::int64_t oe, std::int64_t inner, std::int64_t plane_offset, Sink& sink);
  static void store_argmax(const Argmax& argmax, std::int64_t o, I idx, std::int64_t base, M m);
  static void prefetch_argmax(const Argmax& argmax, std::int64_t o);
  template <int K, bool kIdx, bool kFinal, bool kExact>
  static void outer_max(const AxisPlan& a, const C* src, const std::int32_t* src_idx,
                        std::int64_t f, std::int64_t ob, std::int64_t oe, std::int64_t inner,
                        C* out, std::int32_t* out_idx, T* y, Argmax argmax, std::int64_t plane_base,
                        std::int64_t out_ahead = 0);
  static std::vector<C, Aligned<C>> divisor_table(const Plan& plan);
  static void divisor_row(const Plan& plan, std::int64_t o, C* row);

  // ---- Forward, fused: disjoint 2x2(x2) windows straight from x (kernels/forward_fused.hpp)
  static bool fused_ok(const Plan& plan);
  static std::int64_t fused_rows(const Plan& plan, std::int64_t o0, std::int64_t o1,
                                 std::int32_t* rows);
  struct FusedWindows;
  template <bool kMax, bool kIdx, SumTerm tr, bool kClipped>
  static bool fused_item(const Plan& plan, const FusedWindows& windows, const RowInput& row,
                         const T* x, T* y, Argmax argmax, const C* divisors, std::int64_t item);

  // ---- Forward, one window over the whole plane (kernels/forward_whole_plane.hpp)
  template <SumTerm tr>
  static C finish_sum(const Plan& plan, C sum, C divisor);
  template <SumTerm tr>
  static bool whole_plane_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                              std::int64_t end);
  template <SumTerm tr>
  static bool small_plane_sums(const Plan& plan, const T* x, T* y, C divisor, std::int64_t begin,
                               std::int64_t end, std::int64_t vectors);
  template <bool kIdx>
  static void whole_plane_max(const Plan& plan, const T* x, T* y, Argmax argmax, std::int64_t begin,
                              std::int64_t end);

  // ---- Forward over work items, and the entry point (kernels/forward.hpp)
  struct Item;
  static void neutral_halo(Stages& st, const Item& it, C neutral);
  template <SumTerm tr, bool kPerRow>
  static bool forward_sum(const Plan& plan, const T* x, T* y, std::int64_t begin, std::int64_t end);
  static std::int64_t plane_offset(const Plan& plan, const Item& it);
  template <bool kIdx, bool kExact>
  static bool forward_max_item(const Plan& plan, const T* x, T* y, Argmax argmax, std::int64_t item,
                               RowInput& row, const RowProgram* program, Stages& st);
  template <bool kIdx>
  static void forward_max(const Plan& plan, const T* x, T* y, Argmax argmax, std::int64_t begin,
                          std::int64_t end);
  static bool forward(const Plan& plan, const T* x, T* y, Argmax argmax, std::int64_t begin,
                      std::int64_t end);
  template <SumTerm tr>
  static bool sum_forward(const Plan& plan, const T* x, T* y, std::int64_t begin, std::int64_t end);

  // ---- Backward: spreading window gradients back over inputs (kernels/backward_spread.hpp)
  struct RowSpread;
  template <int K>
  static void spread_update(const RowSpread& rs, const AxisPlan& a, const C* g, T* dx,
                            std::int64_t rows, V scale, std::int64_t ahead = 0);
  static void spread_rows(const AxisPlan& a, const C* in, std::int64_t in_rows,
                          std::int64_t o_offset, std::int64_t parts, std::int64_t ib,
                          std::int64_t ie, std::int64_t inner, C* out);
  static bool fused_backward_ok(const Plan& plan);
  static std::int64_t window_of(const AxisPlan& a, std::int64_t i);
  struct FusedInputRows;

  // ---- Backward, AveragePool (kernels/backward_average.hpp)
  static void fused_average_backward(const Plan& plan, const C* divisors, const T* dy, V scale,
                                     T* dx, std::int64_t begin, std::int64_t end,
                                     std::vector<GradientRedo>& redo);
  static bool terms_fit(const T* v, std::int64_t n, double limit);
  static void average_backward(const Plan& plan, const T* dy, double scale, T* dx,
                               std::int64_t begin, std::int64_t end,
                               std::vector<GradientRedo>& redo);

  // ---- Backward, MaxPool (kernels/backward_max.hpp)
  template <bool kFlat, class A>
  static void check_argmax(const Plan& plan, const A* am, std::int64_t plane);
  static void max_backward(const Plan& plan, SavedArgmax argmax, const T* dy, double scale, T* dx,
                           std::int64_t begin, std::int64_t end);
  template <class A>
  static void max_backward_planes(const Plan& plan, const A* argmax, const T* dy, double scale,
                                  T* dx, std::int64_t begin, std::int64_t end);
  static void fused_max_backward(const Plan& plan, const std::int32_t* argmax, const T* dy, V scale,
                                 T* dx, std::int64_t begin, std::int64_t end);
  template <std::int64_t K, class A>
  static void scatter(const Plan& plan, const A* const* am, const std::int64_t* origin,
                      const T* const* dyp, C* const* sums, bool more);
};

}  // namespace nodeflow::fast
