// The non-temporal writes (nodes/common/stream_lines.hpp) against plain loops
// at every alignment of the head and the tail, and the overwritten gradients
// of the nodes that use them, at sizes where they stream, against the same
// gradients added into zeroed buffers.
#include "nodes/common/stream_lines.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/gradcheck.hpp"

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
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(dst64[i + offset], 3.0 * src64[i]) << offset << " " << n;
      stream_lines::write_fill(dst64.data() + offset, -1.0, n);
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(dst64[i + offset], -1.0) << offset << " " << n;
    }
}

// Inputs of ~18 MB float32: over stream_lines::kStreamBytes, with lines of
// 1100 elements (at least kMinStreamElements) for the middle-axis reduction.
TEST(StreamLines, LargeOverwrittenGradientsEqualTheAddedOnes) {
  const Shape shape{4, 1024, 1100};
  Tensor x(DType::Float32, shape), y(DType::Float32, shape);
  auto xv = x.values<float>(), yv = y.values<float>();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    xv[i] = static_cast<float>(i % 97) * 0.01f;
    yv[i] = static_cast<float>(i % 89) * -0.02f;
  }
  struct Case {
    const char* op;
    std::vector<Tensor> inputs;
    Attributes attributes;
  };
  Attributes keep;
  keep["keepdims"] = std::int64_t{1};
  const std::vector<Case> cases = {
      {"Add", {x, y}, {}},
      {"Sub", {x, y}, {}},
      {"ReduceSum", {x, Tensor::from<std::int64_t>({1}, {1})}, keep},
      {"ReduceMean", {x, Tensor::from<std::int64_t>({1}, {1})}, keep},
  };
  for (const Case& c : cases)
    for (const int threads : {1, 2}) {
      const auto node = testing::make_node(c.op, c.attributes);
      ASSERT_TRUE(node->overwrites_gradients()) << c.op;
      const testing::ForwardResult f = testing::run_forward(*node, c.inputs);
      Tensor dy(DType::Float32, f.outputs[0].shape());
      auto dv = dy.values<float>();
      for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = static_cast<float>(i % 13) - 6.0f;
      std::vector<Tensor> added, written;
      testing::RunSettings add_settings, overwrite_settings;
      add_settings.threads = overwrite_settings.threads = threads;
      for (const Tensor& in : c.inputs) {
        const bool wanted = in.dtype() == DType::Float32;
        added.push_back(wanted ? Tensor(DType::Float32, in.shape()) : Tensor());
        written.push_back(wanted ? Tensor(DType::Float32, in.shape()) : Tensor());
        if (wanted)
          for (float& v : written.back().values<float>()) v = std::numeric_limits<float>::quiet_NaN();
        overwrite_settings.overwrite.push_back(wanted);
      }
      testing::run_backward(*node, c.inputs, f, {dy}, added, add_settings);
      testing::run_backward(*node, c.inputs, f, {dy}, written, overwrite_settings);
      for (std::size_t k = 0; k < added.size(); ++k) {
        if (added[k].empty()) continue;
        const auto a = added[k].values<float>(), w = written[k].values<float>();
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(a[i], w[i]) << c.op << " input " << k << " element " << i << " threads " << threads;
      }
    }
}

}  // namespace
}  // namespace nodeflow
