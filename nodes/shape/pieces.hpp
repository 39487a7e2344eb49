#pragma once
// Concat and Split move the same data in opposite directions: a "whole"
// tensor whose axis `axis` is cut into consecutive pieces. Viewed as
// [outer, row], every row of the whole holds one row of each piece in
// order, so each direction is a set of contiguous block copies, and the
// gradient of one direction is the other one, accumulated (docs/operators.md,
// "Gradient conventions": the exact inverse movement).
#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.hpp"

namespace nodeflow {

struct PieceLayout {
  std::int64_t outer = 1;            ///< product of the whole's dims before the axis
  std::vector<std::int64_t> width;   ///< per piece: its length along the axis times the inner dims
  std::vector<std::int64_t> offset;  ///< per piece: where its columns start in a row of the whole
  std::int64_t row = 0;              ///< the sum of the widths
};

/// The layout of a whole of (static) shape `whole` cut along `axis` into
/// pieces of lengths `sizes` (they add up to whole[axis]).
PieceLayout piece_layout(const Shape& whole, std::size_t axis, const std::vector<std::int64_t>& sizes);

enum class PieceDirection { PiecesToWhole, WholeToPieces };

/// Copies the pieces into the whole (Concat) or the whole into the pieces
/// (Split); all tensors have one dtype, any dtype, and the destinations are
/// allocated. `pieces` and `whole` are handles, only the destination side is written.
void copy_pieces(const PieceLayout& layout, const std::vector<Tensor>& pieces, const Tensor& whole,
                 PieceDirection direction, int threads);

/// Gradients (float dtypes, one dtype): the destination side += scale * the
/// source side, moving in `direction`. An empty piece is skipped: as a
/// source it is a zero gradient, as a destination one not wanted.
/// `piece_scales` holds one factor per piece (the destination's factor when
/// the pieces are destinations; with pieces as sources, the whole's factor
/// repeated). With pieces as destinations, a piece whose `overwrite` entry
/// is non-zero is assigned (=) rather than added into: its buffer may hold
/// anything before (BackwardContext::overwrite_inputs).
void add_pieces(const PieceLayout& layout, const std::vector<Tensor>& pieces, const Tensor& whole,
                PieceDirection direction, const std::vector<double>& piece_scales, int threads,
                std::span<const std::uint8_t> overwrite = {});

}  // namespace nodeflow
