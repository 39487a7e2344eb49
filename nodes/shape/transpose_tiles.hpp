#pragma once
// Register tiles for Transpose's 4-byte elements (float32, int32, uint32):
// one block of a 2-D transpose in 16x16 AVX-512 tiles. The portable loop of
// nodes/shape/transpose.cpp does the same copy element by element, which
// costs one load and one store per element, which left a large NCHW -> NHWC
// transpose at several times the time its bytes take to move (bench/op_bench's
// transpose rows against their bandwidth probe).
#include <cstdint>

namespace nodeflow::transpose_tiles {

/// True when this CPU runs the tile kernels (AVX-512F); otherwise callers use
/// their portable loop.
bool available();

/// dst[i * dst_ld + j] = src[j * src_ld + i] for i < rows, j < cols: 4-byte
/// elements moved as bits. Reads walk 16 source rows at a time from start to
/// end; `stream` writes with non-temporal stores, for an output too large to
/// stay in cache, where a plain store would first read every line it writes.
void copy(const std::uint32_t* src, std::int64_t src_ld, std::uint32_t* dst, std::int64_t dst_ld,
          std::int64_t rows, std::int64_t cols, bool stream);

/// dst[i * dst_ld + j] += scale * src[j * src_ld + i] in float32, each sum
/// rounded as the portable loop rounds it (a product, then a sum: never a fused
/// multiply-add), so both give the same bits. dst is read and written 16 rows
/// at a time from start to end; the source rows ahead are prefetched.
void add(const float* src, std::int64_t src_ld, float* dst, std::int64_t dst_ld, std::int64_t rows,
         std::int64_t cols, float scale);

}  // namespace nodeflow::transpose_tiles
