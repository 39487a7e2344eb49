#pragma once
// Forward, last axis: how a window row reads its input row (RowRead), worked
// out once per call in a RowInput.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// Masks [vector][k] over a run of rows of `in` elements: lane l of vector
/// v is column (v*N + l) % in of its row, set when column + shift[k] is
/// inside the row. Clearing each row's edge columns costs rows x taps x
/// |shift|, not a division per lane, vector and tap (which was 9% of P7's
/// forward).
template <class B>
inline auto PoolKernels<B>::run_masks(std::int64_t in, std::int64_t vectors,
                                      const std::vector<std::int64_t>& shift)
    -> std::vector<MBox, Aligned<MBox>> {
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

template <class B>
struct PoolKernels<B>::RowInput {
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
  template <SumTerm tr, bool kNaN, bool kLowest>
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

}  // namespace nodeflow::fast
