// The mapped copy and scatter-add that Slice, Pad, Expand, Tile and Gather
// share (nodes/shape/axis_maps): against a per-element oracle that reads
// the maps directly (no folded blocks, no runs), on one and several
// threads, for fills, strides, stretched and reversed axes, arbitrary
// gathers and unmoved trailing axes, with float16 gradients summed in float32.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nodes/shape/axis_maps.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::pattern;

// Input offset of output element `flat`, or kFill.
std::int64_t source_offset(const AxisMaps& maps, std::int64_t flat) {
  std::int64_t offset = 0;
  std::int64_t stride = 1;
  for (std::size_t a = maps.output.size(); a-- > 0;) {
    const std::int64_t s = maps.source[a][static_cast<std::size_t>(flat % maps.output[a])];
    flat /= maps.output[a];
    if (s == kFill) return kFill;
    offset += s * stride;
    stride *= maps.input[a];
  }
  return offset;
}

// Maps whose axis a reads source_of(a, i, rng) for output length out[a].
AxisMaps random_maps(const Shape& in, const Shape& out, int kind, std::mt19937_64& rng) {
  return make_axis_maps(in, out, [&](std::size_t a, std::int64_t i) -> std::int64_t {
    const std::int64_t d = in[a];
    switch ((kind + static_cast<int>(a)) % 6) {
      case 0:
        return i < d ? i : kFill;  // a plain copy, then fill
      case 1:
        return (2 * i) % d;  // a step of 2
      case 2:
        return 0;  // stretched
      case 3:
        return d - 1 - i % d;  // reversed
      case 4:
        return std::uniform_int_distribution<std::int64_t>(0, d - 1)(rng);  // gathered
      default:
        return i % 3 == 1 ? kFill : i % d;  // fills between copies
    }
  });
}

TEST(AxisMaps, CopyAndScatterMatchTheOracleOnAnyThreadCount) {
  std::mt19937_64 rng(5);
  const std::vector<std::pair<Shape, Shape>> shapes{{{64, 9, 40}, {70, 12, 40}},
                                                    {{5, 7}, {9, 3}},
                                                    {{300, 3, 2}, {300, 5, 2}},
                                                    {{3}, {7}},
                                                    {{2, 1, 4}, {3, 5, 4}}};
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    for (int kind = 0; kind < 6; ++kind) {
      const auto& [in_shape, out_shape] = shapes[k];
      const AxisMaps maps = random_maps(in_shape, out_shape, kind, rng);
      const Tensor in = pattern(in_shape, 7, 1009, 500, 4.0);
      const Tensor fill = testing::f64({}, {0.75});
      const std::int64_t n = element_count(out_shape);
      std::vector<double> want(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t s = source_offset(maps, i);
        want[static_cast<std::size_t>(i)] =
            s == kFill ? 0.75 : in.values<double>()[static_cast<std::size_t>(s)];
      }
      const Tensor grad_out = pattern(out_shape, 3, 17, 8, 2.0);
      std::vector<double> want_grad = as_doubles(pattern(in_shape, 1, 5, 2, 1.0));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t s = source_offset(maps, i);
        if (s != kFill)
          want_grad[static_cast<std::size_t>(s)] +=
              0.5 * grad_out.values<double>()[static_cast<std::size_t>(i)];
      }
      for (int threads : {1, 4}) {
        Tensor out = Tensor::uninitialized(DType::Float64, out_shape);
        copy_mapped(maps, in, &fill, out, threads);
        EXPECT_EQ(as_doubles(out), want) << "shapes " << k << " kind " << kind << " threads " << threads;
        Tensor grad = pattern(in_shape, 1, 5, 2, 1.0);
        scatter_add_mapped(maps, grad_out, 0.5, grad, threads);
        EXPECT_EQ(as_doubles(grad), want_grad)
            << "shapes " << k << " kind " << kind << " threads " << threads;
        // float16 gradients: summed in float32 and rounded once.
        Tensor half_grad = pattern(in_shape, 1, 5, 2, 1.0, DType::Float16);
        scatter_add_mapped(maps, grad_out.cast(DType::Float16), 0.5, half_grad, threads);
        const std::vector<double> got = as_doubles(half_grad);
        for (std::size_t e = 0; e < got.size(); ++e)
          EXPECT_NEAR(got[e], want_grad[e], 1e-3 * (1 + std::abs(want_grad[e]))) << "element " << e;
      }
    }
  }
}

TEST(AxisMaps, CopiesBlocksOfAnyElementSize) {
  // int8 and float16 (1 and 2 bytes), with a fill, a stride and folded trailing axes.
  for (DType t : {DType::Int8, DType::Float16, DType::Int64}) {
    const Tensor in = pattern({3, 4, 2}, 1, 100, 0, 1.0, t);
    const Tensor fill = testing::f64({}, {-1}).cast(t);
    const AxisMaps maps = make_axis_maps(Shape{3, 4, 2}, Shape{2, 3, 2}, [](std::size_t a, std::int64_t i) {
      return a == 0 ? 2 - 2 * i : a == 1 ? (i == 1 ? kFill : i) : i;
    });
    Tensor out = Tensor::uninitialized(t, maps.output);
    copy_mapped(maps, in, &fill, out, 1);
    EXPECT_EQ(as_doubles(out.cast(DType::Float64)),
              (std::vector<double>{16, 17, -1, -1, 20, 21, 0, 1, -1, -1, 4, 5}));
  }
}

}  // namespace
}  // namespace nodeflow
