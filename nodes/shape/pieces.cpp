#include "nodes/shape/pieces.hpp"

#include <algorithm>
#include <cstring>

#include "core/dtype.hpp"
#include "core/parallel.hpp"

namespace nodeflow {
namespace {

// Below this many elements the copy stays on the calling thread.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 16;

// Calls f(p, whole_index, piece_index, count) for every maximal run of
// `count` consecutive elements the whole shares with piece p, splitting the
// whole's flat index range evenly across threads whatever the shapes (one
// long row or many short ones).
template <typename F> void for_each_run(const PieceLayout& layout, int threads, F&& f) {
  const std::int64_t total = layout.outer * layout.row;
  if (total == 0) return;
  if (total < kParallelElements) threads = 1;
  parallel_ranges(threads, total, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t r = begin / layout.row;
    std::int64_t col = begin % layout.row;
    // The piece holding column col: the last whose offset is <= col.
    std::size_t p = static_cast<std::size_t>(
        std::upper_bound(layout.offset.begin(), layout.offset.end(), col) - layout.offset.begin() - 1);
    for (std::int64_t i = begin; i < end;) {
      while (col >= layout.offset[p] + layout.width[p]) ++p;  // skips empty pieces too
      const std::int64_t in_piece = col - layout.offset[p];
      const std::int64_t count = std::min(layout.width[p] - in_piece, end - i);
      f(p, i, r * layout.width[p] + in_piece, count);
      i += count;
      col += count;
      if (col == layout.row) {
        col = 0;
        p = 0;
        ++r;
      }
    }
  });
}

}  // namespace

PieceLayout piece_layout(const Shape& whole, std::size_t axis, const std::vector<std::int64_t>& sizes) {
  PieceLayout layout;
  std::int64_t inner = 1;
  for (std::size_t a = 0; a < whole.size(); ++a) {
    if (a < axis) layout.outer *= whole[a];
    if (a > axis) inner *= whole[a];
  }
  for (const std::int64_t n : sizes) {
    layout.offset.push_back(layout.row);
    layout.width.push_back(n * inner);
    layout.row += n * inner;
  }
  return layout;
}

void copy_pieces(const PieceLayout& layout, const std::vector<Tensor>& pieces, const Tensor& whole,
                 PieceDirection direction, int threads) {
  const std::size_t size = dtype_size(whole.dtype());
  // Handles: the destination's buffer is written, the source's only read.
  Tensor w = whole;
  std::vector<Tensor> ps = pieces;
  for_each_run(layout, threads, [&](std::size_t p, std::int64_t wi, std::int64_t pi, std::int64_t n) {
    std::byte* whole_at = w.raw() + static_cast<std::size_t>(wi) * size;
    std::byte* piece_at = ps[p].raw() + static_cast<std::size_t>(pi) * size;
    if (direction == PieceDirection::PiecesToWhole)
      std::memcpy(whole_at, piece_at, static_cast<std::size_t>(n) * size);
    else
      std::memcpy(piece_at, whole_at, static_cast<std::size_t>(n) * size);
  });
}

void add_pieces(const PieceLayout& layout, const std::vector<Tensor>& pieces, const Tensor& whole,
                PieceDirection direction, const std::vector<double>& piece_scales, int threads,
                std::span<const std::uint8_t> overwrite) {
  Tensor w = whole;
  std::vector<Tensor> ps = pieces;
  visit_float_dtype(whole.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = accumulator_t<T>;
    for_each_run(layout, threads, [&](std::size_t p, std::int64_t wi, std::int64_t pi, std::int64_t n) {
      if (ps[p].empty()) return;
      T* whole_at = w.data<T>() + wi;
      T* piece_at = ps[p].data<T>() + pi;
      T* dst = direction == PieceDirection::PiecesToWhole ? whole_at : piece_at;
      const T* src = direction == PieceDirection::PiecesToWhole ? piece_at : whole_at;
      const auto k = static_cast<A>(piece_scales[p]);
      if (direction == PieceDirection::WholeToPieces && p < overwrite.size() && overwrite[p]) {
        if (k == A(1))
          std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
        else
          for (std::int64_t j = 0; j < n; ++j) dst[j] = static_cast<T>(k * static_cast<A>(src[j]));
        return;
      }
      for (std::int64_t j = 0; j < n; ++j) dst[j] = static_cast<T>(static_cast<A>(dst[j]) + k * static_cast<A>(src[j]));
    });
  });
}

}  // namespace nodeflow
