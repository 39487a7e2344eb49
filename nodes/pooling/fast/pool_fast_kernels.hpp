#pragma once
// The fast pooling kernels, written once over a lane backend B (one-lane
// portable code, AVX2 or AVX-512; see pool_fast_simd_*.hpp). Each
// pool_fast_<isa>.cpp includes this file inside its own namespace, under its
// own target options, so every instruction set gets its own copy and nothing
// compiled for AVX-512 can be picked by the linker for another CPU.
//
// Forward: per work item (one N x C plane, one chunk of outputs along axis 0)
// the last axis is reduced straight from the input, then axes n-2 .. 1 from
// scratch rows, and axis 0 into the output. MaxPool keeps an int32 plane
// offset beside each value when the argmax is wanted.
// Where the outer axes' windows are disjoint and the last axis is read in
// stride-2 pairs (2x2 and 2x2x2 windows with stride 2), a fused forward
// reduces each window's input rows straight from x instead (fused_item).
// Backward: MaxPool scatters dY into a per-plane sum that is added to dX in
// one pass (the reference's order, so the result is bitwise the same), or on
// the fused geometry updates each dX row from its window row's dY and argmax;
// AveragePool spreads dY / divisor back from axis 0 to the last axis, whose
// spread is fused with the update of dX, or on the fused geometry adds each
// window's shares straight to its dX rows.
//
// Requires before inclusion: <algorithm>, <cstdint>, <cmath>, <limits>,
// <memory>, <new>, <string>, <type_traits>, <vector>, core/errors.hpp and nodes/pooling/fast/pool_fast_plan.hpp.

template <class B>
struct PoolKernels {
  using T = typename B::T;
  using C = typename B::C;
  using V = typename B::V;
  using M = typename B::M;
  using I = typename B::I;
  static constexpr std::int64_t N = B::N;

  /// What a sum adds per element: x, |x|, x^2 or |x|^p (LpPool).
  enum class Tr { Identity, Abs, Square, Pow };

  static std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

  /// B::beats for one value (NaN never equals itself).
  static bool scalar_beats(C candidate, C best) {
    if (best != best) return false;
    return candidate != candidate || candidate > best;
  }

  template <Tr tr>
  static V transform(V v, std::int64_t p) {
    if constexpr (tr == Tr::Identity) {
      return v;
    } else if constexpr (tr == Tr::Abs) {
      return B::abs(v);
    } else if constexpr (tr == Tr::Square) {
      return B::mul(v, v);
    } else {
      return B::pow(B::abs(v), p);
    }
  }

  // ---- Forward, last axis: one input row into one row of window results.

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

  /// Calls f(std::integral_constant<int, K>) with K the tap count when it is 2
  /// or 3 (the loops over taps unroll), else with K = 0 (a loop over n taps).
  template <typename F>
  static void with_taps(std::int64_t n, F&& f) {
    if (n == 2)
      f(std::integral_constant<int, 2>{});
    else if (n == 3)
      f(std::integral_constant<int, 3>{});
    else
      f(std::integral_constant<int, 0>{});
  }

  /// Masks [vector][k] over a run of rows of `in` elements: lane l of vector
  /// v is column (v*N + l) % in of its row, set when column + shift[k] is
  /// inside the row. Clearing each row's edge columns costs rows x taps x
  /// |shift|, not a division per lane, vector and tap (which was 9% of P7's
  /// forward).
  static std::vector<MBox, Aligned<MBox>> run_masks(std::int64_t in, std::int64_t vectors,
                                                    const std::vector<std::int64_t>& shift) {
    const std::int64_t taps = static_cast<std::int64_t>(shift.size()), lanes = vectors * N;
    std::vector<unsigned> bits(at(vectors * taps), (1u << N) - 1u);
    for (std::int64_t k = 0; k < taps; ++k) {
      const std::int64_t s = shift[at(k)];
      // The columns [lo, hi) that land outside the row.
      const std::int64_t lo = s < 0 ? 0 : in - std::min(s, in), hi = s < 0 ? std::min(-s, in) : in;
      for (std::int64_t start = 0; start < lanes; start += in)
        for (std::int64_t q = start + lo; q < std::min(start + hi, lanes); ++q)
          bits[at(q / N * taps + k)] &= ~(1u << (q % N));
    }
    std::vector<MBox, Aligned<MBox>> masks;
    masks.reserve(bits.size());
    for (const unsigned b : bits) masks.push_back({B::from_bits(b)});
    return masks;
  }

  /// How the last axis reads an input row:
  ///  - Direct1 (stride 1): each tap is one load at its offset, masked at the
  ///    borders to the padding's neutral value (0 for sums, lowest() for max);
  ///  - Direct2 (stride 2, dilation 1, 2 or 3 taps): the row is read once, in
  ///    pairs of vectors split into even and odd positions; a leading third
  ///    tap is the odd positions one lane back, carried from the vector before;
  ///  - Phases (any other geometry, and one-lane code): the row is first
  ///    copied into its stride phases (q, q+s, q+2s ...) surrounded by the
  ///    neutral value, after which every tap is one plain load.
  /// All masks and offsets are the same for every row, so they are worked out
  /// once per call.
  enum class RowRead { Direct1, Direct2, Phases };

  struct RowInput {
    RowRead kind = RowRead::Phases;
    std::int64_t in, out, stride, taps, vectors;
    /// Direct1 with out == in: consecutive rows make one flat run of up to
    /// run_rows rows (no per-row loop); the masks cover such a run.
    std::int64_t run_rows = 1;
    std::int64_t base = 0;              ///< Direct2: position of output 0's even element
    std::int64_t lead = 0, span = 0;    ///< Phases: buffer layout
    C neutral;
    std::vector<std::int64_t> length;   ///< Phases: input positions per phase
    std::vector<std::int64_t> tap_at;   ///< Phases: buffer offset of output 0's tap
    std::vector<std::int64_t> tap_pos;  ///< input position of output 0's tap
    std::vector<IBox, Aligned<IBox>> tap_idx;  ///< lane j: j*s + tap_pos
    /// Direct1: [vector][tap] load masks; Direct2: [vector + 1][2] (from vector
    /// -1, which supplies the carried odd lanes); Phases: the copy's masks.
    std::vector<MBox, Aligned<MBox>> masks;
    std::vector<C, Aligned<C>> buf;

    /// `rows`: how many consecutive rows a caller may pass at once.
    RowInput(const AxisPlan& a, C neutral_value, std::int64_t rows = 1)
        : in(a.in), out(a.out), stride(a.stride), taps(a.t_end - a.t_first),
          vectors((a.out + N - 1) / N), neutral(neutral_value) {
      for (std::int64_t t = a.t_first; t < a.t_end; ++t) {
        tap_pos.push_back(t * a.dilation - a.pad_begin);
        tap_idx.push_back({B::iota(tap_pos.back(), a.stride)});
      }
      const std::int64_t run_count = (rows * in + N - 1) / N * taps;
      const std::int64_t row_masks = vectors * taps;
      if (N > 1 && a.stride == 1 && a.out == a.in && rows > 1 && run_count <= kMaxRowMasks) {
        kind = RowRead::Direct1;
        run_rows = rows;
        vectors = (rows * in + N - 1) / N;
        masks = run_masks(in, vectors, tap_pos);
      } else if (N > 1 && a.stride == 1 && row_masks <= kMaxRowMasks) {
        kind = RowRead::Direct1;
        for (std::int64_t v = 0; v < vectors; ++v)
          for (std::int64_t u : tap_pos) masks.push_back({B::lanes(-(v * N + u), in - (v * N + u))});
      } else if (N > 1 && a.stride == 2 && a.dilation == 1 && (taps == 2 || taps == 3)) {
        kind = RowRead::Direct2;
        base = tap_pos[0] + (taps == 3 ? 1 : 0);
        for (std::int64_t v = -1; v < vectors; ++v) {
          const std::int64_t p0 = 2 * v * N + base;
          masks.push_back({B::lanes(-p0, in - p0)});
          masks.push_back({B::lanes(-p0 - N, in - p0 - N)});
        }
      } else {
        init_phases(a);
      }
    }

    void init_phases(const AxisPlan& a) {
      // Tap t of output j reads position j*s + u, u = s*shift + phase.
      std::vector<std::int64_t> shifts;
      for (std::int64_t u : tap_pos)
        shifts.push_back(floor_div(u, a.stride));
      const auto [low, high] = std::minmax_element(shifts.begin(), shifts.end());
      for (std::int64_t q = 0; q < a.stride; ++q)
        length.push_back(q < a.in ? ceil_div(a.in - q, a.stride) : 0);
      lead = -std::min<std::int64_t>(0, *low);
      // A phase holds what the taps read and the whole copied row: where the
      // pads leave taps that never reach the input (dropped from tap_pos),
      // the taps may read far less of the row than fill() copies.
      span = lead + std::max(vectors * N + std::max<std::int64_t>(0, *high), length[0]) + N;
      for (std::size_t k = 0; k < shifts.size(); ++k)
        tap_at.push_back((tap_pos[k] - shifts[k] * a.stride) * span + lead + shifts[k]);
      buf.assign(at(span * a.stride), neutral);
      if (stride == 1)
        for (std::int64_t m = 0; m < in; m += N) masks.push_back({B::first_n(in - m)});
      if (stride == 2)
        for (std::int64_t m = 0; m < length[0]; m += N) {
          masks.push_back({B::first_n(in - 2 * m)});
          masks.push_back({B::first_n(in - 2 * m - N)});
          masks.push_back({B::first_n(length[0] - m)});
          masks.push_back({B::first_n(length[1] - m)});
        }
    }

    /// Phases: copies one input row in, transformed for sums. Returns the
    /// lanes that held a NaN (kNaN) or lowest() (kLowest).
    template <Tr tr, bool kNaN, bool kLowest>
    M fill(const T* x, std::int64_t p) {
      C* b = buf.data() + lead;
      M flags = B::none();
      auto check = [&](V v) {
        if constexpr (kNaN) flags = B::mor(flags, B::unordered(v));
        if constexpr (kLowest) flags = B::mor(flags, B::equal(v, B::broadcast(lowest())));
      };
      if (N > 1 && stride == 1) {
        const MBox* mk = masks.data();
        for (std::int64_t m = 0; m < in; m += N, ++mk) {
          const V v = B::load(x + m, mk->v);
          check(v);
          B::store(b + m, transform<tr>(v, p), mk->v);
        }
      } else if (N > 1 && stride == 2) {
        const MBox* mk = masks.data();
        for (std::int64_t m = 0; m < length[0]; m += N, mk += 4) {
          const V lo = B::load(x + 2 * m, mk[0].v), hi = B::load(x + 2 * m + N, mk[1].v);
          check(lo);  // masked-off lanes load as 0: never flagged
          check(hi);
          V even, odd;
          B::deinterleave(lo, hi, even, odd);
          B::store(b + m, transform<tr>(even, p), mk[2].v);
          B::store(b + span + m, transform<tr>(odd, p), mk[3].v);
        }
      } else {
        for (std::int64_t q = 0; q < stride; ++q)
          for (std::int64_t m = 0; m < length[at(q)]; ++m) {
            const V v = B::broadcast(static_cast<C>(x[m * stride + q]));
            check(v);
            b[q * span + m] = first_lane(transform<tr>(v, p));
          }
      }
      return flags;
    }

    /// Direct1: the lanes of `count` elements that hold a NaN (kNaN) or
    /// lowest() (kLowest).
    template <bool kNaN, bool kLowest>
    M check_row(const T* x, std::int64_t count) const {
      M flags = B::none();
      for (std::int64_t m = 0; m < count; m += 2 * N) {
        const M ma = B::first_n(count - m), mb = B::first_n(count - m - N);
        const V a = B::load(x + m, ma), b = B::load(x + m + N, mb);
        if constexpr (kNaN) flags = B::mor(flags, B::unordered(a, b));
        if constexpr (kLowest) {
          const V floor = B::broadcast(lowest());
          flags = B::mor(flags, B::mor(B::equal(ma, a, floor), B::equal(mb, b, floor)));
        }
      }
      return flags;
    }

    /// Direct2: the even and odd positions of vector v's pair (v >= -1).
    template <bool kNaN, bool kLowest>
    void pair(const T* x, std::int64_t v, V fill, V& even, V& odd, M& flags) const {
      const MBox* mk = masks.data() + 2 * (v + 1);
      const T* p = x + 2 * v * N + base;
      const V lo = B::load_or(p, mk[0].v, fill), hi = B::load_or(p + N, mk[1].v, fill);
      if constexpr (kNaN) flags = B::mor(flags, B::unordered(lo, hi));
      if constexpr (kLowest) {
        const V floor = B::broadcast(lowest());
        flags = B::mor(flags, B::mor(B::equal(mk[0].v, lo, floor), B::equal(mk[1].v, hi, floor)));
      }
      B::deinterleave(lo, hi, even, odd);
    }
  };

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

  /// Window sums of `rows` consecutive input rows (transformed for LpPool)
  /// into `out` (rows > 1 only for a Direct1 run, see RowInput::run_rows).
  /// Prefetches x + ahead (a later item's row) as it goes (ahead 0: none):
  /// spread over the loop, the prefetches overlap the work instead of
  /// queueing for the line fill buffers in one burst.
  template <int K, Tr tr>
  static void row_sum(RowInput& row, const T* x, C* out, std::int64_t p, std::int64_t rows = 1,
                      std::int64_t ahead = 0) {
    const std::int64_t taps = K > 0 ? K : row.taps;
    const std::int64_t count = rows * row.out;
    const std::int64_t vectors = (count + N - 1) / N;
    const M tail = B::first_n(count % N == 0 ? N : count % N);
    auto put = [&](std::int64_t v, V acc) {
      B::store(out + v * N, acc, v + 1 < vectors ? B::first_n(N) : tail);
    };
    if (row.kind == RowRead::Direct1) {
      const MBox* mk = row.masks.data();
      const TapOffsets<K> u(row.tap_pos);
      for (std::int64_t v = 0; v < vectors; ++v, mk += taps) {
        if (ahead) __builtin_prefetch(x + v * N + ahead, 0, 3);
        // A run's masks cover whole vectors: the last one stops at `count`.
        const M lanes = v + 1 < vectors ? B::first_n(N) : tail;
        V acc = transform<tr>(B::load(x + v * N + u[0], B::mand(mk[0].v, lanes)), p);
        for (std::int64_t k = 1; k < taps; ++k)
          acc = B::add(acc, transform<tr>(B::load(x + v * N + u[k], B::mand(mk[k].v, lanes)), p));
        B::store(out + v * N, acc, lanes);
      }
    } else if (row.kind == RowRead::Direct2) {
      if constexpr (N > 1) {
        M unused = B::none();
        V even, odd, odd_before = B::zero();
        if (taps == 3) {
          row.template pair<false, false>(x, -1, B::zero(), even, odd_before, unused);
          odd_before = transform<tr>(odd_before, p);
        }
        for (std::int64_t v = 0; v < row.vectors; ++v) {
          prefetch_pair(x + ahead, v, ahead);
          row.template pair<false, false>(x, v, B::zero(), even, odd, unused);
          even = transform<tr>(even, p);
          odd = transform<tr>(odd, p);
          V acc = B::add(even, odd);
          if (taps == 3) acc = B::add(B::shift_in(odd, odd_before), acc);
          odd_before = odd;
          put(v, acc);
        }
      }
    } else if constexpr (N == 1 && std::is_same_v<T, C> && tr != Tr::Pow) {
      // One lane without conversions or pow: each tap read in place (0
      // outside the row, as the phases hold), not through a copy of the row
      // into its phases (float64 AveragePool k2 s2: 1.4x the reference
      // kernels' time with the copy). Where each element costs a conversion
      // (float16, bfloat16) or a pow, the copy does that once per element.
      if (ahead) prefetch_row(x + ahead, row.in);
      const TapOffsets<K> u(row.tap_pos);
      for (std::int64_t o = 0; o < row.out; ++o) {
        auto tap = [&](std::int64_t k) {
          const std::int64_t at = o * row.stride + u[k];
          return at >= 0 && at < row.in ? transform<tr>(B::load(x + at), p) : C(0);
        };
        V acc = tap(0);
        for (std::int64_t k = 1; k < taps; ++k) acc = B::add(acc, tap(k));
        put(o, acc);
      }
    } else {
      if (ahead) prefetch_row(x + ahead, row.in);
      row.template fill<tr, false, false>(x, p);
      const C* b = row.buf.data();
      const std::int64_t* tap = row.tap_at.data();
      for (std::int64_t v = 0; v < row.vectors; ++v) {
        V acc = B::load(b + tap[0] + v * N);
        for (std::int64_t k = 1; k < taps; ++k) acc = B::add(acc, B::load(b + tap[k] + v * N));
        put(v, acc);
      }
    }
  }

  /// Direct2: the lines of pair v of a later row at `later` (ahead 0: none).
  static void prefetch_pair(const T* later, std::int64_t v, std::int64_t ahead) {
    if (!ahead) return;
    __builtin_prefetch(later + 2 * v * N, 0, 3);
    __builtin_prefetch(later + 2 * v * N + N, 0, 3);
  }

  /// Window maxima of one input row (and with kIdx their plane offsets;
  /// `row_base` is the row's offset in its plane). Takes a tap when it is
  /// greater (ordered): MaxPool's order when the row holds no NaN (a later
  /// NaN would have to win) and, with the argmax, no lowest() (the index must
  /// be a real element's, not the padding's). Returns the lanes that saw
  /// either; the caller redoes such rows in the exact order.
  template <int K, bool kIdx>
  static M row_max(RowInput& row, const T* x, std::int64_t row_base, C* out,
                   std::int32_t* out_idx, std::int64_t rows = 1, std::int64_t ahead = 0) {
    const std::int64_t taps = K > 0 ? K : row.taps;
    // The outputs of one run (Direct1) or of one row (the others, which take
    // their `rows` one after another).
    const std::int64_t count = (row.kind == RowRead::Direct1 ? rows : 1) * row.out;
    const std::int64_t vectors = (count + N - 1) / N;
    const M tail = B::first_n(count % N == 0 ? N : count % N);
    const IBox* tap_idx = row.tap_idx.data();
    M flags = B::none();
    V best;
    I best_idx{};
    // Tap k of vector v, in row-major tap order.
    auto first = [&](std::int64_t v, V c) {
      best = c;
      if constexpr (kIdx) best_idx = B::add_i(tap_idx[0].v, row_base + v * N * row.stride);
    };
    auto next = [&](std::int64_t v, std::int64_t k, V c) {
      if constexpr (kIdx) {
        const M take = B::greater(c, best);
        best = B::select(take, c, best);
        best_idx =
            B::select_i(take, B::add_i(tap_idx[k].v, row_base + v * N * row.stride), best_idx);
      } else {
        best = B::max(c, best);
      }
    };
    auto put = [&](std::int64_t v) {
      const M m = v + 1 < vectors ? B::first_n(N) : tail;
      B::store(out + v * N, best, m);
      if constexpr (kIdx) B::store_i(out_idx + v * N, best_idx, m);
    };
    const V floor = B::broadcast(row.neutral);
    if (row.kind == RowRead::Direct1) {
      flags = row.template check_row<true, kIdx>(x, rows * row.in);
      const MBox* mk = row.masks.data();
      const TapOffsets<K> u(row.tap_pos);
      for (std::int64_t v = 0; v < vectors; ++v, mk += taps) {
        if (ahead) __builtin_prefetch(x + v * N + ahead, 0, 3);
        // A run's masks cover whole vectors: the last one stops at `count`.
        const M lanes = v + 1 < vectors ? B::first_n(N) : tail;
        first(v, B::load_or(x + v * N + u[0], B::mand(mk[0].v, lanes), floor));
        for (std::int64_t k = 1; k < taps; ++k)
          next(v, k, B::load_or(x + v * N + u[k], B::mand(mk[k].v, lanes), floor));
        put(v);
      }
    } else if (row.kind == RowRead::Direct2) {
      if constexpr (N > 1) {
        // `rows` rows one after another, in x and in out: the setup above
        // is paid once per call, not once per row (rows of 3 or 4 vectors).
        for (std::int64_t r = 0; r < rows; ++r, x += row.in, row_base += row.in, out += row.out) {
          V even, odd, odd_before = floor;
          if (taps == 3) row.template pair<true, kIdx>(x, -1, floor, even, odd_before, flags);
          for (std::int64_t v = 0; v < row.vectors; ++v) {
            prefetch_pair(x + ahead, v, ahead);
            row.template pair<true, kIdx>(x, v, floor, even, odd, flags);
            if (taps == 3) {
              first(v, B::shift_in(odd, odd_before));
              next(v, 1, even);
              next(v, 2, odd);
            } else {
              first(v, even);
              next(v, 1, odd);
            }
            odd_before = odd;
            put(v);
          }
          if constexpr (kIdx) out_idx += row.out;
        }
      }
    } else {
      if (ahead) prefetch_row(x + ahead, row.in);
      flags = row.template fill<Tr::Identity, true, kIdx>(x, 0);
      const C* b = row.buf.data();
      const std::int64_t* tap = row.tap_at.data();
      for (std::int64_t v = 0; v < row.vectors; ++v) {
        first(v, B::load(b + tap[0] + v * N));
        for (std::int64_t k = 1; k < taps; ++k) next(v, k, B::load(b + tap[k] + v * N));
        put(v);
      }
    }
    return flags;
  }

  // ---- The exact order, for rows holding NaN or lowest(): per vector of
  // outputs, each tap with the lanes whose window holds it.

  struct RowTap {
    std::int64_t off;  ///< input position of lane 0's tap
    M load0, load1;    ///< what may be read: [off, off+N), and for stride 2 [off+N, off+2N)
    M valid;           ///< lanes whose window holds this tap
  };
  struct RowVector {
    std::int64_t j0;
    std::size_t first, count;  ///< its taps in RowProgram::taps
    M store;
  };
  struct RowProgram {
    std::int64_t stride = 1;
    I steps{};  ///< lane j: j * stride
    std::vector<RowVector, Aligned<RowVector>> vectors;
    std::vector<RowTap, Aligned<RowTap>> taps;

    explicit RowProgram(const AxisPlan& a) : stride(a.stride), steps(B::iota(0, a.stride)) {
      for (std::int64_t j0 = 0; j0 < a.out; j0 += N) {
        const std::int64_t n = std::min(N, a.out - j0);
        RowVector v{j0, taps.size(), 0, B::first_n(n)};
        // tap_lo and tap_hi fall with the output index: these are all taps of the lanes.
        for (std::int64_t t = a.tap_lo[at(j0 + n - 1)]; t < a.tap_hi[at(j0)]; ++t) {
          const std::size_t k = at(t - a.t_first);
          const std::int64_t lo = std::max<std::int64_t>(a.out_lo[k] - j0, 0);
          const std::int64_t hi = std::min(a.out_hi[k] - j0, n);
          if (lo >= hi) continue;
          const M valid = B::lanes(lo, hi);
          RowTap tap{j0 * a.stride - a.pad_begin + t * a.dilation, valid, B::none(), valid};
          if (a.stride == 2 && N > 1) {
            tap.load0 = B::lanes(2 * lo, 2 * hi - 1);
            tap.load1 = B::lanes(2 * lo - N, 2 * hi - 1 - N);
          }
          taps.push_back(tap);
          ++v.count;
        }
        vectors.push_back(v);
      }
    }

    V load(const T* x, const RowTap& t) const {
      if constexpr (N == 1) {
        return B::load_at(x, t.off, t.valid);
      } else {
        if (stride == 1) return B::load_at(x, t.off, t.load0);
        if (stride == 2) return B::load_even(x + t.off, t.load0, t.load1);
        return B::load_strided(x, t.off, stride, t.valid);
      }
    }
  };

  template <bool kIdx>
  static void row_max_exact(const RowProgram& prog, const T* x, std::int64_t row_base, C* out,
                            std::int32_t* out_idx) {
    for (const RowVector& v : prog.vectors) {
      const RowTap* taps = prog.taps.data() + v.first;
      V best = prog.load(x, taps[0]);
      I best_idx{};
      if constexpr (kIdx) best_idx = B::add_i(prog.steps, row_base + taps[0].off);
      M seen = taps[0].valid;
      for (std::size_t k = 1; k < v.count; ++k) {
        const V c = prog.load(x, taps[k]);
        // A lane's first valid tap always enters; later ones only if they beat it.
        const M take = B::mand(taps[k].valid, B::mor(B::mnot(seen), B::beats(c, best)));
        best = B::select(take, c, best);
        if constexpr (kIdx)
          best_idx = B::select_i(take, B::add_i(prog.steps, row_base + taps[k].off), best_idx);
        seen = B::mor(seen, taps[k].valid);
      }
      B::store(out + v.j0, best, v.store);
      if constexpr (kIdx) B::store_i(out_idx + v.j0, best_idx, v.store);
    }
  }

  // ---- Forward, other axes. Each outer axis k reads a buffer of rows of
  // `inner` elements, one per input position along k, covering the whole tap
  // span of the windows it reduces; rows outside the axis hold the neutral
  // value (0 for sums, lowest() for MaxPool), so every window reads all its
  // taps without checks, and with stride 1 a run of windows is one flat loop.

  /// Input position of output 0's first tap along a (tap t_first).
  static std::int64_t first_tap(const AxisPlan& a) { return a.t_first * a.dilation - a.pad_begin; }
  /// Rows the windows [ob, oe) of a read, from position ob*s + first_tap(a).
  static std::int64_t span_rows(const AxisPlan& a, std::int64_t ob, std::int64_t oe) {
    return (oe - 1 - ob) * a.stride + (a.t_end - a.t_first - 1) * a.dilation + 1;
  }

  /// The buffers of one forward call: B[k] feeds axis k (k < n-1), laid out
  /// [part][row][inner_k] with the rows of axis k's span; parts are the
  /// positions of the axes before k (axis 0: the chunk's valid rows).
  struct Stages {
    std::size_t n;
    std::vector<std::int64_t> inner;     ///< per k < n-1: elements of a row of B[k]
    std::vector<std::int64_t> span;      ///< per k >= 1: rows of B[k] per part
    std::vector<std::int64_t> first;     ///< per k >= 1: position of row 0 of B[k]
    std::vector<std::int64_t> parts;     ///< per k >= 1: most parts of B[k]
    std::int64_t span0 = 0;              ///< most rows of B[0]
    std::int64_t valid0 = 0;             ///< most valid axis-0 rows of an item
    std::vector<std::vector<C, Aligned<C>>> values;
    std::vector<std::vector<std::int32_t>> index;

    Stages(const Plan& plan, bool with_index, C neutral) : n(plan.axes.size()) {
      const AxisPlan& a0 = plan.axes[0];
      for (std::int64_t ob = 0; ob < a0.out; ob += plan.chunk) {
        const std::int64_t oe = std::min(a0.out, ob + plan.chunk);
        const std::int64_t f = ob * a0.stride + first_tap(a0), rows = span_rows(a0, ob, oe);
        span0 = std::max(span0, rows);
        valid0 = std::max(valid0, std::min(a0.in, f + rows) - std::max<std::int64_t>(0, f));
      }
      inner.assign(n - 1, 1);
      for (std::size_t k = n - 1; k-- > 0;)
        inner[k] = (k + 1 < n - 1 ? inner[k + 1] : 1) * plan.axes[k + 1].out;
      span.assign(n - 1, 0);
      first.assign(n - 1, 0);
      parts.assign(n - 1, 0);
      values.resize(n - 1);
      index.resize(n - 1);
      values[0].assign(at(span0 * inner[0]), neutral);
      std::int64_t before = valid0;  // parts of B[k]: valid axis-0 rows x in[1..k)
      for (std::size_t k = 1; k + 1 < n; ++k) {
        const AxisPlan& a = plan.axes[k];
        span[k] = span_rows(a, 0, a.out);
        first[k] = first_tap(a);
        parts[k] = before;
        before *= a.in;
        values[k].assign(at(parts[k] * span[k] * inner[k]), neutral);
      }
      if (with_index)
        for (std::size_t k = 0; k + 1 < n; ++k) index[k].assign(values[k].size(), 0);
    }
  };

  /// The row of B[k] that holds `part`, which enumerates the positions
  /// (d_0 - v_lo, d_1, ..., d_k) of axes 0..k (what the stage of axis k+1,
  /// or the last axis's row stage, produces for it); -1 when no window of
  /// axis k reads position d_k.
  static std::int64_t row_in_buffer(const Stages& st, const Plan& plan, std::size_t k,
                                    std::int64_t part, std::int64_t first0, std::int64_t v_lo) {
    if (k == 0) return v_lo + part - first0;
    const std::int64_t row = part % plan.axes[k].in - st.first[k];
    if (row < 0 || row >= st.span[k]) return -1;
    return part / plan.axes[k].in * st.span[k] + row;
  }

  struct SumToBuffer {
    C* out;
    bool flat_ok() const { return true; }
    void row(std::int64_t) {}
    void put(std::int64_t at_out, V v, M m, std::int64_t) { B::store(out + at_out, v, m); }
  };

  /// Large planes keep one row of AveragePool's divisors, not a table.
  static bool divisors_per_row(const Plan& plan) {
    return plan.out_plane > (std::int64_t{1} << 16);
  }

  /// Writes the finished windows: the average (tr Identity: AveragePool) or
  /// the Lp root (p = 1, 2 or more as tr is Abs, Square or Pow). `divisors`
  /// holds, per output position of the plane, AveragePool's divisor (or,
  /// kPerRow, one row of them, refreshed per output row). Both are template
  /// arguments so that the per-vector code has no branch left.
  template <Tr tr, bool kPerRow>
  struct SumToOutput {
    const Plan& plan;
    T* y;
    const C* divisors;
    C* row_buf;
    std::int64_t out_ahead = 0;  ///< prefetches y this far on (0: none)
    std::int64_t cached = -1;
    /// The lanes written whose value is outside what the fast sums keep
    /// exact (sum_out_of_range): the caller redoes those windows.
    M outside = B::none();
    const V floor = B::broadcast(static_cast<C>(plan.value_floor));
    /// One flat run may span output rows unless the divisors come per row.
    bool flat_ok() const { return !kPerRow || tr != Tr::Identity; }
    void row(std::int64_t o) {
      if (tr != Tr::Identity || !kPerRow) return;
      const std::int64_t d0 = plan.axes[0].divisor[at(o)];
      if (d0 == cached) return;
      cached = d0;
      for (std::size_t j = 0; j < plan.inner_divisor.size(); ++j)
        row_buf[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
    }
    /// at_out: offset in y of the chunk; j: of the plane (for the divisor).
    void put(std::int64_t at_out, V v, M m, std::int64_t j) {
      V r;
      // The reference's sum starts from 0, so no -0 survives (all taps -0).
      if constexpr (tr == Tr::Identity)
        r = B::div(B::add(B::zero(), v),
                   B::load(kPerRow ? row_buf + j % plan.inner_out() : divisors + j, m));
      else if constexpr (tr == Tr::Abs)
        r = v;
      else if constexpr (tr == Tr::Square)
        r = B::sqrt(v);
      else
        r = root(v);
      if (out_ahead) __builtin_prefetch(y + at_out + out_ahead, 1, 3);
      outside = B::mor(outside, B::mand(m, sum_out_of_range(r, floor)));
      B::store(y + at_out, r, m);
    }
    V root(V v) const {
      if constexpr (B::kHasPow)
        return B::root(v, plan.p);
      else
        return v;  // never reached: exponents above 2 run on the portable backend
    }
  };

  /// The lanes of finished sums r (averages, Lp values) that the fast sums
  /// may have got wrong: not finite (the sum overflowed, unless an input
  /// was not finite), or below `floor` (Plan::value_floor: LpPool's powers
  /// may have underflowed). The caller redoes those windows exactly.
  static M sum_out_of_range(V r, V floor) {
    const V a = B::abs(r);
    const V most = B::broadcast(std::numeric_limits<C>::max());
    return B::mor(B::mor(B::unordered(r), B::greater(a, most)), B::greater(floor, a));
  }
  static bool scalar_out_of_range(C r, const Plan& plan) {
    const C a = r < C(0) ? C(-r) : r;
    return !(a <= std::numeric_limits<C>::max()) || static_cast<double>(a) < plan.value_floor;
  }

  /// Sums along axis a of one part: rows of `inner` elements from `src`
  /// (row 0 = position f) into outputs [ob, oe); the sink gets the flat
  /// offset of each vector in the part's output block and in the plane.
  template <int K, class Sink>
  static void outer_sum(const AxisPlan& a, const C* src, std::int64_t f, std::int64_t ob,
                        std::int64_t oe, std::int64_t inner, std::int64_t plane_offset,
                        Sink& sink) {
    const std::int64_t taps = K > 0 ? K : a.t_end - a.t_first;
    const std::int64_t step = a.dilation * inner;
    const std::int64_t u0 = first_tap(a);
    if (a.stride == 1 && sink.flat_ok()) {
      const std::int64_t n = (oe - ob) * inner;
      const C* base = src + (ob + u0 - f) * inner;
      sink.row(ob);
      for_vectors(n, [&](std::int64_t i, M m) {
        V acc = B::load(base + i, m);
        for (std::int64_t t = 1; t < taps; ++t) acc = B::add(acc, B::load(base + t * step + i, m));
        sink.put(i, acc, m, plane_offset + i);
      });
      return;
    }
    const M tail = B::first_n(inner % N == 0 ? N : inner % N);
    for (std::int64_t o = ob; o < oe; ++o) {
      sink.row(o);
      const C* base = src + (o * a.stride + u0 - f) * inner;
      const std::int64_t dst = (o - ob) * inner;
      for (std::int64_t j = 0; j < inner; j += N) {
        const M m = j + N <= inner ? B::first_n(N) : tail;
        V acc = B::load(base + j, m);
        for (std::int64_t t = 1; t < taps; ++t) acc = B::add(acc, B::load(base + t * step + j, m));
        sink.put(dst + j, acc, m, plane_offset + dst + j);
      }
    }
  }

  /// Stores the plane offsets idx of outputs [o, o + N) as argmax's form
  /// wants them (flat indices add the plane's first input, base).
  static void store_argmax(const Argmax& argmax, std::int64_t o, I idx, std::int64_t base, M m) {
    if (argmax.offsets)
      B::store_i(argmax.offsets + o, idx, m);
    else
      B::store_index64(argmax.flat + o, idx, base, m);
  }

  /// Prefetches for writing the argmax of outputs [o, o + N).
  static void prefetch_argmax(const Argmax& argmax, std::int64_t o) {
    if (argmax.offsets) {
      __builtin_prefetch(argmax.offsets + o, 1, 3);
    } else {
      __builtin_prefetch(argmax.flat + o, 1, 3);
      __builtin_prefetch(argmax.flat + o + N / 2, 1, 3);
    }
  }

  /// Maxima along axis a of one part (see outer_sum); values and plane
  /// offsets go to (out, out_idx), or with kFinal to y and argmax. Takes a
  /// row when greater (see row_max); kExact: MaxPool's exact order over each
  /// window's valid rows only (for items whose input holds NaN or lowest()).
  template <int K, bool kIdx, bool kFinal, bool kExact>
  static void outer_max(const AxisPlan& a, const C* src, const std::int32_t* src_idx,
                        std::int64_t f, std::int64_t ob, std::int64_t oe, std::int64_t inner,
                        C* out, std::int32_t* out_idx, T* y, Argmax argmax,
                        std::int64_t plane_base, std::int64_t out_ahead = 0) {
    const std::int64_t step = a.dilation * inner;
    const bool flat = a.stride == 1 && !kExact;
    const std::int64_t runs = flat ? 1 : oe - ob;
    const std::int64_t length = flat ? (oe - ob) * inner : inner;
    const M tail = B::first_n(length % N == 0 ? N : length % N);
    for (std::int64_t r = 0; r < runs; ++r) {
      const std::int64_t o = ob + r;
      std::int64_t lo = a.t_first, hi = a.t_end;  // taps of this run's windows
      if (kExact) {
        lo = a.tap_lo[at(o)];
        hi = a.tap_hi[at(o)];
      }
      const std::int64_t row0 = o * a.stride + lo * a.dilation - a.pad_begin - f;
      const C* base = src + row0 * inner;
      const std::int32_t* base_idx = kIdx ? src_idx + row0 * inner : nullptr;
      const std::int64_t taps = K > 0 && !kExact ? K : hi - lo;
      const std::int64_t dst = r * inner;
      for (std::int64_t i = 0; i < length; i += N) {
        const M m = i + N <= length ? B::first_n(N) : tail;
        V best = B::load(base + i, m);
        I best_idx{};
        if constexpr (kIdx) best_idx = B::load_i(base_idx + i, m);
        for (std::int64_t t = 1; t < taps; ++t) {
          const V c = B::load(base + t * step + i, m);
          if constexpr (kIdx || kExact) {
            const M take = kExact ? B::beats(c, best) : B::greater(c, best);
            best = B::select(take, c, best);
            if constexpr (kIdx)
              best_idx = B::select_i(take, B::load_i(base_idx + t * step + i, m), best_idx);
          } else {
            best = B::max(c, best);
          }
        }
        if constexpr (kFinal) {
          if (out_ahead) {
            __builtin_prefetch(y + dst + i + out_ahead, 1, 3);
            if constexpr (kIdx) prefetch_argmax(argmax, dst + i + out_ahead);
          }
          B::store(y + dst + i, best, m);
          if constexpr (kIdx) store_argmax(argmax, dst + i, best_idx, plane_base, m);
        } else {
          B::store(out + dst + i, best, m);
          if constexpr (kIdx) B::store_i(out_idx + dst + i, best_idx, m);
        }
      }
    }
  }

  // ---- Forward over work items.

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

  /// One item's geometry along axis 0: the windows [ob, oe), the rows of
  /// B[0] from position first0, and the valid rows [v_lo, v_hi) among them.
  struct Item {
    std::int64_t plane, ob, oe, first0, rows0, v_lo, v_hi;
    Item(const Plan& plan, std::int64_t item) {
      const AxisPlan& a0 = plan.axes[0];
      plane = item / plan.chunks;
      ob = item % plan.chunks * plan.chunk;
      oe = std::min(a0.out, ob + plan.chunk);
      first0 = ob * a0.stride + first_tap(a0);
      rows0 = span_rows(a0, ob, oe);
      v_lo = std::max<std::int64_t>(0, first0);
      v_hi = std::min(a0.in, first0 + rows0);
    }
  };

  /// B[0]'s rows outside axis 0 get the neutral value (they vary per item).
  static void neutral_halo(Stages& st, const Item& it, C neutral) {
    C* b = st.values[0].data();
    const std::int64_t inner = st.inner[0];
    std::fill(b, b + (it.v_lo - it.first0) * inner, neutral);
    std::fill(b + (it.v_hi - it.first0) * inner, b + it.rows0 * inner, neutral);
  }

  /// Returns false when some output is out of range (sum_out_of_range).
  template <Tr tr, bool kPerRow>
  static bool forward_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                          std::int64_t end) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    // AveragePool's divisors per output position: a table for the plane, or
    // for large planes (kPerRow) one row, refreshed per output row.
    std::vector<C, Aligned<C>> divisors = divisor_table(plan);
    if (kPerRow && plan.reduce == Reduce::Average) divisors.resize(at(plan.inner_out()));
    if (!kPerRow && fused_ok(plan)) {
      const RowInput row(last, C(0));
      const FusedWindows windows(plan);
      bool in_range = true;
      for (std::int64_t item = begin; item < end; ++item)
        in_range = fused_item<false, false, tr, false>(plan, windows, row, x, y, Argmax{},
                                                       divisors.data(), item) &&
                   in_range;
      return in_range;
    }
    Stages st(plan, false, C(0));
    // 2-D: an item's valid rows are contiguous in x and in B[0].
    RowInput row(last, C(0), n == 2 ? st.valid0 : 1);
    SumToOutput<tr, kPerRow> final_sink{plan, nullptr, divisors.data(), divisors.data()};
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);
    for (std::int64_t item = begin; item < end; ++item) {
      const Item it(plan, item);
      neutral_halo(st, it, C(0));
      const T* xp = x + plane_offset(plan, it);
      const std::int64_t out_base = it.plane * plan.out_plane + it.ob * st.inner[0];
      final_sink.out_ahead = (it.oe - it.ob) * st.inner[0];
      const std::int64_t rows = (it.v_hi - it.v_lo) * middle_rows;
      C* dst0 = st.values[n - 2].data();
      with_taps(row.taps, [&](auto taps) {
        if (row.run_rows > 1) {
          row_sum<decltype(taps)::value, tr>(
              row, xp, dst0 + row_in_buffer(st, plan, 0, 0, it.first0, it.v_lo) * last.out,
              plan.p, rows, plan.in_plane / plan.chunks);
          return;
        }
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t at_row = row_in_buffer(st, plan, n - 2, r, it.first0, it.v_lo);
          if (at_row < 0) continue;
          row_sum<decltype(taps)::value, tr>(row, xp + r * last.in, dst0 + at_row * last.out,
                                             plan.p, 1, plan.in_plane / plan.chunks);
        }
      });
      for (std::size_t k = n - 1; k-- > 1;) {
        const AxisPlan& a = plan.axes[k];
        const std::int64_t parts = (it.v_hi - it.v_lo) * in_product(plan, 1, k);
        with_taps(a.t_end - a.t_first, [&](auto taps) {
          for (std::int64_t p = 0; p < parts; ++p) {
            const std::int64_t to = row_in_buffer(st, plan, k - 1, p, it.first0, it.v_lo);
            if (to < 0) continue;
            SumToBuffer sink{st.values[k - 1].data() + to * st.inner[k - 1]};
            outer_sum<decltype(taps)::value>(
                a, st.values[k].data() + p * st.span[k] * st.inner[k], st.first[k], 0, a.out,
                st.inner[k], 0, sink);
          }
        });
      }
      final_sink.y = y + out_base;
      with_taps(a0.t_end - a0.t_first, [&](auto taps) {
        outer_sum<decltype(taps)::value>(a0, st.values[0].data(), it.first0, it.ob, it.oe,
                                         st.inner[0], it.ob * st.inner[0], final_sink);
      });
    }
    return !B::any(final_sink.outside);
  }

  /// The input of an item starts at its first valid axis-0 row.
  static std::int64_t plane_offset(const Plan& plan, const Item& it) {
    return it.plane * plan.in_plane + it.v_lo * (plan.in_plane / plan.axes[0].in);
  }

  /// One forward item. kExact (with `program`) works in MaxPool's exact
  /// order; otherwise returns false, having written nothing final, when the
  /// fast order may differ from it (a NaN in the input, or with the argmax a
  /// lowest()), and the caller runs the item again with kExact.
  template <bool kIdx, bool kExact>
  static bool forward_max_item(const Plan& plan, const T* x, T* y, Argmax argmax,
                               std::int64_t item, RowInput& row, const RowProgram* program,
                               Stages& st) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);
    const Item it(plan, item);
    neutral_halo(st, it, lowest());
    const T* xp = x + plane_offset(plan, it);
    const std::int64_t base0 = it.v_lo * middle_rows * last.in;  // plane offset of xp
    const std::int64_t out_base = it.plane * plan.out_plane + it.ob * st.inner[0];
    const std::int64_t out_count = (it.oe - it.ob) * st.inner[0];

    const std::int64_t rows = (it.v_hi - it.v_lo) * middle_rows;
    C* dst0 = st.values[n - 2].data();
    std::int32_t* dst0_idx = kIdx ? st.index[n - 2].data() : nullptr;
    M flags = B::none();
    with_taps(row.taps, [&](auto taps) {
      // 2-D: an item's valid rows are consecutive in x and in B[0], so one
      // call takes them all (a Direct1 run, or Direct2 rows one by one).
      if (!kExact && (row.run_rows > 1 || (n == 2 && row.kind == RowRead::Direct2))) {
        const std::int64_t at_row = row_in_buffer(st, plan, 0, 0, it.first0, it.v_lo) * last.out;
        flags = row_max<decltype(taps)::value, kIdx>(row, xp, base0, dst0 + at_row,
                                                     kIdx ? dst0_idx + at_row : nullptr, rows,
                                                     plan.in_plane / plan.chunks);
        return;
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t buffer_row = row_in_buffer(st, plan, n - 2, r, it.first0, it.v_lo);
        if (buffer_row < 0) continue;
        const std::int64_t at_row = buffer_row * last.out;
        std::int32_t* row_idx = kIdx ? dst0_idx + at_row : nullptr;
        const T* in = xp + r * last.in;
        if constexpr (kExact) {
          row_max_exact<kIdx>(*program, in, base0 + r * last.in, dst0 + at_row, row_idx);
        } else {
          flags = B::mor(flags, row_max<decltype(taps)::value, kIdx>(
                                    row, in, base0 + r * last.in, dst0 + at_row, row_idx, 1,
                                    plan.in_plane / plan.chunks));
        }
      }
    });
    if (!kExact && B::any(flags)) return false;
    for (std::size_t k = n - 1; k-- > 1;) {
      const AxisPlan& a = plan.axes[k];
      const std::int64_t parts = (it.v_hi - it.v_lo) * in_product(plan, 1, k);
      with_taps(a.t_end - a.t_first, [&](auto taps) {
        for (std::int64_t p = 0; p < parts; ++p) {
          const std::int64_t buffer_row = row_in_buffer(st, plan, k - 1, p, it.first0, it.v_lo);
          if (buffer_row < 0) continue;
          const std::int64_t to = buffer_row * st.inner[k - 1];
          const std::int64_t from = p * st.span[k] * st.inner[k];
          outer_max<decltype(taps)::value, kIdx, false, kExact>(
              a, st.values[k].data() + from, kIdx ? st.index[k].data() + from : nullptr,
              st.first[k], 0, a.out, st.inner[k], st.values[k - 1].data() + to,
              kIdx ? st.index[k - 1].data() + to : nullptr, nullptr, Argmax{}, 0);
        }
      });
    }
    with_taps(a0.t_end - a0.t_first, [&](auto taps) {
      outer_max<decltype(taps)::value, kIdx, true, kExact>(
          a0, st.values[0].data(), kIdx ? st.index[0].data() : nullptr, it.first0, it.ob, it.oe,
          st.inner[0], nullptr, nullptr, y + out_base, kIdx ? argmax.at(out_base) : Argmax{},
          it.plane * plan.in_plane, kExact ? 0 : out_count);
    });
    return true;
  }

  template <bool kIdx>
  static void forward_max(const Plan& plan, const T* x, T* y, Argmax argmax,
                          std::int64_t begin, std::int64_t end) {
    const AxisPlan& last = plan.axes.back();
    const bool fused = fused_ok(plan);
    bool clipped = false;  // a window of the last axis reaches outside the row
    for (std::int64_t o = 0; o < last.out; ++o)
      clipped = clipped || last.tap_lo[at(o)] != last.t_first || last.tap_hi[at(o)] != last.t_end;
    // The staged path's buffers; the fused path only needs them for the exact order.
    std::unique_ptr<Stages> st;
    if (!fused) st = std::make_unique<Stages>(plan, kIdx, lowest());
    RowInput row(last, lowest(), plan.axes.size() == 2 && st ? st->valid0 : 1);
    std::unique_ptr<RowProgram> program;  // built the first time an item needs it
    std::unique_ptr<FusedWindows> windows;
    if (fused) windows = std::make_unique<FusedWindows>(plan);
    for (std::int64_t item = begin; item < end; ++item) {
      if (fused ? (clipped ? fused_item<true, kIdx, Tr::Identity, true>(
                                 plan, *windows, row, x, y, argmax, nullptr, item)
                           : fused_item<true, kIdx, Tr::Identity, false>(
                                 plan, *windows, row, x, y, argmax, nullptr, item))
                : forward_max_item<kIdx, false>(plan, x, y, argmax, item, row, nullptr, *st))
        continue;
      if (!program) program = std::make_unique<RowProgram>(last);
      if (!st) st = std::make_unique<Stages>(plan, kIdx, lowest());
      forward_max_item<kIdx, true>(plan, x, y, argmax, item, row, program.get(), *st);
    }
  }

  // ---- Forward, fused: the last axis read as stride-2 pairs (two taps) and
  // the other axes' windows disjoint (2 or 3 spatial axes). No input row is
  // read by two windows, so each output row reduces its window's input rows
  // straight from x in registers; the staged path would write every row
  // reduction to scratch and read it back. The order is the staged one: a
  // row's taps first, then the rows in row-major order.

  /// Most input rows of one fused window.
  static constexpr std::int64_t kFusedRows = 16;

  static bool fused_ok(const Plan& plan) {
    const std::size_t n = plan.axes.size();
    if (N == 1 || n < 2 || n > 3) return false;
    const AxisPlan& last = plan.axes[n - 1];
    // RowInput's Direct2 with two taps.
    if (last.stride != 2 || last.dilation != 1 || last.t_end - last.t_first != 2) return false;
    std::int64_t rows = 1;
    for (std::size_t k = 0; k + 1 < n; ++k) {
      const AxisPlan& a = plan.axes[k];
      if ((a.t_end - a.t_first - 1) * a.dilation >= a.stride) return false;
      rows *= a.t_end - a.t_first;
    }
    return rows <= kFusedRows;
  }

  /// The plane offsets of the input rows of output row (o0, o1) (o1 = 0 in
  /// 2-D), row-major; returns their count.
  static std::int64_t fused_rows(const Plan& plan, std::int64_t o0, std::int64_t o1,
                                 std::int32_t* rows) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const std::int64_t row_len = plan.axes[n - 1].in;
    std::int64_t count = 0;
    for (std::int64_t t0 = a0.tap_lo[at(o0)]; t0 < a0.tap_hi[at(o0)]; ++t0) {
      const std::int64_t p0 = a0.position(o0, t0);
      if (n == 2) {
        rows[count++] = static_cast<std::int32_t>(p0 * row_len);
        continue;
      }
      const AxisPlan& a1 = plan.axes[1];
      for (std::int64_t t1 = a1.tap_lo[at(o1)]; t1 < a1.tap_hi[at(o1)]; ++t1)
        rows[count++] = static_cast<std::int32_t>((p0 * a1.in + a1.position(o1, t1)) * row_len);
    }
    return count;
  }

  /// fused_rows of every output row of a plane, worked out once per call
  /// instead of once per output row of every item.
  struct FusedWindows {
    std::vector<std::int32_t> rows;   ///< [output row][kFusedRows]
    std::vector<std::int32_t> count;  ///< [output row]
    explicit FusedWindows(const Plan& plan) {
      const std::size_t n = plan.axes.size();
      const std::int64_t out0 = plan.axes[0].out, middle = n == 3 ? plan.axes[1].out : 1;
      rows.resize(at(out0 * middle * kFusedRows));
      count.resize(at(out0 * middle));
      for (std::int64_t o0 = 0; o0 < out0; ++o0)
        for (std::int64_t o1 = 0; o1 < middle; ++o1) {
          const std::int64_t w = o0 * middle + o1;
          count[at(w)] = static_cast<std::int32_t>(
              fused_rows(plan, o0, o1, rows.data() + w * kFusedRows));
        }
    }
  };

  /// One fused item of MaxPool (kMax) or of a sum. MaxPool returns false when
  /// the item holds a NaN, or with the argmax a lowest() (see row_max); its
  /// outputs are then written again by the exact path. A sum returns false
  /// when an output is out of range (sum_out_of_range).
  /// kClipped: some window of the last axis reaches outside the row, so
  /// lanes filled with lowest() sit in real windows and the argmax must
  /// watch for real lowest() values (see row_max).
  template <bool kMax, bool kIdx, Tr tr, bool kClipped>
  static bool fused_item(const Plan& plan, const FusedWindows& windows, const RowInput& row,
                         const T* x, T* y, Argmax argmax, const C* divisors, std::int64_t item) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& last = plan.axes[n - 1];
    const Item it(plan, item);
    const T* xp = x + it.plane * plan.in_plane;
    const std::int64_t middle = n == 3 ? plan.axes[1].out : 1;
    const std::int64_t ahead = plan.in_plane / plan.chunks;
    const std::int64_t out_base = it.plane * plan.out_plane;
    const std::int64_t out_count = (it.oe - it.ob) * middle * last.out;
    const M tail = B::first_n(last.out % N == 0 ? N : last.out % N);
    const V floor = B::broadcast(row.neutral);
    M flags = B::none();
    SumToOutput<tr, false> sink{plan, y + out_base, divisors, nullptr, out_count};
    const I evens = B::iota(row.base, 2);  // lane j's even tap in its row
    const std::int64_t vectors = row.vectors;
    for (std::int64_t o0 = it.ob; o0 < it.oe; ++o0)
      for (std::int64_t o1 = 0; o1 < middle; ++o1) {
        const std::int64_t found = windows.count[at(o0 * middle + o1)];
        const std::int32_t* rows = windows.rows.data() + (o0 * middle + o1) * kFusedRows;
        const std::int64_t out_row = (o0 * middle + o1) * last.out;
        // K: the window's input rows as a compile-time count where it is the
        // full 2 (2-D) or 4 (3-D), so the loop over them unrolls (a loop of a
        // runtime 2 or 4 per vector measured up to 1.3x slower, P2 and P5
        // training-mode forward). Windows clipped by the input (ceil_mode,
        // pads) take K = 0.
        auto vectors_of_row = [&](auto fixed) {
          constexpr int K = decltype(fixed)::value;
          const std::int64_t count = K > 0 ? K : found;
          // The rows' offsets, masks and layout as locals, not read through
          // `rows` and `row`: the masked stores below may alias anything, so
          // those would be loaded again for every row of every vector.
          std::int64_t offset[K > 0 ? K : 1];
          if constexpr (K > 0)
            for (int r = 0; r < K; ++r) offset[r] = rows[r] + row.base;
          auto at_row = [&](std::int64_t r) { return K > 0 ? offset[r] : rows[r] + row.base; };
          const MBox* const pair_masks = row.masks.data() + 2;  // vector 0's
          for (std::int64_t v = 0; v < vectors; ++v) {
            const M lo_m = pair_masks[2 * v].v, hi_m = pair_masks[2 * v + 1].v;
            V best = B::zero();
            I best_idx{};
            for (std::int64_t r = 0; r < count; ++r) {
              const T* in = xp + at_row(r) + 2 * v * N;
              if (ahead) {
                __builtin_prefetch(in + ahead, 0, 3);
                __builtin_prefetch(in + ahead + N, 0, 3);
              }
              const V fill = kMax ? floor : B::zero();
              const V lo = B::load_or(in, lo_m, fill), hi = B::load_or(in + N, hi_m, fill);
              V even, odd;
              B::deinterleave(lo, hi, even, odd);
              if constexpr (kMax) {
                flags = B::mor(flags, B::unordered(lo, hi));
                if constexpr (kIdx && kClipped)
                  flags = B::mor(flags, B::mor(B::equal(lo_m, lo, floor), B::equal(hi_m, hi, floor)));
                if constexpr (kIdx) {
                  const I at_even = B::add_i(evens, at_row(r) - row.base + 2 * v * N);
                  const M take_odd = B::greater(odd, even);
                  const V c = B::select(take_odd, odd, even);
                  const I c_idx = B::select_i(take_odd, B::add_i(at_even, 1), at_even);
                  const M take = r == 0 ? B::first_n(N) : B::greater(c, best);
                  best = B::select(take, c, best);
                  best_idx = B::select_i(take, c_idx, best_idx);
                } else {
                  const V c = B::max(odd, even);
                  best = r == 0 ? c : B::max(c, best);
                }
              } else {
                const V c = B::add(transform<tr>(even, plan.p), transform<tr>(odd, plan.p));
                best = r == 0 ? c : B::add(best, c);
              }
            }
            const std::int64_t j = out_row + v * N;
            const M m = v + 1 < vectors ? B::first_n(N) : tail;
            if constexpr (kMax) {
              __builtin_prefetch(y + out_base + j + out_count, 1, 3);
              if constexpr (kIdx) prefetch_argmax(argmax, out_base + j + out_count);
              B::store(y + out_base + j, best, m);
              if constexpr (kIdx)
                store_argmax(argmax, out_base + j, best_idx, it.plane * plan.in_plane, m);
            } else {
              sink.put(j, best, m, j);
            }
          }
        };
        if (found == 2)
          vectors_of_row(std::integral_constant<int, 2>{});
        else if (found == 4)
          vectors_of_row(std::integral_constant<int, 4>{});
        else
          vectors_of_row(std::integral_constant<int, 0>{});
      }
    return !B::any(B::mor(flags, sink.outside));
  }

  // ---- Forward, one window over the whole plane (global pooling).

  /// The plane's sum, finished: the average, or the Lp root.
  template <Tr tr>
  static C finish_sum(const Plan& plan, C sum, C divisor) {
    if (plan.reduce == Reduce::Average) return sum / divisor;
    if (plan.p == 1) return sum;
    if (plan.p == 2) return std::sqrt(sum);
    return static_cast<C>(std::pow(sum, C(1) / static_cast<C>(plan.p)));
  }

  template <Tr tr>
  static bool whole_plane_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
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
  template <Tr tr>
  static bool small_plane_sums(const Plan& plan, const T* x, T* y, C divisor,
                               std::int64_t begin, std::int64_t end, std::int64_t vectors) {
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


  template <bool kIdx>
  static void whole_plane_max(const Plan& plan, const T* x, T* y, Argmax argmax,
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

  /// Returns false when an average or Lp value is out of the fast sums'
  /// exact range (sum_out_of_range): the caller redoes those windows.
  static bool forward(const Plan& plan, const T* x, T* y, Argmax argmax, std::int64_t begin,
                      std::int64_t end) {
    if (plan.reduce == Reduce::Max) {
      if (plan.whole_plane) {
        if (!argmax.empty())
          whole_plane_max<true>(plan, x, y, argmax, begin, end);
        else
          whole_plane_max<false>(plan, x, y, argmax, begin, end);
      } else if (!argmax.empty()) {
        forward_max<true>(plan, x, y, argmax, begin, end);
      } else {
        forward_max<false>(plan, x, y, argmax, begin, end);
      }
      return true;
    }
    // Sums need a floating-point accumulator (C is T for int8 and uint8 MaxPool).
    if constexpr (std::is_floating_point_v<C>) {
      if (plan.reduce == Reduce::Average) return sum_forward<Tr::Identity>(plan, x, y, begin, end);
      if (plan.p == 1) return sum_forward<Tr::Abs>(plan, x, y, begin, end);
      if (plan.p == 2) return sum_forward<Tr::Square>(plan, x, y, begin, end);
      if constexpr (B::kHasPow) return sum_forward<Tr::Pow>(plan, x, y, begin, end);
    }
    return true;
  }

  template <Tr tr>
  static bool sum_forward(const Plan& plan, const T* x, T* y, std::int64_t begin,
                          std::int64_t end) {
    if (plan.whole_plane) return whole_plane_sum<tr>(plan, x, y, begin, end);
    if (divisors_per_row(plan)) return forward_sum<tr, true>(plan, x, y, begin, end);
    return forward_sum<tr, false>(plan, x, y, begin, end);
  }

  // ---- Backward.

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

  /// AveragePool's divisor at every output position of a plane (a table when
  /// the plane is small; for large planes empty, and callers work one output
  /// row at a time with divisor_row).
  static std::vector<C, Aligned<C>> divisor_table(const Plan& plan) {
    std::vector<C, Aligned<C>> table;
    if (plan.reduce != Reduce::Average || divisors_per_row(plan)) return table;
    table.reserve(at(plan.out_plane));
    for (std::int64_t d0 : plan.axes[0].divisor)
      for (std::int64_t d : plan.inner_divisor) table.push_back(static_cast<C>(d0 * d));
    return table;
  }
  static void divisor_row(const Plan& plan, std::int64_t o, C* row) {
    const std::int64_t d0 = plan.axes[0].divisor[at(o)];
    for (std::size_t j = 0; j < plan.inner_divisor.size(); ++j)
      row[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
  }

  /// How the last axis spreads a row of window gradients back over its input
  /// row (input c takes window o = (c - u) / s of every tap offset u that
  /// divides): Flat1 (stride 1, out == in: a run of rows in one flat loop),
  /// Row1 (stride 1), Row2 (stride 2: even and odd inputs, interleaved), or
  /// the windows of each input one by one. Masks are worked out once.
  enum class Spread { Flat1, Row1, Row2, Windows };

  struct RowSpread {
    Spread kind = Spread::Windows;
    std::int64_t in, out, taps, vectors;
    std::vector<std::int64_t> tap_pos;  ///< u of each tap
    std::vector<std::int64_t> tap_at;   ///< Row2: offset into g of lane 0's window
    std::vector<std::int64_t> parity;   ///< Row2: 0 if the tap feeds even inputs
    std::vector<MBox, Aligned<MBox>> masks;  ///< [vector][tap]

    RowSpread(const AxisPlan& a, std::int64_t rows)
        : in(a.in), out(a.out), taps(a.t_end - a.t_first), vectors((a.in + N - 1) / N) {
      for (std::int64_t t = a.t_first; t < a.t_end; ++t) tap_pos.push_back(t * a.dilation - a.pad_begin);
      if (N == 1) return;
      // The masks below, [vector][tap]; past kMaxRowMasks: Windows.
      const std::int64_t row_masks = (in + N - 1) / N * taps;
      if (row_masks > kMaxRowMasks) return;
      if (a.stride == 1 && a.out == a.in && rows > 1 &&
          (rows * in + N - 1) / N * taps <= kMaxRowMasks) {
        kind = Spread::Flat1;
        vectors = (rows * in + N - 1) / N;
        std::vector<std::int64_t> shifts;  // input c is in window c - u
        for (std::int64_t u : tap_pos) shifts.push_back(-u);
        masks = run_masks(in, vectors, shifts);
      } else if (a.stride == 1) {
        kind = Spread::Row1;
        for (std::int64_t v = 0; v < vectors; ++v)
          for (std::int64_t u : tap_pos) masks.push_back({B::lanes(u - v * N, out + u - v * N)});
      } else if (a.stride == 2) {
        kind = Spread::Row2;
        vectors = (in + 2 * N - 1) / (2 * N);  // pairs of vectors of inputs
        for (std::int64_t u : tap_pos) {
          // Input 2m + q sits in window o when 2o = 2m + q - u.
          parity.push_back(u % 2 == 0 ? 0 : 1);
          tap_at.push_back((parity.back() - u) / 2);
        }
        for (std::int64_t v = 0; v < vectors; ++v)
          for (std::size_t k = 0; k < tap_pos.size(); ++k) {
            const std::int64_t off = v * N + tap_at[k];
            masks.push_back({B::lanes(-off, out - off)});
          }
      }
    }
  };

  /// dx of `rows` input rows += scale * the spread of the window gradients
  /// `g` (rows of `out` values; rows > 1 only for Flat1). The vector code
  /// prefetches dx + ahead (a later item's, 0: none) as it goes.
  template <int K>
  static void spread_update(const RowSpread& rs, const AxisPlan& a, const C* g, T* dx,
                            std::int64_t rows, V scale, std::int64_t ahead = 0) {
    const std::int64_t taps = K > 0 ? K : rs.taps;
    if (rs.kind == Spread::Flat1 || rs.kind == Spread::Row1) {
      const MBox* masks = rs.masks.data();
      const TapOffsets<K> u(rs.tap_pos);
      for_vectors(rows * rs.in, [&](std::int64_t i, M m) {
        const MBox* mk = masks + i / N * taps;
        V acc = B::load(g + i - u[0], B::mand(mk[0].v, m));
        for (std::int64_t k = 1; k < taps; ++k)
          acc = B::add(acc, B::load(g + i - u[k], B::mand(mk[k].v, m)));
        if (ahead) __builtin_prefetch(dx + i + ahead, 1, 3);
        B::store(dx + i, B::add(B::load(dx + i, m), B::mul(scale, acc)), m);
      });
      return;
    }
    if constexpr (N > 1) {
      if (rs.kind == Spread::Row2) {
        const MBox* mk = rs.masks.data();
        for (std::int64_t v = 0; v < rs.vectors; ++v, mk += taps) {
          V even = B::zero(), odd = B::zero();
          for (std::int64_t k = 0; k < taps; ++k) {
            const V w = B::load(g + v * N + rs.tap_at[at(k)], mk[k].v);
            if (rs.parity[at(k)] == 0)
              even = B::add(even, w);
            else
              odd = B::add(odd, w);
          }
          V lo, hi;
          B::interleave(even, odd, lo, hi);
          const std::int64_t c = 2 * v * N;
          if (ahead) {
            __builtin_prefetch(dx + c + ahead, 1, 3);
            __builtin_prefetch(dx + c + N + ahead, 1, 3);
          }
          update(dx + c, lo, scale, std::min(N, rs.in - c));
          if (c + N < rs.in) update(dx + c + N, hi, scale, std::min(N, rs.in - c - N));
        }
        return;
      }
    }
    const C s = first_lane(scale);
    for (std::int64_t c = 0; c < a.in; ++c) {
      C acc = C(0);
      for (std::int64_t w = a.window_begin[at(c)]; w < a.window_begin[at(c + 1)]; ++w)
        acc += g[at(a.windows[at(w)])];
      dx[c] = static_cast<T>(static_cast<C>(dx[c]) + s * acc);
    }
  }

  /// Rows [P][o][inner] of per-window sums into rows [P][i - ib][inner] of
  /// per-position sums: row i gets the sum of the rows of the windows holding
  /// position i (`o_offset` is the window of in's first row).
  static void spread_rows(const AxisPlan& a, const C* in, std::int64_t in_rows,
                          std::int64_t o_offset, std::int64_t parts, std::int64_t ib,
                          std::int64_t ie, std::int64_t inner, C* out) {
    for (std::int64_t part = 0; part < parts; ++part)
      for (std::int64_t i = ib; i < ie; ++i) {
        const std::int64_t wb = a.window_begin[at(i)], we = a.window_begin[at(i + 1)];
        C* dst = out + (part * (ie - ib) + i - ib) * inner;
        const C* src = in + part * in_rows * inner;
        for (std::int64_t j = 0; j < inner; j += N) {
          const M m = B::first_n(inner - j);
          V acc = B::zero();
          for (std::int64_t w = wb; w < we; ++w)
            acc = B::add(acc, B::load(src + (a.windows[at(w)] - o_offset) * inner + j, m));
          B::store(dst + j, acc, m);
        }
      }
  }

  // ---- AveragePool backward on the fused geometry (fused_ok, with the last
  // axis unpadded at its start, so input p of a row is tap p % 2 of window
  // p / 2). No input position is in two windows, so every dX row is updated
  // once, straight from its window's dY row: one pass over dY and dX, no
  // scratch. Positions that no window holds get dX + scale * 0, as in the
  // reference. (MaxPool's fused backward is fused_max_backward.)

  static bool fused_backward_ok(const Plan& plan) {
    return fused_ok(plan) && plan.axes.back().pad_begin == 0;
  }

  /// The window holding position i of axis a, or -1 (at most one here).
  static std::int64_t window_of(const AxisPlan& a, std::int64_t i) {
    const std::int64_t w = a.window_begin[at(i)];
    return a.window_begin[at(i + 1)] > w ? a.windows[at(w)] : -1;
  }

  /// The output row of the window that holds each input row of a plane
  /// (counted from the plane's start), or -1: worked out once per call, not
  /// once per row of every plane.
  struct FusedInputRows {
    std::vector<std::int64_t> window;
    std::int64_t per_axis0 = 1;  ///< input rows per axis-0 position
    explicit FusedInputRows(const Plan& plan) {
      const bool three = plan.axes.size() == 3;
      per_axis0 = three ? plan.axes[1].in : 1;
      const std::int64_t out1 = three ? plan.axes[1].out : 1;
      for (std::int64_t i0 = 0; i0 < plan.axes[0].in; ++i0) {
        const std::int64_t w0 = window_of(plan.axes[0], i0);
        for (std::int64_t i1 = 0; i1 < per_axis0; ++i1) {
          const std::int64_t w1 = three ? window_of(plan.axes[1], i1) : 0;
          window.push_back(w0 < 0 || w1 < 0 ? -1 : w0 * out1 + w1);
        }
      }
    }
    /// f(r, w) for the input rows r of axis-0 positions [ib, ie).
    template <typename F>
    void each(std::int64_t ib, std::int64_t ie, F&& f) const {
      for (std::int64_t r = ib * per_axis0; r < ie * per_axis0; ++r) f(r, window[at(r)]);
    }
  };

  /// AveragePool: dX += scale * dY / divisor of the window, over the items
  /// of average_backward (planes x chunks of axis-0 inputs). The rows of a
  /// window take the same shares: they are worked out (and spread to the
  /// row's positions) when the window row changes from one dX row to the
  /// next (once per window row in 2-D, once per axis-0 tap in 3-D).
  static void fused_average_backward(const Plan& plan, const C* divisors, const T* dy, V scale,
                                     T* dx, std::int64_t begin, std::int64_t end,
                                     std::vector<GradientRedo>& redo) {
    if constexpr (N > 1) {
      const AxisPlan& a0 = plan.axes[0];
      const AxisPlan& last = plan.axes.back();
      const std::int64_t pairs = (last.in + 2 * N - 1) / (2 * N);
      const std::int64_t ahead = plan.in_plane / plan.input_chunks;  // about one item
      const std::int64_t dy_ahead = plan.out_plane / plan.input_chunks;
      const V one = B::broadcast(C(1));
      const V most = B::broadcast(static_cast<C>(plan.term_limit));
      std::vector<C, Aligned<C>> shares(at(2 * N * pairs));
      const FusedInputRows input_rows(plan);
      for (std::int64_t item = begin; item < end; ++item) {
        const std::int64_t plane = item / plan.input_chunks;
        const std::int64_t ib = item % plan.input_chunks * plan.input_chunk;
        const std::int64_t ie = std::min(a0.in, ib + plan.input_chunk);
        const T* dyp = dy + plane * plan.out_plane;
        T* dxp = dx + plane * plan.in_plane;
        std::int64_t shares_of = -2;  // the window row in `shares`
        bool stopped = false;
        input_rows.each(ib, ie, [&](std::int64_t r, std::int64_t w) {
          if (stopped) return;
          if (w != shares_of) {
            shares_of = w;
            M over = B::none();
            for (std::int64_t v = 0; v < pairs; ++v) {
              V g = B::zero();
              if (w >= 0) {
                const std::int64_t o = w * last.out + v * N;
                const M m = B::first_n(last.out - v * N);
                __builtin_prefetch(dyp + o + dy_ahead, 0, 3);
                // The reference's arithmetic: dx + scale * (0 + dy / divisor).
                const V share = B::div(B::load(dyp + o, m), B::load_or(divisors + o, m, one));
                over = B::mor(over, B::mand(m, B::greater(B::abs(share), most)));
                g = B::add(B::zero(), share);
              }
              V lo, hi;
              B::interleave(g, g, lo, hi);
              B::store(shares.data() + 2 * v * N, lo);
              B::store(shares.data() + 2 * v * N + N, hi);
            }
            // Shares that could overflow: this row and the item's later ones
            // are left to average_backward_wide (a row's gradient comes from
            // its one window row, so the rows before are final).
            if (B::any(over)) {
              redo.push_back({plane, r * last.in, ie * input_rows.per_axis0 * last.in});
              stopped = true;
              return;
            }
          }
          T* row = dxp + r * last.in;
          auto update_row = [&](std::int64_t i, M m) {
            __builtin_prefetch(row + i + ahead, 1, 3);
            B::store(row + i,
                     B::add(B::load(row + i, m), B::mul(scale, B::load(shares.data() + i))), m);
          };
          for_row_vectors(last.in, update_row);  // P6 backward 0.93x with it
        });
      }
    }
  }

  /// Whether every |v| of v[0..n) is at most `limit` (NaN passes: it
  /// propagates through the sums as it should).
  static bool terms_fit(const T* v, std::int64_t n, double limit) {
    const V most = B::broadcast(static_cast<C>(limit));
    M over = B::none();
    for_vectors(n, [&](std::int64_t i, M m) {
      over = B::mor(over, B::mand(m, B::greater(B::abs(B::load(v + i, m)), most)));
    });
    return !B::any(over);
  }

  /// AveragePool's gradient. Per item (a plane, a chunk [ib, ie) of axis-0
  /// inputs): G = dY / divisor for the windows the chunk's rows fall in
  /// (rows outside axis 0 zero), spread back along axis 0 (stride 1: one flat
  /// loop; otherwise each input row takes its windows' rows), then along the
  /// middle axes, then along the last axis into dX.
  /// Elements whose shares exceed plan.term_limit (their sums could
  /// overflow) are left untouched and added to `redo`, for
  /// average_backward_wide: an item's in the general path, all planes
  /// [begin, end) for the whole-plane loop (their dY, one per plane, is read
  /// first), the rest of an item on the fused geometry.
  static void average_backward(const Plan& plan, const T* dy, double scale, T* dx,
                               std::int64_t begin, std::int64_t end,
                               std::vector<GradientRedo>& redo) {
    const V scale_v = B::broadcast(static_cast<C>(scale));
    if (plan.whole_plane && !terms_fit(dy + begin, end - begin, plan.term_limit)) {
      for (std::int64_t plane = begin; plane < end; ++plane)
        redo.push_back({plane, 0, plan.in_plane});
      return;
    }
    if (plan.whole_plane) {
      // The reference's exact arithmetic: dx + scale * (0 + dy / divisor).
      // One flat loop over the planes [begin, end): planes are rarely whole
      // vectors (7 x 7 = 49), and a loop per plane would split most vectors
      // across cache lines and end every plane with a masked one.
      const auto divisor = static_cast<C>(plan.axes[0].divisor[0] * plan.inner_divisor[0]);
      auto share = [&](std::int64_t plane) {
        return B::broadcast(C(0) + static_cast<C>(dy[plane]) / divisor);
      };
      if constexpr (N == 1) {
        // One lane: a plain loop per plane (the flat loop's plane-boundary
        // test and prefetch per element cost 1.3x-1.7x the reference's time).
        for (std::int64_t plane = begin; plane < end; ++plane) {
          const V g = share(plane);
          T* d = dx + plane * plan.in_plane;
          for (std::int64_t i = 0; i < plan.in_plane; ++i) update(d + i, g, scale_v, 1);
        }
        return;
      }
      const std::int64_t stop = end * plan.in_plane;
      const std::int64_t ahead = 2048 / static_cast<std::int64_t>(sizeof(T));
      std::int64_t plane = begin, plane_end = (begin + 1) * plan.in_plane;
      V g = share(plane);
      for (std::int64_t i = begin * plan.in_plane; i < stop; i += N) {
        const std::int64_t n = std::min(N, stop - i);
        V lanes_g = g;
        while (plane_end < i + n) {  // lanes from plane_end on: the next plane's
          g = share(++plane);
          lanes_g = B::select(B::lanes(plane_end - i, N), g, lanes_g);
          plane_end += plan.in_plane;
        }
        __builtin_prefetch(dx + i + ahead, 1, 3);
        update(dx + i, lanes_g, scale_v, n);
      }
      return;
    }
    const std::vector<C, Aligned<C>> divisors = divisor_table(plan);
    if (!divisors.empty() && fused_backward_ok(plan)) {
      fused_average_backward(plan, divisors.data(), dy, scale_v, dx, begin, end, redo);
      return;
    }
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    const std::int64_t inner0 = plan.inner_out(), s0 = a0.stride;
    const std::int64_t u_first = first_tap(a0);
    const std::int64_t u_last = u_first + (a0.t_end - a0.t_first - 1) * a0.dilation;
    // Rows of G an item needs: windows (i - u) / s0 of its inputs i.
    auto g_rows = [&](std::int64_t ib, std::int64_t ie, std::int64_t& gb, std::int64_t& ge) {
      gb = floor_div(ib - u_last, s0);
      ge = floor_div(ie - 1 - u_first, s0) + 1;
    };
    std::int64_t most_g = 0;
    for (std::int64_t ib = 0; ib < a0.in; ib += plan.input_chunk) {
      std::int64_t gb = 0, ge = 0;
      g_rows(ib, std::min(a0.in, ib + plan.input_chunk), gb, ge);
      most_g = std::max(most_g, ge - gb);
    }
    std::vector<C, Aligned<C>> g(at(most_g * inner0));
    std::vector<C, Aligned<C>> e(at(plan.input_chunk * inner0));
    std::vector<C, Aligned<C>> zero_row(at(inner0), C(0));
    std::vector<C, Aligned<C>> gathered, spread, next;  // n >= 3: axes 1..n-2
    std::vector<C, Aligned<C>> row_divisors(divisors.empty() ? at(inner0) : 0);
    const bool flat0 = s0 == 1;
    const V most_v = B::broadcast(static_cast<C>(plan.term_limit));
    RowSpread rs(last, n == 2 && flat0 ? plan.input_chunk : 1);
    std::vector<const C*> rows_of(at(plan.input_chunk));
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);

    // Item `item`'s plane, axis-0 inputs [ib, ie) and windows [vb, ve) (G's rows [gb, ge)).
    auto item_rows = [&](std::int64_t item, std::int64_t& plane, std::int64_t& ib,
                         std::int64_t& ie, std::int64_t& gb, std::int64_t& ge, std::int64_t& vb,
                         std::int64_t& ve) {
      plane = item / plan.input_chunks;
      ib = item % plan.input_chunks * plan.input_chunk;
      ie = std::min(a0.in, ib + plan.input_chunk);
      g_rows(ib, ie, gb, ge);
      vb = std::max<std::int64_t>(0, gb);
      ve = std::min(a0.out, ge);
    };

    for (std::int64_t item = begin; item < end; ++item) {
      std::int64_t plane = 0, ib = 0, ie = 0, gb = 0, ge = 0, vb = 0, ve = 0;
      if (item + 1 < end) {  // the next item's dY
        item_rows(item + 1, plane, ib, ie, gb, ge, vb, ve);
        prefetch_row(dy + plane * plan.out_plane + vb * inner0, std::max<std::int64_t>(0, ve - vb) * inner0);
      }
      item_rows(item, plane, ib, ie, gb, ge, vb, ve);
      // G = 0 + dY / divisor over the windows [vb, ve), zero rows around. The
      // reference's sums of shares start from 0: a -0 share must not survive.
      std::fill(g.begin(), g.begin() + (vb - gb) * inner0, C(0));
      std::fill(g.begin() + std::max<std::int64_t>(0, ve - gb) * inner0,
                g.begin() + (ge - gb) * inner0, C(0));
      const T* dyp = dy + plane * plan.out_plane;
      // Shares above the limit: the item's sums could overflow (redo it).
      M over = B::none();
      auto check = [&](V share, M m) {
        over = B::mor(over, B::mand(m, B::greater(B::abs(share), most_v)));
      };
      if (!divisors.empty()) {
        const std::int64_t count = std::max<std::int64_t>(0, ve - vb) * inner0;
        C* to = g.data() + (vb - gb) * inner0;
        const C* d = divisors.data() + vb * inner0;
        for_vectors(count, [&](std::int64_t i, M m) {
          const V share = B::div(B::load(dyp + vb * inner0 + i, m), B::load(d + i, m));
          check(share, m);
          B::store(to + i, B::add(B::zero(), share), m);
        });
      } else {
        for (std::int64_t o = vb; o < ve; ++o) {
          divisor_row(plan, o, row_divisors.data());
          for (std::int64_t j = 0; j < inner0; j += N) {
            const M m = B::first_n(inner0 - j);
            const V share =
                B::div(B::load(dyp + o * inner0 + j, m), B::load(row_divisors.data() + j, m));
            check(share, m);
            B::store(g.data() + (o - gb) * inner0 + j, B::add(B::zero(), share), m);
          }
        }
      }
      if (B::any(over)) {
        const std::int64_t row = plan.in_plane / a0.in;  // inputs per axis-0 position
        redo.push_back({plane, ib * row, ie * row});
        continue;
      }
      // Spread along axis 0: rows_of[i - ib] gets input row i's sum.
      if (flat0) {
        const std::int64_t count = (ie - ib) * inner0;
        with_taps(a0.t_end - a0.t_first, [&](auto taps) {
          constexpr int K = decltype(taps)::value;
          const std::int64_t t_count = K > 0 ? K : a0.t_end - a0.t_first;
          // Input i takes window i - u: for f = (i - ib) * inner0 + j, G at f + (ib - u - gb) * inner0.
          const C* base = g.data() + (ib - u_first - gb) * inner0;
          const std::int64_t step = a0.dilation * inner0;
          for_vectors(count, [&](std::int64_t f, M m) {
            V acc = B::load(base + f, m);
            for (std::int64_t t = 1; t < t_count; ++t) acc = B::add(acc, B::load(base + f - t * step, m));
            B::store(e.data() + f, acc, m);
          });
        });
        for (std::int64_t i = ib; i < ie; ++i) rows_of[at(i - ib)] = e.data() + (i - ib) * inner0;
      } else {
        for (std::int64_t i = ib; i < ie; ++i) {
          const C* single = zero_row.data();
          std::int64_t found = 0;
          C* sum = e.data() + (i - ib) * inner0;
          // Its windows, latest first (the taps' order, as in the flat loop).
          for (std::int64_t w = a0.window_begin[at(i + 1)]; w-- > a0.window_begin[at(i)];) {
            const C* row = g.data() + (a0.windows[at(w)] - gb) * inner0;
            if (found == 0) {
              single = row;
            } else {
              const C* first_row = found == 1 ? single : sum;
              for (std::int64_t j = 0; j < inner0; j += N) {
                const M m = B::first_n(inner0 - j);
                B::store(sum + j, B::add(B::load(first_row + j, m), B::load(row + j, m)), m);
              }
            }
            ++found;
          }
          rows_of[at(i - ib)] = found > 1 ? sum : single;
        }
      }
      // Middle axes (3-D and up): spread one axis at a time.
      const C* cur = nullptr;
      if (n >= 3) {
        // The axis-0 rows contiguously (they may point into G).
        gathered.resize(at((ie - ib) * inner0));
        for (std::int64_t i = ib; i < ie; ++i)
          std::copy(rows_of[at(i - ib)], rows_of[at(i - ib)] + inner0,
                    gathered.begin() + (i - ib) * inner0);
        const C* src = gathered.data();
        std::int64_t inner = inner0;
        for (std::size_t k = 1; k + 1 < n; ++k) {
          const AxisPlan& a = plan.axes[k];
          inner /= a.out;
          const std::int64_t parts = (ie - ib) * in_product(plan, 1, k);
          next.resize(at(parts * a.in * inner));
          spread_rows(a, src, a.out, 0, parts, 0, a.in, inner, next.data());
          spread.swap(next);
          src = spread.data();
        }
        cur = src;
      }
      // Last axis, into dX.
      T* dxp = dx + plane * plan.in_plane + ib * middle_rows * last.in;
      const std::int64_t count = (ie - ib) * middle_rows * last.in;
      // The next item's dX, one line per vector updated here.
      const std::int64_t ahead = item + 1 < end ? count : 0;
      with_taps(rs.taps, [&](auto taps) {
        constexpr int K = decltype(taps)::value;
        if (n >= 3) {
          for (std::int64_t r = 0; r < (ie - ib) * middle_rows; ++r)
            spread_update<K>(rs, last, cur + r * last.out, dxp + r * last.in, 1, scale_v, ahead);
        } else if (rs.kind == Spread::Flat1) {
          spread_update<K>(rs, last, e.data(), dxp, ie - ib, scale_v, ahead);
        } else {
          for (std::int64_t i = ib; i < ie; ++i)
            spread_update<K>(rs, last, rows_of[at(i - ib)], dxp + (i - ib) * last.in, 1, scale_v,
                             ahead);
        }
      });
    }
  }

  /// Throws RunError unless every saved argmax of `plane` (am: its first)
  /// lies in [origin, origin + in_plane); kFlat: flat indices (origin the
  /// plane's first input), else offsets (origin 0).
  template <bool kFlat, class A>
  static void check_argmax(const Plan& plan, const A* am, std::int64_t plane) {
    const std::int64_t origin = kFlat ? plane * plan.in_plane : 0;
    // A branch-free min/max (vectorized by the compiler) first; the loop
    // that names the culprit runs only on failure. No subtraction: a
    // corrupt value near the type's limits must not overflow.
    A lo = std::numeric_limits<A>::max(), hi = std::numeric_limits<A>::min();
    for (std::int64_t o = 0; o < plan.out_plane; ++o) {
      lo = std::min(lo, am[o]);
      hi = std::max(hi, am[o]);
    }
    if (lo >= origin && hi < origin + plan.in_plane) return;
    for (std::int64_t o = 0; o < plan.out_plane; ++o)
      if (am[o] < origin || am[o] >= origin + plan.in_plane)
        throw_argmax_outside(am[o], plane * plan.out_plane + o, plane, plan.in_plane, !kFlat);
  }

  static void max_backward(const Plan& plan, SavedArgmax argmax, const T* dy, double scale, T* dx,
                           std::int64_t begin, std::int64_t end) {
    if (argmax.offsets)
      max_backward_planes(plan, argmax.offsets, dy, scale, dx, begin, end);
    else
      max_backward_planes(plan, argmax.flat, dy, scale, dx, begin, end);
  }

  /// Planes whose scatters MaxPool's backward interleaves: where windows
  /// overlap, consecutive outputs often share their argmax, and each such
  /// add waits for the one before it; another plane's adds fill that wait.
  static constexpr std::int64_t kScatterPlanes = 2;

  /// MaxPool's backward over planes [begin, end) from int64 flat indices or
  /// int32 offsets within each plane.
  template <class A>
  static void max_backward_planes(const Plan& plan, const A* argmax, const T* dy, double scale,
                                  T* dx, std::int64_t begin, std::int64_t end) {
    constexpr bool kFlat = std::is_same_v<A, std::int64_t>;
    const V scale_v = B::broadcast(static_cast<C>(scale));
    if constexpr (!kFlat && N > 1) {
      if (fused_backward_ok(plan))
        return fused_max_backward(plan, argmax, dy, scale_v, dx, begin, end);
    }
    // Zeroed once: the pass that adds a plane's sums to dX zeroes them again.
    std::vector<C> buffer(at(kScatterPlanes * plan.in_plane), C(0));
    for (std::int64_t first = begin; first < end; first += kScatterPlanes) {
      const std::int64_t count = std::min(kScatterPlanes, end - first);
      const A* am[kScatterPlanes];
      const T* dyp[kScatterPlanes];
      C* sums[kScatterPlanes];
      std::int64_t origin[kScatterPlanes];  // what each plane's argmax counts from
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t plane = first + k;
        sums[k] = buffer.data() + k * plan.in_plane;
        check_argmax<kFlat>(plan, argmax + plane * plan.out_plane, plane);
        am[k] = argmax + plane * plan.out_plane;
        origin[k] = kFlat ? plane * plan.in_plane : 0;
        dyp[k] = dy + plane * plan.out_plane;
      }
      const bool more = first + count < end;
      if (count == kScatterPlanes)
        scatter<kScatterPlanes>(plan, am, origin, dyp, sums, more);
      else
        scatter<1>(plan, am, origin, dyp, sums, more);
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t plane = first + k;
        T* dxp = dx + plane * plan.in_plane;
        // The next plane's dX, one line per vector updated here.
        const T* ahead = plane + 1 < end ? dxp + plan.in_plane : nullptr;
        for (std::int64_t i = 0; i < plan.in_plane; i += N) {
          if (ahead && i % (64 / sizeof(T)) < N) __builtin_prefetch(ahead + i, 1, 3);
          const M m = B::first_n(plan.in_plane - i);
          update(dxp + i, B::load(sums[k] + i, m), scale_v, std::min(N, plan.in_plane - i));
          B::store(sums[k] + i, B::zero(), m);
        }
      }
    }
  }

  /// MaxPool's backward on the fused geometry (fused_backward_ok) from int32
  /// offsets: no input is in two windows, so each dX row is updated once, in
  /// one pass, from its window row's dY and argmax, without the scatter's
  /// per-plane sums: input 2k + s of a row (s = 0, 1) takes 0 + dY[k] where
  /// output k's argmax is that input, else 0, and dX + scale * that is the
  /// scatter's arithmetic, so the result is bitwise the same. (A saved offset
  /// inside the plane but outside its window, which no forward writes, is
  /// ignored here where the scatter would add it; offsets outside the plane
  /// are refused as there.)
  static void fused_max_backward(const Plan& plan, const std::int32_t* argmax, const T* dy,
                                 V scale, T* dx, std::int64_t begin, std::int64_t end) {
    const std::int64_t width = plan.axes.back().in, outs = plan.axes.back().out;
    const std::int64_t in_plane = plan.in_plane, out_plane = plan.out_plane;
    // Per pair of dX vectors (inputs [2pN, 2pN + 2N)): the lanes of its N
    // outputs and of its two dX vectors, the same in every row.
    const std::int64_t pairs = (width + 2 * N - 1) / (2 * N);
    std::vector<MBox, Aligned<MBox>> lanes(at(3 * pairs));
    for (std::int64_t p = 0; p < pairs; ++p) {
      lanes[at(3 * p)].v = B::first_n(outs - p * N);
      lanes[at(3 * p + 1)].v = B::first_n(width - 2 * p * N);
      lanes[at(3 * p + 2)].v = B::first_n(width - 2 * p * N - N);
    }
    const I evens = B::iota(0, 2);  // lane j: the even input of output j
    const FusedInputRows input_rows(plan);
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const std::int32_t* am = argmax + plane * out_plane;
      check_argmax<false>(plan, am, plane);
      const T* dyp = dy + plane * out_plane;
      T* dxp = dx + plane * in_plane;
      const bool more = plane + 1 < end;
      input_rows.each(0, plan.axes[0].in, [&](std::int64_t r, std::int64_t w) {
        T* row = dxp + r * width;
        const std::int64_t window_row = std::max<std::int64_t>(w, 0) * outs;  // w < 0: unused
        const std::int32_t* am_row = am + window_row;
        const T* dy_row = dyp + window_row;
        const I row_evens = B::add_i(evens, r * width);
        for (std::int64_t p = 0; p < pairs; ++p) {
          const M out_m = lanes[at(3 * p)].v, lo_m = lanes[at(3 * p + 1)].v;
          V even = B::zero(), odd = B::zero();
          if (w >= 0) {
            if (more) {
              __builtin_prefetch(am_row + p * N + out_plane, 0, 3);
              __builtin_prefetch(dy_row + p * N + out_plane, 0, 3);
            }
            const I winner = B::load_i(am_row + p * N, out_m);
            const V share = B::add(B::zero(), B::load(dy_row + p * N, out_m));
            const I at_even = B::add_i(row_evens, 2 * p * N);
            even = B::select(B::equal_i(out_m, winner, at_even), share, B::zero());
            odd = B::select(B::equal_i(out_m, winner, B::add_i(at_even, 1)), share, B::zero());
          }
          V lo, hi;
          B::interleave(even, odd, lo, hi);
          T* at_dx = row + 2 * p * N;
          if (more) {
            __builtin_prefetch(at_dx + in_plane, 1, 3);
            __builtin_prefetch(at_dx + N + in_plane, 1, 3);
          }
          B::store(at_dx, B::add(B::load(at_dx, lo_m), B::mul(scale, lo)), lo_m);
          if (2 * p * N + N < width) {
            const M hi_m = lanes[at(3 * p + 2)].v;
            B::store(at_dx + N, B::add(B::load(at_dx + N, hi_m), B::mul(scale, hi)), hi_m);
          }
        }
      });
    }
  }

  /// sums[k][am[k][o] - origin[k]] += dy[k][o] for the outputs of K planes
  /// in output order, the planes interleaved (the argmax checked in range);
  /// `more`: prefetch the next K planes'.
  template <std::int64_t K, class A>
  static void scatter(const Plan& plan, const A* const* am, const std::int64_t* origin,
                      const T* const* dyp, C* const* sums, bool more) {
    const std::int64_t ahead = K * plan.out_plane;
    std::int64_t o = 0;
    for (; o + 8 <= plan.out_plane; o += 8) {
      if (more)
        for (std::int64_t k = 0; k < K; ++k) {
          if (o % (64 / sizeof(A)) == 0) __builtin_prefetch(am[k] + ahead + o, 0, 3);
          if (o % (64 / sizeof(T)) == 0) __builtin_prefetch(dyp[k] + ahead + o, 0, 3);
        }
      for (std::int64_t u = o; u < o + 8; ++u)
        for (std::int64_t k = 0; k < K; ++k)
          sums[k][am[k][u] - origin[k]] += static_cast<C>(dyp[k][u]);
    }
    for (; o < plan.out_plane; ++o)
      for (std::int64_t k = 0; k < K; ++k)
        sums[k][am[k][o] - origin[k]] += static_cast<C>(dyp[k][o]);
  }


};
