// Transpose's register tiles (nodes/shape/transpose_tiles.hpp) bit for bit
// against the element loop they replace: every block size around the tile
// edge, leading dimensions wider than the block, plain and streaming stores,
// and the gradient's scaled sum.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "nodes/shape/transpose_tiles.hpp"

namespace nodeflow {
namespace {

TEST(TransposeTiles, CopyAndAddMatchTheElementLoopBitForBit) {
  if (!transpose_tiles::available()) GTEST_SKIP() << "this CPU has no AVX-512F: the tiles are never used";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (const std::int64_t rows : {1, 15, 16, 17, 33, 64})
    for (const std::int64_t cols : {1, 16, 31, 48}) {
      const std::int64_t src_ld = rows + 5, dst_ld = cols + 16;
      std::vector<float> src(static_cast<std::size_t>(cols * src_ld)), dst(static_cast<std::size_t>(rows * dst_ld));
      for (float& v : src) v = value(rng);
      for (float& v : dst) v = value(rng);
      std::vector<float> want_copy = dst, want_add = dst;
      const float scale = 0.3f;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const float s = src[static_cast<std::size_t>(j * src_ld + i)];
          want_copy[static_cast<std::size_t>(i * dst_ld + j)] = s;
          float& a = want_add[static_cast<std::size_t>(i * dst_ld + j)];
          a = a + scale * s;
        }
      for (const bool stream : {false, true}) {
        std::vector<float> got = dst;
        std::vector<std::uint32_t> src_bits(src.size()), got_bits(got.size());
        std::memcpy(src_bits.data(), src.data(), src.size() * 4);
        std::memcpy(got_bits.data(), got.data(), got.size() * 4);
        transpose_tiles::copy(src_bits.data(), src_ld, got_bits.data(), dst_ld, rows, cols, stream);
        std::memcpy(got.data(), got_bits.data(), got.size() * 4);
        ASSERT_EQ(std::memcmp(got.data(), want_copy.data(), got.size() * 4), 0)
            << rows << "x" << cols << " stream " << stream;
      }
      std::vector<float> got = dst;
      transpose_tiles::add(src.data(), src_ld, got.data(), dst_ld, rows, cols, scale);
      ASSERT_EQ(std::memcmp(got.data(), want_add.data(), got.size() * 4), 0) << rows << "x" << cols;
    }
}

}  // namespace
}  // namespace nodeflow
