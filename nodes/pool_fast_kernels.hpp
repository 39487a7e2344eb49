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
// Backward: MaxPool scatters dY into a per-plane sum that is added to dX in
// one pass (the reference's order, so the result is bitwise the same);
// AveragePool spreads dY / divisor back from axis 0 to the last axis, whose
// spread is fused with the update of dX.
//
// Requires before inclusion: <algorithm>, <cstdint>, <cmath>, <limits>,
// <memory>, <new>, <string>, <type_traits>, <vector>, core/errors.hpp and nodes/pool_fast_plan.hpp.

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
  template <typename U>
  struct Aligned {
    using value_type = U;
    Aligned() = default;
    template <typename W>
    explicit Aligned(const Aligned<W>&) {}
    U* allocate(std::size_t n) {
      return static_cast<U*>(::operator new(n * sizeof(U), std::align_val_t(64)));
    }
    void deallocate(U* p, std::size_t) { ::operator delete(p, std::align_val_t(64)); }
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

    RowInput(const AxisPlan& a, C neutral_value)
        : in(a.in), out(a.out), stride(a.stride), taps(a.t_end - a.t_first),
          vectors((a.out + N - 1) / N), neutral(neutral_value) {
      for (std::int64_t t = a.t_first; t < a.t_end; ++t) {
        tap_pos.push_back(t * a.dilation - a.pad_begin);
        tap_idx.push_back({B::iota(tap_pos.back(), a.stride)});
      }
      if (N > 1 && a.stride == 1) {
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
        shifts.push_back(u >= 0 ? u / a.stride : -((-u + a.stride - 1) / a.stride));
      const auto [low, high] = std::minmax_element(shifts.begin(), shifts.end());
      lead = -std::min<std::int64_t>(0, *low);
      span = lead + vectors * N + std::max<std::int64_t>(0, *high) + N;
      for (std::int64_t q = 0; q < a.stride; ++q)
        length.push_back(q < a.in ? (a.in - q + a.stride - 1) / a.stride : 0);
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

    /// Direct1: the lanes of the row that hold a NaN (kNaN) or lowest() (kLowest).
    template <bool kNaN, bool kLowest>
    M check_row(const T* x) const {
      M flags = B::none();
      for (std::int64_t m = 0; m < in; m += 2 * N) {
        const M ma = B::first_n(in - m), mb = B::first_n(in - m - N);
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

  /// Window sums of one input row (transformed for LpPool) into `out`.
  template <int K, Tr tr>
  static void row_sum(RowInput& row, const T* x, C* out, std::int64_t p) {
    const std::int64_t taps = K > 0 ? K : row.taps;
    const M tail = B::first_n(row.out % N == 0 ? N : row.out % N);
    auto put = [&](std::int64_t v, V acc) {
      B::store(out + v * N, acc, v + 1 < row.vectors ? B::first_n(N) : tail);
    };
    if (row.kind == RowRead::Direct1) {
      const MBox* mk = row.masks.data();
      for (std::int64_t v = 0; v < row.vectors; ++v, mk += taps) {
        V acc = transform<tr>(B::load(x + v * N + row.tap_pos[0], mk[0].v), p);
        for (std::int64_t k = 1; k < taps; ++k)
          acc = B::add(acc, transform<tr>(B::load(x + v * N + row.tap_pos[at(k)], mk[k].v), p));
        put(v, acc);
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
          row.template pair<false, false>(x, v, B::zero(), even, odd, unused);
          even = transform<tr>(even, p);
          odd = transform<tr>(odd, p);
          V acc = B::add(even, odd);
          if (taps == 3) acc = B::add(B::shift_in(odd, odd_before), acc);
          odd_before = odd;
          put(v, acc);
        }
      }
    } else {
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

  /// Window maxima of one input row (and with kIdx their plane offsets;
  /// `row_base` is the row's offset in its plane). Takes a tap when it is
  /// greater (ordered): MaxPool's order when the row holds no NaN (a later
  /// NaN would have to win) and, with the argmax, no lowest() (the index must
  /// be a real element's, not the padding's). Returns the lanes that saw
  /// either; the caller redoes such rows in the exact order.
  template <int K, bool kIdx>
  static M row_max(RowInput& row, const T* x, std::int64_t row_base, C* out,
                   std::int32_t* out_idx) {
    const std::int64_t taps = K > 0 ? K : row.taps;
    const M tail = B::first_n(row.out % N == 0 ? N : row.out % N);
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
      const M m = v + 1 < row.vectors ? B::first_n(N) : tail;
      B::store(out + v * N, best, m);
      if constexpr (kIdx) B::store_i(out_idx + v * N, best_idx, m);
    };
    const V floor = B::broadcast(row.neutral);
    if (row.kind == RowRead::Direct1) {
      flags = row.template check_row<true, kIdx>(x);
      const MBox* mk = row.masks.data();
      for (std::int64_t v = 0; v < row.vectors; ++v, mk += taps) {
        first(v, B::load_or(x + v * N + row.tap_pos[0], mk[0].v, floor));
        for (std::int64_t k = 1; k < taps; ++k)
          next(v, k, B::load_or(x + v * N + row.tap_pos[at(k)], mk[k].v, floor));
        put(v);
      }
    } else if (row.kind == RowRead::Direct2) {
      if constexpr (N > 1) {
        V even, odd, odd_before = floor;
        if (taps == 3) row.template pair<true, kIdx>(x, -1, floor, even, odd_before, flags);
        for (std::int64_t v = 0; v < row.vectors; ++v) {
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
      }
    } else {
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

  // ---- Forward, other axes: rows of `inner` elements, laid out [P][rows][inner]
  // with row r holding input position r + row0; results [P][o - ob][inner].

  struct SumToBuffer {
    C* out;
    void row(std::int64_t) {}
    void put(std::int64_t at_out, V v, M m, std::int64_t) { B::store(out + at_out, v, m); }
  };

  /// Writes the finished windows: the average (divisor rows cached per axis-0
  /// divisor) or the Lp root.
  struct SumToOutput {
    const Plan& plan;
    T* y;
    C* divisors;  ///< inner_out() elements
    std::int64_t cached = -1;
    void row(std::int64_t o) {
      if (plan.reduce != Reduce::Average) return;
      const std::int64_t d0 = plan.axes[0].divisor[at(o)];
      if (d0 == cached) return;
      cached = d0;
      for (std::size_t j = 0; j < plan.inner_divisor.size(); ++j)
        divisors[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
    }
    void put(std::int64_t at_out, V v, M m, std::int64_t j) {
      V r;
      if (plan.reduce == Reduce::Average)
        r = B::div(v, B::load(divisors + j, m));
      else if (plan.p == 1)
        r = v;
      else if (plan.p == 2)
        r = B::sqrt(v);
      else
        r = root(v);
      B::store(y + at_out, r, m);
    }
    V root(V v) const {
      if constexpr (B::kHasPow)
        return B::root(v, plan.p);
      else
        return v;  // never reached: exponents above 2 run on the portable backend
    }
  };

  template <int K, class Sink>
  static void outer_sum(const AxisPlan& a, const C* in, std::int64_t parts, std::int64_t rows,
                        std::int64_t row0, std::int64_t ob, std::int64_t oe, std::int64_t inner,
                        Sink& sink) {
    const M tail = B::first_n(inner % N == 0 ? N : inner % N);
    const std::int64_t step = a.dilation * inner;
    for (std::int64_t part = 0; part < parts; ++part)
      for (std::int64_t o = ob; o < oe; ++o) {
        sink.row(o);
        const std::int64_t taps = a.tap_hi[at(o)] - a.tap_lo[at(o)];
        const C* src = in + (part * rows + a.position(o, a.tap_lo[at(o)]) - row0) * inner;
        const std::int64_t dst = (part * (oe - ob) + o - ob) * inner;
        for (std::int64_t j = 0; j < inner; j += N) {
          const M m = j + N <= inner ? B::first_n(N) : tail;
          V acc = B::load(src + j, m);
          if (K > 0 && taps == K) {
            for (int t = 1; t < K; ++t) acc = B::add(acc, B::load(src + t * step + j, m));
          } else {
            for (std::int64_t t = 1; t < taps; ++t) acc = B::add(acc, B::load(src + t * step + j, m));
          }
          sink.put(dst + j, acc, m, j);
        }
      }
  }

  /// kExact: MaxPool's order (beats); otherwise greater-than, exact when the
  /// rows hold no NaN and, with the argmax, no lowest() (see row_max).
  template <int K, bool kIdx, bool kFinal, bool kExact>
  static void outer_max(const AxisPlan& a, const C* in, const std::int32_t* in_idx,
                        std::int64_t parts, std::int64_t rows, std::int64_t row0, std::int64_t ob,
                        std::int64_t oe, std::int64_t inner, C* out, std::int32_t* out_idx,
                        T* y, std::int64_t* argmax, std::int64_t plane_base) {
    const M tail = B::first_n(inner % N == 0 ? N : inner % N);
    const std::int64_t step = a.dilation * inner;
    for (std::int64_t part = 0; part < parts; ++part)
      for (std::int64_t o = ob; o < oe; ++o) {
        const std::int64_t taps = a.tap_hi[at(o)] - a.tap_lo[at(o)];
        const std::int64_t first = (part * rows + a.position(o, a.tap_lo[at(o)]) - row0) * inner;
        const std::int64_t dst = (part * (oe - ob) + o - ob) * inner;
        const std::int64_t unrolled = K > 0 && taps == K ? K : taps;
        for (std::int64_t j = 0; j < inner; j += N) {
          const M m = j + N <= inner ? B::first_n(N) : tail;
          const C* src = in + first + j;
          const std::int32_t* src_idx = kIdx ? in_idx + first + j : nullptr;
          V best = B::load(src, m);
          I best_idx{};
          if constexpr (kIdx) best_idx = B::load_i(src_idx, m);
          for (std::int64_t t = 1; t < unrolled; ++t) {
            const V c = B::load(src + t * step, m);
            if constexpr (kIdx || kExact) {
              const M take = kExact ? B::beats(c, best) : B::greater(c, best);
              best = B::select(take, c, best);
              if constexpr (kIdx)
                best_idx = B::select_i(take, B::load_i(src_idx + t * step, m), best_idx);
            } else {
              best = B::max(c, best);
            }
          }
          if constexpr (kFinal) {
            B::store(y + dst + j, best, m);
            if constexpr (kIdx) B::store_index64(argmax + dst + j, best_idx, plane_base, m);
          } else {
            B::store(out + dst + j, best, m);
            if constexpr (kIdx) B::store_i(out_idx + dst + j, best_idx, m);
          }
        }
      }
  }

  // ---- Forward over work items.

  /// Asks for a row of a later item ahead of time (about one item ahead):
  /// the hardware prefetchers stop at page boundaries, and an item's rows
  /// span many pages.
  static void prefetch_row(const T* row, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += 64 / static_cast<std::int64_t>(sizeof(T)))
      __builtin_prefetch(row + i, 0, 3);
  }

  static std::int64_t in_product(const Plan& plan, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t k = from; k < to; ++k) n *= plan.axes[k].in;
    return n;
  }

  template <Tr tr>
  static void forward_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                          std::int64_t end) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    std::vector<C, Aligned<C>> buf_a(plan.forward_scratch), buf_b(plan.forward_scratch);
    std::vector<C, Aligned<C>> divisors(at(plan.inner_out()));
    SumToOutput final_sink{plan, nullptr, divisors.data()};
    RowInput row(last, C(0));
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t plane = item / plan.chunks;
      const std::int64_t ob = item % plan.chunks * plan.chunk;
      const std::int64_t oe = std::min(a0.out, ob + plan.chunk);
      std::int64_t r0 = 0, r1 = 0;
      axis_slab(a0, ob, oe, r0, r1);
      const T* xp = x + plane * plan.in_plane + r0 * middle_rows * last.in;
      const std::int64_t rows = (r1 - r0) * middle_rows;
      with_taps(row.taps, [&](auto taps) {
        for (std::int64_t r = 0; r < rows; ++r) {
          prefetch_row(xp + r * last.in + plan.in_plane / plan.chunks, last.in);
          row_sum<decltype(taps)::value, tr>(row, xp + r * last.in, buf_a.data() + r * last.out,
                                             plan.p);
        }
      });
      C* cur = buf_a.data();
      C* next = buf_b.data();
      std::int64_t inner = last.out;
      for (std::size_t k = n - 1; k-- > 1;) {
        const AxisPlan& a = plan.axes[k];
        SumToBuffer sink{next};
        with_taps(a.kernel, [&](auto taps) {
          outer_sum<decltype(taps)::value>(a, cur, (r1 - r0) * in_product(plan, 1, k), a.in, 0, 0,
                                           a.out, inner, sink);
        });
        inner *= a.out;
        std::swap(cur, next);
      }
      final_sink.y = y + plane * plan.out_plane + ob * inner;  // results are chunk-relative
      with_taps(a0.kernel, [&](auto taps) {
        outer_sum<decltype(taps)::value>(a0, cur, 1, r1 - r0, r0, ob, oe, inner, final_sink);
      });
    }
  }

  /// One forward item. kExact (with `program`) works in MaxPool's exact
  /// order; otherwise returns false, having written nothing final, when the
  /// fast order may differ from it (a NaN in the input, or with the argmax a
  /// lowest()), and the caller runs the item again with kExact.
  template <bool kIdx, bool kExact>
  static bool forward_max_item(const Plan& plan, const T* x, T* y, std::int64_t* argmax,
                               std::int64_t item, RowInput& row, const RowProgram* program,
                               std::vector<C, Aligned<C>>& buf_a, std::vector<C, Aligned<C>>& buf_b,
                               std::vector<std::int32_t>& idx_a, std::vector<std::int32_t>& idx_b) {
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);
    const std::int64_t plane = item / plan.chunks;
    const std::int64_t ob = item % plan.chunks * plan.chunk;
    const std::int64_t oe = std::min(a0.out, ob + plan.chunk);
    std::int64_t r0 = 0, r1 = 0;
    axis_slab(a0, ob, oe, r0, r1);
    const T* xp = x + plane * plan.in_plane;
    const std::int64_t rows = (r1 - r0) * middle_rows;
    M flags = B::none();
    with_taps(row.taps, [&](auto taps) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t row_base = (r0 * middle_rows + r) * last.in;
        std::int32_t* row_idx = kIdx ? idx_a.data() + r * last.out : nullptr;
        if constexpr (kExact) {
          row_max_exact<kIdx>(*program, xp + row_base, row_base, buf_a.data() + r * last.out,
                              row_idx);
        } else {
          prefetch_row(xp + row_base + plan.in_plane / plan.chunks, last.in);
          flags = B::mor(flags, row_max<decltype(taps)::value, kIdx>(
                                    row, xp + row_base, row_base, buf_a.data() + r * last.out,
                                    row_idx));
        }
      }
    });
    if (!kExact && B::any(flags)) return false;
    C* cur = buf_a.data();
    C* next = buf_b.data();
    std::int32_t* cur_idx = idx_a.data();
    std::int32_t* next_idx = idx_b.data();
    std::int64_t inner = last.out;
    for (std::size_t k = n - 1; k-- > 1;) {
      const AxisPlan& a = plan.axes[k];
      with_taps(a.kernel, [&](auto taps) {
        outer_max<decltype(taps)::value, kIdx, false, kExact>(
            a, cur, cur_idx, (r1 - r0) * in_product(plan, 1, k), a.in, 0, 0, a.out, inner, next,
            next_idx, nullptr, nullptr, 0);
      });
      inner *= a.out;
      std::swap(cur, next);
      std::swap(cur_idx, next_idx);
    }
    const std::int64_t out_base = plane * plan.out_plane + ob * inner;  // chunk-relative
    with_taps(a0.kernel, [&](auto taps) {
      outer_max<decltype(taps)::value, kIdx, true, kExact>(
          a0, cur, cur_idx, 1, r1 - r0, r0, ob, oe, inner, nullptr, nullptr, y + out_base,
          kIdx ? argmax + out_base : nullptr, plane * plan.in_plane);
    });
    return true;
  }

  template <bool kIdx>
  static void forward_max(const Plan& plan, const T* x, T* y, std::int64_t* argmax,
                          std::int64_t begin, std::int64_t end) {
    const AxisPlan& last = plan.axes.back();
    std::vector<C, Aligned<C>> buf_a(plan.forward_scratch), buf_b(plan.forward_scratch);
    std::vector<std::int32_t> idx_a(kIdx ? plan.forward_scratch : 0),
        idx_b(kIdx ? plan.forward_scratch : 0);
    RowInput row(last, lowest());
    std::unique_ptr<RowProgram> program;  // built the first time an item needs it
    for (std::int64_t item = begin; item < end; ++item) {
      if (forward_max_item<kIdx, false>(plan, x, y, argmax, item, row, nullptr, buf_a, buf_b,
                                        idx_a, idx_b))
        continue;
      if (!program) program = std::make_unique<RowProgram>(last);
      forward_max_item<kIdx, true>(plan, x, y, argmax, item, row, program.get(), buf_a, buf_b,
                                   idx_a, idx_b);
    }
  }

  // ---- Forward, one window over the whole plane (global pooling).

  template <Tr tr>
  static void whole_plane_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                              std::int64_t end) {
    const std::int64_t size = plan.in_plane;
    const auto divisor = plan.reduce == Reduce::Average
                             ? static_cast<C>(plan.axes[0].divisor[0] * plan.inner_divisor[0])
                             : C(1);
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * size;
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
      C r;
      if (plan.reduce == Reduce::Average)
        r = sum / divisor;
      else if (plan.p == 1)
        r = sum;
      else if (plan.p == 2)
        r = std::sqrt(sum);
      else
        r = static_cast<C>(std::pow(sum, C(1) / static_cast<C>(plan.p)));
      y[plane] = static_cast<T>(r);
    }
  }

  template <bool kIdx>
  static void whole_plane_max(const Plan& plan, const T* x, T* y, std::int64_t* argmax,
                              std::int64_t begin, std::int64_t end) {
    const std::int64_t size = plan.in_plane;
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * size;
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
      if constexpr (kIdx) argmax[plane] = plane * size + positions[w];
    }
  }

  static void forward(const Plan& plan, const T* x, T* y, std::int64_t* argmax,
                      std::int64_t begin, std::int64_t end) {
    if (plan.reduce == Reduce::Max) {
      if (plan.whole_plane) {
        if (argmax)
          whole_plane_max<true>(plan, x, y, argmax, begin, end);
        else
          whole_plane_max<false>(plan, x, y, nullptr, begin, end);
      } else if (argmax) {
        forward_max<true>(plan, x, y, argmax, begin, end);
      } else {
        forward_max<false>(plan, x, y, nullptr, begin, end);
      }
      return;
    }
    // Sums need a float accumulator (the portable MaxPool backends compare in T).
    if constexpr (std::is_floating_point_v<C>) {
      if (plan.reduce == Reduce::Average)
        sum_forward<Tr::Identity>(plan, x, y, begin, end);
      else if (plan.p == 1)
        sum_forward<Tr::Abs>(plan, x, y, begin, end);
      else if (plan.p == 2)
        sum_forward<Tr::Square>(plan, x, y, begin, end);
      else if constexpr (B::kHasPow)
        sum_forward<Tr::Pow>(plan, x, y, begin, end);
    }
  }

  template <Tr tr>
  static void sum_forward(const Plan& plan, const T* x, T* y, std::int64_t begin,
                          std::int64_t end) {
    if (plan.whole_plane)
      whole_plane_sum<tr>(plan, x, y, begin, end);
    else
      forward_sum<tr>(plan, x, y, begin, end);
  }

  // ---- Backward.

  /// dx[0..n) = dx + scale * g (lanes past n untouched).
  static void update(T* dx, V g, V scale, std::int64_t n) {
    const M m = B::first_n(n);
    B::store(dx, B::add(B::load(dx, m), B::mul(scale, g)), m);
  }

  /// Spreads one row of per-window gradients `g` (a.out values) back over the
  /// a.in positions of its input row and adds scale * that to `dx`.
  static void row_spread_update(const AxisPlan& a, const C* g, T* dx, V scale) {
    if (N > 1 && a.stride == 1) {
      for (std::int64_t i0 = 0; i0 < a.in; i0 += N) {
        V acc = B::zero();
        for (std::int64_t t = a.t_first; t < a.t_end; ++t) {
          const std::int64_t off = i0 + a.pad_begin - t * a.dilation;  // window of lane 0
          const std::int64_t lo = std::max<std::int64_t>(0, -off);
          const std::int64_t hi = std::min(N, a.out - off);
          if (lo < hi) acc = B::add(acc, B::load(g + off, B::lanes(lo, hi)));
        }
        update(dx + i0, acc, scale, std::min(N, a.in - i0));
      }
      return;
    }
    if constexpr (N > 1) {
      if (a.stride == 2) {
        for (std::int64_t m0 = 0; 2 * m0 < a.in; m0 += N) {
          V even = B::zero(), odd = B::zero();
          for (std::int64_t t = a.t_first; t < a.t_end; ++t) {
            // Input 2m + parity sits in window o when 2o = 2m + parity + pad_begin - t*d.
            const std::int64_t q = a.pad_begin - t * a.dilation;
            const std::int64_t parity = q % 2 == 0 ? 0 : 1;
            const std::int64_t off = m0 + (q + parity) / 2;
            const std::int64_t lo = std::max<std::int64_t>(0, -off);
            const std::int64_t hi = std::min(N, a.out - off);
            if (lo >= hi) continue;
            const V v = B::load(g + off, B::lanes(lo, hi));
            if (parity == 0)
              even = B::add(even, v);
            else
              odd = B::add(odd, v);
          }
          V lo_half, hi_half;
          B::interleave(even, odd, lo_half, hi_half);
          update(dx + 2 * m0, lo_half, scale, std::min(N, a.in - 2 * m0));
          if (2 * m0 + N < a.in)
            update(dx + 2 * m0 + N, hi_half, scale, std::min(N, a.in - 2 * m0 - N));
        }
        return;
      }
    }
    const C s = first_lane(scale);
    for (std::int64_t i = 0; i < a.in; ++i) {
      C acc = C(0);
      for (std::int64_t w = a.window_begin[at(i)]; w < a.window_begin[at(i + 1)]; ++w)
        acc += g[at(a.windows[at(w)])];
      dx[i] = static_cast<T>(static_cast<C>(dx[i]) + s * acc);
    }
  }

  static C first_lane(V v) {
    C lanes[N];
    B::store(lanes, v, B::first_n(N));
    return lanes[0];
  }

  /// Rows [P][o][inner] of per-window sums into rows [P][i - ib][inner] of
  /// per-position sums: row i gets the sum of the rows of the windows holding
  /// position i (`o_offset` is the input row of window 0... of in's first row).
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

  static void average_backward(const Plan& plan, const T* dy, double scale, T* dx,
                               std::int64_t begin, std::int64_t end) {
    const V scale_v = B::broadcast(static_cast<C>(scale));
    if (plan.whole_plane) {
      // The reference's exact arithmetic: dx + scale * (0 + dy / divisor).
      const auto divisor = static_cast<C>(plan.axes[0].divisor[0] * plan.inner_divisor[0]);
      for (std::int64_t plane = begin; plane < end; ++plane) {
        const C share = C(0) + static_cast<C>(dy[plane]) / divisor;
        const V g = B::broadcast(share);
        T* dxp = dx + plane * plan.in_plane;
        for (std::int64_t i = 0; i < plan.in_plane; i += N)
          update(dxp + i, g, scale_v, std::min(N, plan.in_plane - i));
      }
      return;
    }
    const std::size_t n = plan.axes.size();
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes[n - 1];
    std::vector<C> buf_a(plan.backward_scratch), buf_b(plan.backward_scratch);
    std::vector<C> divisors(at(plan.inner_out()));
    std::int64_t cached = -1;
    const std::int64_t inner_out = plan.inner_out();
    const std::int64_t middle_rows = in_product(plan, 1, n - 1);
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t plane = item / plan.input_chunks;
      const std::int64_t ib = item % plan.input_chunks * plan.input_chunk;
      const std::int64_t ie = std::min(a0.in, ib + plan.input_chunk);
      // Windows of axis 0 touching the chunk (with dilations, not monotonic in i).
      std::int64_t ob = a0.out, oe = 0;
      for (std::int64_t w = a0.window_begin[at(ib)]; w < a0.window_begin[at(ie)]; ++w) {
        ob = std::min(ob, a0.windows[at(w)]);
        oe = std::max(oe, a0.windows[at(w)] + 1);
      }
      const T* dyp = dy + plane * plan.out_plane;
      for (std::int64_t o = ob; o < oe; ++o) {
        const std::int64_t d0 = a0.divisor[at(o)];
        if (d0 != cached) {
          cached = d0;
          for (std::size_t j = 0; j < divisors.size(); ++j)
            divisors[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
        }
        for (std::int64_t j = 0; j < inner_out; j += N) {
          const M m = B::first_n(inner_out - j);
          B::store(buf_a.data() + (o - ob) * inner_out + j,
                   B::div(B::load(dyp + o * inner_out + j, m), B::load(divisors.data() + j, m)),
                   m);
        }
      }
      spread_rows(a0, buf_a.data(), 0, ob, 1, ib, ie, inner_out, buf_b.data());
      C* cur = buf_b.data();
      C* next = buf_a.data();
      std::int64_t inner = inner_out;
      for (std::size_t k = 1; k + 1 < n; ++k) {
        const AxisPlan& a = plan.axes[k];
        inner /= a.out;
        spread_rows(a, cur, a.out, 0, (ie - ib) * in_product(plan, 1, k), 0, a.in, inner, next);
        std::swap(cur, next);
      }
      T* dxp = dx + plane * plan.in_plane + ib * middle_rows * last.in;
      const std::int64_t rows = (ie - ib) * middle_rows;
      for (std::int64_t r = 0; r < rows; ++r)
        row_spread_update(last, cur + r * last.out, dxp + r * last.in, scale_v);
    }
  }

  static void max_backward(const Plan& plan, const std::int64_t* argmax, const T* dy,
                           double scale, T* dx, std::int64_t begin, std::int64_t end) {
    const V scale_v = B::broadcast(static_cast<C>(scale));
    std::vector<C> sums(at(plan.in_plane));
    for (std::int64_t plane = begin; plane < end; ++plane) {
      for (std::int64_t i = 0; i < plan.in_plane; i += N)
        B::store(sums.data() + i, B::zero(), B::first_n(plan.in_plane - i));
      const std::int64_t base = plane * plan.in_plane;
      const std::int64_t* am = argmax + plane * plan.out_plane;
      const T* dyp = dy + plane * plan.out_plane;
      for (std::int64_t o = 0; o < plan.out_plane; ++o) {
        const std::int64_t i = am[o] - base;
        if (i < 0 || i >= plan.in_plane)
          throw RunError("saved argmax " + std::to_string(am[o]) + " of output " +
                         std::to_string(plane * plan.out_plane + o) + " is outside its plane [" +
                         std::to_string(base) + ", " + std::to_string(base + plan.in_plane) + ")");
        sums[at(i)] += static_cast<C>(dyp[o]);
      }
      T* dxp = dx + base;
      for (std::int64_t i = 0; i < plan.in_plane; i += N) {
        const M m = B::first_n(plan.in_plane - i);
        update(dxp + i, B::load(sums.data() + i, m), scale_v, std::min(N, plan.in_plane - i));
      }
    }
  }
};
