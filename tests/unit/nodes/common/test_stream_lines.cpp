// The non-temporal writes (nodes/common/stream_lines.hpp) against plain loops
// at every alignment of the head and the tail, with the elements around the
// written range checked untouched (the nodes that use them:
// test_overwritten_gradients.cpp).
#include "nodes/common/stream_lines.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>


namespace nodeflow {
namespace {

TEST(StreamLines, WriteEveryElementAtEveryAlignment) {
  std::vector<float> src(300), dst(300);
  std::vector<double> src64(300), dst64(300);
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = 0.25f * static_cast<float>(i) - 7.0f;
    src64[i] = 0.5 * static_cast<double>(i) - 3.0;
  }
  for (std::int64_t offset = 0; offset < 17; ++offset)
    for (const std::int64_t n : {0, 1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 250}) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::fill(dst.begin(), dst.end(), nan);
      stream_lines::write_scaled(dst.data() + offset, src.data(), -1.5f, n);
      for (std::int64_t i = 0; i < 300 - 17; ++i) {
        const float want = i >= offset && i < offset + n ? -1.5f * src[static_cast<std::size_t>(i - offset)] : nan;
        ASSERT_TRUE(std::isnan(want) ? std::isnan(dst[i]) : dst[i] == want) << offset << " " << n << " " << i;
      }
      std::fill(dst.begin(), dst.end(), nan);
      stream_lines::write_fill(dst.data() + offset, 2.5f, n);
      for (std::int64_t i = 0; i < 300 - 17; ++i)
        ASSERT_TRUE(i >= offset && i < offset + n ? dst[i] == 2.5f : std::isnan(dst[i])) << offset << " " << n;
      std::fill(dst64.begin(), dst64.end(), std::numeric_limits<double>::quiet_NaN());
      stream_lines::write_scaled(dst64.data() + offset, src64.data(), 3.0, n);
      for (std::int64_t i = 0; i < 300 - 17; ++i) {
        const bool in = i >= offset && i < offset + n;
        ASSERT_TRUE(in ? dst64[i] == 3.0 * src64[i - offset] : std::isnan(dst64[i])) << offset << " " << n;
      }
      stream_lines::write_fill(dst64.data() + offset, -1.0, n);
      for (std::int64_t i = 0; i < 300 - 17; ++i)
        ASSERT_TRUE(i >= offset && i < offset + n ? dst64[i] == -1.0 : std::isnan(dst64[i])) << offset << " " << n;
    }
}

}  // namespace
}  // namespace nodeflow
