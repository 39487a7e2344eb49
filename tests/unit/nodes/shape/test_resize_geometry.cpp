// Resize's geometry on its own: output lengths from scales and sizes (and
// keep_aspect_ratio_policy), the coordinate modes and nearest modes as taps,
// and the refusals of the constant inputs.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "nodes/shape/resize_geometry.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using testing::error_of;

ResizeAttributes attrs(ResizeMode mode, ResizeCoordinates coordinates, ResizeNearest nearest = ResizeNearest::RoundPreferFloor) {
  ResizeAttributes a;
  a.mode = mode;
  a.coordinates = coordinates;
  a.nearest = nearest;
  return a;
}

std::vector<std::int64_t> first_indices(const std::vector<ResizeTap>& taps) {
  std::vector<std::int64_t> v;
  for (const ResizeTap& t : taps) v.push_back(t.valid ? t.i0 : -1);
  return v;
}

TEST(ResizeGeometry, LengthsFromScalesAndSizes) {
  const ResizeAttributes a;
  const auto from_scales = resize_axes(a, {{}, {1, 1, 1.5, 0.5}, {}}, {2, 1, 3, 4});
  EXPECT_EQ(from_scales[2].out, 4);  // floor(4.5)
  EXPECT_EQ(from_scales[3].out, 2);
  EXPECT_EQ(from_scales[2].scale, 1.5);  // used as given, not 4 / 3
  const auto from_sizes = resize_axes(a, {{}, {}, {1, 1, 6, 4}}, {1, 1, 4, 5});
  EXPECT_DOUBLE_EQ(from_sizes[3].scale, 0.8);
  ResizeAttributes keep = a;
  keep.aspect = ResizeAspect::NotLarger;
  keep.axes = {-2, -1};
  const auto fitted = resize_axes(keep, {{}, {}, {8, 9}}, {1, 1, 4, 6});
  EXPECT_EQ(fitted[2].out, 6);  // factor min(2, 1.5) = 1.5
  EXPECT_EQ(fitted[3].out, 9);
  keep.aspect = ResizeAspect::NotSmaller;
  EXPECT_EQ(resize_axes(keep, {{}, {}, {8, 9}}, {1, 1, 4, 6})[3].out, 12);
  EXPECT_EQ(resize_axes(a, {{}, {2, 2}, {}}, {kDynamicDim, 3})[0].out, kDynamicDim);
}

TEST(ResizeGeometry, NearestModes) {
  // The conformance case's rows: half_pixel, floor, 4 -> 6.
  ResizeAxis axis{4, 6, 1.5, 0, 1};
  EXPECT_EQ(first_indices(resize_taps(attrs(ResizeMode::Nearest, ResizeCoordinates::HalfPixel, ResizeNearest::Floor), axis)),
            (std::vector<std::int64_t>{0, 0, 1, 1, 2, 3}));
  // asymmetric x/2: ties at .5 go down with round_prefer_floor, up with round_prefer_ceil.
  axis = {3, 6, 2, 0, 1};
  EXPECT_EQ(first_indices(resize_taps(attrs(ResizeMode::Nearest, ResizeCoordinates::Asymmetric), axis)),
            (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(first_indices(resize_taps(
                attrs(ResizeMode::Nearest, ResizeCoordinates::Asymmetric, ResizeNearest::RoundPreferCeil), axis)),
            (std::vector<std::int64_t>{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(first_indices(resize_taps(attrs(ResizeMode::Nearest, ResizeCoordinates::Asymmetric, ResizeNearest::Ceil), axis)),
            (std::vector<std::int64_t>{0, 1, 1, 2, 2, 2}));
}

TEST(ResizeGeometry, LinearCoordinates) {
  // align_corners 3 -> 5: x / 2.
  const auto ac = resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::AlignCorners), {3, 5, 5.0 / 3, 0, 1});
  EXPECT_EQ(ac[1].i0, 0);
  EXPECT_EQ(ac[1].i1, 1);
  EXPECT_DOUBLE_EQ(ac[1].w1, 0.5);
  EXPECT_EQ(ac[4].i0, 2);
  EXPECT_EQ(ac[4].w1, 0);
  // half_pixel below 0 clamps to the edge element.
  const auto hp = resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::HalfPixel), {2, 4, 2, 0, 1});
  EXPECT_EQ(hp[0].i0, 0);
  EXPECT_EQ(hp[0].w1, 0);
  EXPECT_DOUBLE_EQ(hp[1].w1, 0.25);
  // pytorch_half_pixel with one output samples 0; half_pixel_symmetric centres.
  EXPECT_EQ(resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::PytorchHalfPixel), {4, 1, 0.25, 0, 1})[0].w1, 0);
  const auto hs = resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::HalfPixelSymmetric), {4, 2, 0.6, 0, 1});
  EXPECT_NEAR(hs[0].i0 + hs[0].w1, 0.8 * (1 - 2 / 2.4) * 2.5 + 0.5 / 0.6 - 0.5, 1e-12);  // offset 2 * (1 - 2/2.4)
  // tf_crop_and_resize: roi [0.5, 1.25] of 5 -> 4 samples 2, 3, 4, 5; 5 is outside.
  const auto tf = resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::TfCropAndResize), {5, 4, 1, 0.5, 1.25});
  EXPECT_EQ(first_indices(tf), (std::vector<std::int64_t>{2, 3, 4, -1}));
  EXPECT_TRUE(is_identity(resize_taps(attrs(ResizeMode::Linear, ResizeCoordinates::HalfPixel), {3, 3, 1, 0, 1}), 3));
}

TEST(ResizeGeometry, Refusals) {
  const Tensor scales = Tensor::from<float>({2}, {1.f, 2.f});
  const Tensor sizes = Tensor::from<std::int64_t>({2}, {1, 4});
  EXPECT_EQ(error_of<InvalidAttribute>([&] { read_resize_request(nullptr, &scales, &sizes); }),
            "inputs: both scales and sizes are given (only one may be)");
  EXPECT_NE(error_of<InvalidAttribute>([&] { read_resize_request(nullptr, nullptr, nullptr); }).find("neither"),
            std::string::npos);
  const Tensor bad = Tensor::from<float>({2}, {1.f, 0.f});
  EXPECT_EQ(error_of<InvalidAttribute>([&] { read_resize_request(nullptr, &bad, nullptr); }),
            "input 2 (scales): 0 is not a positive finite scale");
  const ResizeAttributes a;
  EXPECT_EQ(error_of<InvalidAttribute>([&] { resize_axes(a, {{}, {1, 2}, {}}, {1, 2, 3}); }),
            "input 2 (scales) has 2 values; it needs one per resized axis (3)");
  ResizeAttributes twice = a;
  twice.axes = {1, -1};
  EXPECT_EQ(error_of<InvalidAttribute>([&] { resize_axes(twice, {{}, {2, 2}, {}}, {1, 2}); }),
            "attributes.axes: axis -1 is given twice");
  EXPECT_NE(error_of<InvalidAttribute>([&] { resize_axes(a, {{}, {1e30}, {}}, {1000}); }).find("too large"),
            std::string::npos);
  EXPECT_NE(error_of<InvalidAttribute>([&] { resize_axes(a, {{}, {}, {3}}, {0}); }).find("length 0"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeflow
