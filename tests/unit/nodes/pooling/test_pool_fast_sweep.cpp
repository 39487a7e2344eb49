// The fast pooling kernels against the reference kernels (the oracle) over a
// seeded random sweep: every op, every attribute (kernel, strides, dilations,
// pads, auto_pad, ceil_mode, count_include_pad, storage_order, p), 1-D, 2-D
// and 3-D, odd sizes, every dtype, 1 and 3 threads, every instruction-set
// level this CPU has. MaxPool values, argmax and gradients and LpPool
// gradients must be bitwise equal; averages and Lp values within a few ulps
// of the sum of magnitudes (test_pool_fast_util.hpp, error_in_ulps).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"
#include "support/layer_fixtures.hpp"
#include "unit/nodes/pooling/test_pool_fast_util.hpp"

namespace nodeflow {
namespace {

using testing::pool_fast::Draw;
using testing::as_doubles;
using testing::pool_fast::absolute;
using testing::pool_fast::sum_tolerance;
using testing::pool_fast::window_attrs;
using ints = std::vector<std::int64_t>;

struct SweepCase {
  PoolKind kind = PoolKind::Max;
  Attributes attrs;
  Shape shape;
  DType dtype = DType::Float32;
  Draw draw = Draw::Spread;
  bool specials = true;  ///< with Draw::Ties: NaN and infinities too
  double scale = 1.0;

  std::string describe() const {
    std::ostringstream s;
    s << pool_op_type(kind) << " " << dtype_name(dtype) << " x" << to_string(shape);
    for (const auto& [name, value] : attrs) s << " " << name << "=" << to_string(value);
    s << (draw == Draw::Spread ? " spread" : specials ? " ties" : " ties-finite");
    s << " scale=" << scale;
    return s.str();
  }
};

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> options) {
  std::uniform_int_distribution<std::size_t> d(0, options.size() - 1);
  return *(options.begin() + d(rng));
}

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

SweepCase random_case(std::mt19937_64& rng) {
  SweepCase c;
  c.kind = pick(rng, {PoolKind::Max, PoolKind::Max, PoolKind::Average, PoolKind::Average,
                      PoolKind::Lp, PoolKind::GlobalAverage, PoolKind::GlobalMax});
  const auto rank = static_cast<std::size_t>(uniform(rng, 1, 3));
  c.shape = {uniform(rng, 1, 2), uniform(rng, 1, 3)};
  const std::int64_t largest = rank == 1 ? 40 : rank == 2 ? 13 : 7;
  for (std::size_t i = 0; i < rank; ++i) c.shape.push_back(uniform(rng, 1, largest));
  const bool bytes = c.kind == PoolKind::Max || c.kind == PoolKind::GlobalMax;
  c.dtype = bytes ? pick(rng, {DType::Float32, DType::Float32, DType::Float64, DType::Float16,
                               DType::BFloat16, DType::Int8, DType::UInt8})
                  : pick(rng, {DType::Float32, DType::Float32, DType::Float64, DType::Float16,
                               DType::BFloat16});
  c.draw = pick(rng, {Draw::Spread, Draw::Ties});
  c.scale = pick(rng, {1.0, 0.5, -1.5});
  if (c.kind == PoolKind::GlobalAverage || c.kind == PoolKind::GlobalMax) return c;

  ints kernel, strides, dilations, pads(2 * rank);
  for (std::size_t i = 0; i < rank; ++i) {
    kernel.push_back(uniform(rng, 1, 4));
    strides.push_back(uniform(rng, 1, 3));
    dilations.push_back(uniform(rng, 0, 3) == 0 ? uniform(rng, 2, 3) : 1);
    const std::int64_t extent = dilations[i] * (kernel[i] - 1) + 1;
    pads[i] = uniform(rng, 0, std::min<std::int64_t>(2, extent - 1));
    pads[rank + i] = uniform(rng, 0, std::min<std::int64_t>(2, extent - 1));
  }
  c.attrs["kernel_shape"] = kernel;
  c.attrs["strides"] = strides;
  c.attrs["dilations"] = dilations;
  const std::string auto_pad =
      pick<std::string>(rng, {"NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
  c.attrs["auto_pad"] = auto_pad;
  if (auto_pad == "NOTSET") c.attrs["pads"] = pads;
  c.attrs["ceil_mode"] = std::int64_t{uniform(rng, 0, 2) == 0};
  if (c.kind == PoolKind::Average) c.attrs["count_include_pad"] = uniform(rng, 0, 1);
  if (c.kind == PoolKind::Max) c.attrs["storage_order"] = uniform(rng, 0, 1);
  if (c.kind == PoolKind::Lp) c.attrs["p"] = uniform(rng, 1, 3);
  return c;
}

// One case at one level and thread count; gtest failures carry the case.
template <typename T>
void check_case(const SweepCase& c, const PoolGeometry& g, const PoolAttributes& a,
                std::mt19937_64& rng, int threads, double& worst) {
  const bool specials = c.draw == Draw::Ties && c.specials;
  Tensor x(dtype_of_v<T>, g.input_shape());
  testing::pool_fast::fill_random<T>(x.values<T>(), rng, c.draw, specials);
  Tensor dy(dtype_of_v<T>, g.output_shape()), dx0(dtype_of_v<T>, g.input_shape());
  testing::pool_fast::fill_random<T>(dy.values<T>(), rng, Draw::Spread, false);
  testing::pool_fast::fill_random<T>(dx0.values<T>(), rng, Draw::Spread, false);
  const auto cx = std::span<const T>(x.values<T>());
  const auto cdy = std::span<const T>(dy.values<T>());

  if (c.kind == PoolKind::Max || c.kind == PoolKind::GlobalMax) {
    Tensor y_ref(dtype_of_v<T>, g.output_shape()), am_ref(DType::Int64, g.output_shape());
    max_pool_forward<T>(g, cx, y_ref.values<T>(), am_ref.values<std::int64_t>());
    for (PoolImpl impl : testing::pool_fast::fast_impls()) {
      SCOPED_TRACE(pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor y(dtype_of_v<T>, g.output_shape()), am(DType::Int64, g.output_shape());
      fast::max_pool_forward<T>(g, cx, y.values<T>(), am.values<std::int64_t>(), threads);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(y, y_ref));
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(am, am_ref));
      Tensor y_only(dtype_of_v<T>, g.output_shape());
      fast::max_pool_forward<T>(g, cx, y_only.values<T>(), std::span<std::int64_t>(), threads);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(y_only, y_ref));
      if constexpr (!std::is_integral_v<T>) {
        Tensor dx_ref = dx0.clone(), dx = dx0.clone();
        max_pool_backward<T>(am_ref.values<std::int64_t>(), cdy, c.scale, dx_ref.values<T>());
        fast::max_pool_backward<T>(g, am_ref.values<std::int64_t>(), cdy, c.scale, dx.values<T>(),
                                   threads);
        EXPECT_TRUE(testing::pool_fast::bitwise_equal(dx, dx_ref));
      }
    }
    // The training state: int32 offsets within each plane, on every level
    // (the reference level converts).
    Tensor offsets_ref(DType::Int32, g.output_shape());
    for (std::size_t o = 0; o < offsets_ref.values<std::int32_t>().size(); ++o)
      offsets_ref.values<std::int32_t>()[o] = static_cast<std::int32_t>(
          am_ref.values<std::int64_t>()[o] -
          static_cast<std::int64_t>(o) / g.output_plane() * g.input_plane());
    std::vector<PoolImpl> levels = testing::pool_fast::fast_impls();
    levels.push_back(PoolImpl::Reference);
    for (PoolImpl impl : levels) {
      SCOPED_TRACE(std::string("int32 offsets, ") + pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor y(dtype_of_v<T>, g.output_shape()), offsets(DType::Int32, g.output_shape());
      fast::max_pool_forward<T>(g, cx, y.values<T>(), offsets.values<std::int32_t>(), threads);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(y, y_ref));
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(offsets, offsets_ref));
      if constexpr (!std::is_integral_v<T>) {
        Tensor dx_ref = dx0.clone(), dx = dx0.clone();
        max_pool_backward<T>(am_ref.values<std::int64_t>(), cdy, c.scale, dx_ref.values<T>());
        fast::max_pool_backward<T>(g, offsets_ref.values<std::int32_t>(), cdy, c.scale,
                                   dx.values<T>(), threads);
        EXPECT_TRUE(testing::pool_fast::bitwise_equal(dx, dx_ref));
      }
    }
    return;
  }
  if constexpr (!std::is_integral_v<T>) {
    const bool average = c.kind == PoolKind::Average || c.kind == PoolKind::GlobalAverage;
    const bool include_pad = a.count_include_pad;
    Tensor y_ref(dtype_of_v<T>, g.output_shape()), magnitude(dtype_of_v<T>, g.output_shape());
    const Tensor ax = absolute<T>(x);
    if (average) {
      average_pool_forward<T>(g, include_pad, cx, y_ref.values<T>());
      average_pool_forward<T>(g, include_pad, std::span<const T>(ax.values<T>()),
                              magnitude.values<T>());
    } else {
      lp_pool_forward<T>(g, a.p, cx, y_ref.values<T>());
      magnitude = absolute<T>(y_ref);
    }
    // Backward: reference with dx prefilled, and its magnitude (|dy|, |scale|, dx 0).
    Tensor dx_ref = dx0.clone(), grad_magnitude(dtype_of_v<T>, g.input_shape());
    const Tensor ady = absolute<T>(dy);
    if (average) {
      average_pool_backward<T>(g, include_pad, cdy, c.scale, dx_ref.values<T>());
      average_pool_backward<T>(g, include_pad, std::span<const T>(ady.values<T>()),
                               std::abs(c.scale), grad_magnitude.values<T>());
    } else {
      lp_pool_backward<T>(g, a.p, cx, y_ref.values<T>(), cdy, c.scale, dx_ref.values<T>());
    }
    const auto mag = as_doubles(magnitude), grad_mag = as_doubles(grad_magnitude);
    for (PoolImpl impl : testing::pool_fast::fast_impls()) {
      SCOPED_TRACE(pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor y(dtype_of_v<T>, g.output_shape()), dx = dx0.clone();
      if (average) {
        fast::average_pool_forward<T>(g, include_pad, cx, y.values<T>(), threads);
        fast::average_pool_backward<T>(g, include_pad, cdy, c.scale, dx.values<T>(), threads);
        const double e = testing::pool_fast::error_in_ulps<T>(y.values<T>(), y_ref.values<T>(), mag);
        const double ge = testing::pool_fast::error_in_ulps<T>(dx.values<T>(), dx_ref.values<T>(), grad_mag);
        EXPECT_LE(e, sum_tolerance(g));
        EXPECT_LE(ge, sum_tolerance(g));
        worst = std::max({worst, e, ge});
      } else {
        fast::lp_pool_forward<T>(g, a.p, cx, y.values<T>(), threads);
        const double e = testing::pool_fast::error_in_ulps<T>(y.values<T>(), y_ref.values<T>(), mag);
        EXPECT_LE(e, sum_tolerance(g));
        worst = std::max(worst, e);
        fast::lp_pool_backward<T>(g, a.p, cx, y_ref.values<T>(), cdy, c.scale, dx.values<T>(),
                                  threads);
        EXPECT_TRUE(testing::pool_fast::bitwise_equal(dx, dx_ref));
      }
    }
  }
}

/// The case's attributes and geometry, or nothing for an invalid
/// combination (the geometry tests cover those).
std::optional<std::pair<PoolAttributes, PoolGeometry>> geometry_of(const SweepCase& c) {
  try {
    PoolAttributes a = checked_pool_attributes(c.kind, c.attrs);
    PoolGeometry g = pool_geometry(a, c.shape);
    return std::pair{std::move(a), std::move(g)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

TEST(PoolFastSweep, MatchesTheReferenceKernels) {
  std::mt19937_64 rng(20240611);
  double worst = 0;
  int checked = 0;
  while (checked < 600) {
    const SweepCase c = random_case(rng);
    const auto valid = geometry_of(c);
    if (!valid) continue;
    const auto& [a, g] = *valid;
    ++checked;
    SCOPED_TRACE(c.describe());
    for (int threads : {1, 3})
      visit_dtype(c.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!is_index_type_v<T>) check_case<T>(c, g, a, rng, threads, worst);
      });
    if (::testing::Test::HasFailure()) break;  // the first failing case says it all
  }
  RecordProperty("worst_ulps", std::to_string(worst));
  std::cout << "[ sweep ] " << checked << " cases; largest average/Lp difference " << worst
            << " ulps of the magnitude\n";
}

// The random sweep's planes are small (a row holds at most one vector of
// outputs). These are the benchmark's geometries (bench/pool_bench.cpp) and
// their neighbours at full width and a few planes, so every special path
// (fused stride-2 pairs, whole-row runs, prefetches one item ahead) runs over
// several vectors per row, several items, ties without NaN (the fast order)
// and with NaN (the exact order's fallback).
TEST(PoolFastSweep, CommonShapesAtFullWidth) {
  struct Common {
    PoolKind kind;
    Shape shape;
    Attributes attrs;
  };
  auto with = [](Attributes a, const std::string& name, std::int64_t value) {
    a[name] = value;
    return a;
  };
  const std::vector<Common> cases = {
      {PoolKind::Max, {1, 3, 23, 112}, window_attrs({3, 3}, {2, 2}, {1, 1, 1, 1})},  // P1
      {PoolKind::Max, {2, 3, 12, 56}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},   // P2
      {PoolKind::Max, {1, 3, 11, 55}, window_attrs({2, 2}, {2, 2}, {1, 1, 0, 1})},
      {PoolKind::Average, {2, 3, 28, 28}, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})},  // P3
      {PoolKind::GlobalAverage, {2, 5, 7, 7}, {}},                                      // P4
      // Whole planes of 1 to 4 vectors are straight code, larger ones a loop;
      // planes of whole vectors (4 x 4, 8 x 8) and of a partial last one.
      {PoolKind::GlobalAverage, {3, 13, 7, 7}, {}},
      {PoolKind::GlobalAverage, {1, 35, 9, 9}, {}},
      {PoolKind::GlobalAverage, {2, 9, 4, 4}, {}},
      {PoolKind::GlobalAverage, {2, 9, 8, 8}, {}},
      {PoolKind::GlobalAverage, {2, 9, 5, 7}, {}},
      {PoolKind::Lp, {2, 19, 3, 5}, with(window_attrs({3, 5}, {1, 1}, {0, 0, 0, 0}), "p", 1)},
      {PoolKind::Lp, {2, 19, 3, 5}, with(window_attrs({3, 5}, {1, 1}, {0, 0, 0, 0}), "p", 2)},
      {PoolKind::Max,
       {1, 2, 6, 14, 56},
       window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},  // P5
      {PoolKind::Max, {1, 2, 5, 9, 50}, window_attrs({2, 2, 2}, {3, 2, 2}, {1, 0, 1, 0, 1, 1})},
      {PoolKind::Average,
       {2, 3, 11, 55},
       with(window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}), "ceil_mode", 1)},  // P6
      // Fused rows of 1 to 5 vectors (AVX-512; AVX2 has twice as many).
      {PoolKind::Average, {1, 2, 6, 30}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {PoolKind::Average, {1, 2, 6, 45}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {PoolKind::Average, {1, 2, 5, 70}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {PoolKind::Max, {1, 2, 5, 70}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      // The fused MaxPool backward: odd widths (an input in no window), a
      // clipped last window (ceil_mode), 3-D with padded outer axes.
      {PoolKind::Max, {1, 2, 7, 33}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {PoolKind::Max,
       {1, 2, 7, 45},
       with(window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}), "ceil_mode", 1)},
      {PoolKind::Max, {1, 2, 5, 9, 51}, window_attrs({2, 2, 2}, {2, 2, 2}, {1, 1, 0, 0, 0, 0})},
      {PoolKind::Average,
       {1, 2, 5, 13, 41},
       with(window_attrs({2, 2, 2}, {2, 2, 2}, {1, 1, 1, 0, 0, 0}), "count_include_pad", 1)},
      {PoolKind::Lp, {1, 3, 10, 48}, with(window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}), "p", 2)},
      {PoolKind::Max, {1, 3, 14, 56}, window_attrs({3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2})},  // P7
  };
  double worst = 0;
  std::mt19937_64 rng(20261129);
  for (const Common& common : cases)
    for (const auto& [draw, specials] :
         {std::pair{Draw::Spread, false}, std::pair{Draw::Ties, false},
          std::pair{Draw::Ties, true}}) {
      SweepCase c;
      c.kind = common.kind;
      c.shape = common.shape;
      c.attrs = common.attrs;
      c.draw = draw;
      c.specials = specials;
      c.scale = -1.5;
      SCOPED_TRACE(c.describe());
      const PoolAttributes a = checked_pool_attributes(c.kind, c.attrs);
      const PoolGeometry g = pool_geometry(a, c.shape);
      for (int threads : {1, 2}) check_case<float>(c, g, a, rng, threads, worst);
    }
}

// Stride-1 2-D windows whose output plane has the input's shape (P3, P7):
// every split of the padding between the two sides (the taps' offsets, and
// mirrored, the windows each input's gradient collects), 2x2, 3x3 and mixed
// windows, dilations, widths below, at and above one vector, chunks of rows
// (3 threads on one plane large enough to be split).
TEST(PoolFastSweep, StrideOneSamePlanesEverySplitOfThePads) {
  const std::vector<Shape> shapes = {{1, 2, 5, 7}, {1, 1, 13, 28}, {2, 2, 9, 17}, {1, 1, 181, 203}};
  const std::vector<std::pair<PoolKind, std::pair<const char*, std::int64_t>>> ops = {
      {PoolKind::Max, {"storage_order", 0}},
      {PoolKind::Average, {"count_include_pad", 0}},
      {PoolKind::Average, {"count_include_pad", 1}},
      {PoolKind::Lp, {"p", 1}},
      {PoolKind::Lp, {"p", 2}}};
  double worst = 0;
  std::mt19937_64 rng(20261130);
  int checked = 0;
  for (const auto& [kind, extra] : ops)
    for (const ints& kernel : {ints{2, 2}, ints{3, 3}, ints{2, 3}})
      for (std::int64_t dilation : {1, 2}) {
        const std::int64_t total0 = (kernel[0] - 1) * dilation, total1 = (kernel[1] - 1) * dilation;
        for (std::int64_t b0 = 0; b0 <= total0; ++b0)
          for (std::int64_t b1 = 0; b1 <= total1; ++b1) {
            SweepCase c;
            c.kind = kind;
            c.shape = shapes[static_cast<std::size_t>(checked) % shapes.size()];
            c.attrs = window_attrs(kernel, {1, 1}, {b0, b1, total0 - b0, total1 - b1},
                                   {dilation, dilation});
            c.attrs[extra.first] = extra.second;
            c.draw = checked / 4 % 2 == 0 ? Draw::Spread : Draw::Ties;
            c.scale = -1.5;
            ++checked;
            SCOPED_TRACE(c.describe());
            const PoolAttributes a = checked_pool_attributes(c.kind, c.attrs);
            const PoolGeometry g = pool_geometry(a, c.shape);
            ASSERT_EQ(g.output_shape(), g.input_shape());
            for (int threads : {1, 3}) check_case<float>(c, g, a, rng, threads, worst);
            if (::testing::Test::HasFailure()) return;
          }
      }
  std::cout << "[ sweep ] " << checked << " stride-1 cases; largest average/Lp difference "
            << worst << " ulps of the magnitude\n";
}

// Pads so wide that some taps never reach the input: the kernels keep only
// the taps that do, which may read far less of a row than the row itself
// (found by a user: the row copy for strided and dilated windows overran a
// buffer sized for the kept taps). float64 runs the one-lane code, whose
// plain stores AddressSanitizer sees; float32 the vector paths, checked
// against the reference.
TEST(PoolFastSweep, TapsThatNeverReachTheInput) {
  std::mt19937_64 rng(20261130);
  double worst = 0;
  int checked = 0;
  for (PoolKind kind : {PoolKind::Max, PoolKind::Average, PoolKind::Lp})
    for (std::int64_t in : {4, 7, 33, 64, 200})
      for (std::int64_t stride : {1, 2, 3})
        for (const ints& spread : {ints{in - 1, in - 2, 1}, ints{in / 2 + 1, in / 2, 1},
                                   ints{3, 2, 1}}) {
          const std::int64_t dilation = spread[0], pad_begin = spread[1], pad_end = spread[2];
          for (bool two_d : {false, true}) {
            SweepCase c;
            c.kind = kind;
            c.shape = two_d ? Shape{1, 2, 3, in} : Shape{2, 1, in};
            c.attrs = two_d ? window_attrs({2, 3}, {1, stride}, {1, pad_begin, 0, pad_end},
                                           {1, dilation})
                            : window_attrs({3}, {stride}, {pad_begin, pad_end}, {dilation});
            c.draw = checked % 2 == 0 ? Draw::Spread : Draw::Ties;
            c.scale = -1.5;
            const auto valid = geometry_of(c);
            if (!valid) continue;
            const auto& [a, g] = *valid;
            ++checked;
            for (DType dtype : {DType::Float32, DType::Float64}) {
              c.dtype = dtype;
              SCOPED_TRACE(c.describe());
              for (int threads : {1, 2})
                visit_dtype(dtype, [&](auto tag) {
                  using T = decltype(tag);
                  if constexpr (std::is_floating_point_v<T>)
                    check_case<T>(c, g, a, rng, threads, worst);
                });
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
  EXPECT_GE(checked, 150);
  std::cout << "[ sweep ] " << checked << " cases with taps outside the input\n";
}

// A kernel as long as a long row: the fast paths keep one load mask per
// vector and tap, which here (20,000 taps over 1,250 vectors) took 0.7 s and
// 75 MB with AVX-512 and 15 s and 2 GB with AVX2 (found by a differential
// fuzzer). Past a bound they take the general paths.
TEST(PoolFastSweep, HugeKernelsKeepTheirMasksSmall) {
  const PoolAttributes a = checked_pool_attributes(
      PoolKind::Average, {{"kernel_shape", ints{20000}}, {"pads", ints{0, 1}},
                          {"count_include_pad", std::int64_t{1}}});
  const PoolGeometry g = pool_geometry(a, {1, 1, 20000});
  ASSERT_EQ(g.output_shape(), (Shape{1, 1, 2}));
  const std::vector<float> dy = {1.5f, -0.25f};
  std::vector<float> dx_ref(20000, 0.5f);
  average_pool_backward<float>(g, true, dy, 2.0, dx_ref);
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  for (PoolImpl impl : testing::pool_fast::fast_impls()) {
    SCOPED_TRACE(pool_impl_name(impl));
    const testing::pool_fast::ImplScope scope(impl);
    std::vector<float> dx(20000, 0.5f);
    fast::average_pool_backward<float>(g, true, dy, 2.0, dx, 1);
    EXPECT_EQ(dx, dx_ref);
  }
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "peak grew by that many KiB";
}

// The error in ulps cannot see the sign of a zero. AveragePool sums from 0:
// its forward gives +0 for a window of -0, and its gradient
// dx + scale * (0 + dy / divisor) gives +0 for dx = dy = -0, in every path.
TEST(PoolFastSweep, AverageSignedZerosAsTheReference) {
  const std::vector<std::pair<Shape, Attributes>> cases = {
      {{1, 2, 4, 64}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},     // fused
      {{1, 2, 5, 40}, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})},     // staged
      {{1, 2, 4, 6, 34}, window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
      {{2, 3, 7, 7}, window_attrs({7, 7}, {1, 1}, {0, 0, 0, 0})},      // one window per plane
      {{2, 3, 4, 4}, window_attrs({4, 4}, {1, 1}, {0, 0, 0, 0})},      // of whole vectors
      {{2, 3, 8, 8}, window_attrs({8, 8}, {1, 1}, {0, 0, 0, 0})},
  };
  for (const auto& [shape, attrs] : cases) {
    SCOPED_TRACE(to_string(shape));
    const PoolGeometry g =
        pool_geometry(checked_pool_attributes(PoolKind::Average, attrs), shape);
    Tensor dy(DType::Float32, g.output_shape()), dx_ref(DType::Float32, g.input_shape());
    for (float& v : dy.values<float>()) v = -0.0f;
    for (float& v : dx_ref.values<float>()) v = -0.0f;
    const Tensor dx0 = dx_ref.clone();  // also the forward's input
    const std::span<const float> x(dx0.values<float>());
    Tensor y_ref(DType::Float32, g.output_shape());
    average_pool_forward<float>(g, false, x, y_ref.values<float>());
    average_pool_backward<float>(g, false, std::span<const float>(dy.values<float>()), 1.0,
                                 dx_ref.values<float>());
    for (PoolImpl impl : testing::pool_fast::fast_impls()) {
      SCOPED_TRACE(pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor y(DType::Float32, g.output_shape());
      fast::average_pool_forward<float>(g, false, x, y.values<float>(), 2);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(y, y_ref));
      Tensor dx = dx0.clone();
      fast::average_pool_backward<float>(g, false, std::span<const float>(dy.values<float>()), 1.0,
                                         dx.values<float>(), 2);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(dx, dx_ref));
    }
  }
}

// MaxPool's gradient is dx + scale * (0 + dy) at each winner and dx + scale * 0
// elsewhere, in every path: dx = dy = -0 gives +0 everywhere.
TEST(PoolFastSweep, MaxGradientSignedZerosAsTheReference) {
  const std::vector<std::pair<Shape, Attributes>> cases = {
      {{1, 2, 5, 64}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},  // fused, a row in no window
      {{1, 2, 5, 40}, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})},  // scatter
      {{1, 2, 4, 6, 34}, window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
  };
  for (const auto& [shape, attrs] : cases) {
    SCOPED_TRACE(to_string(shape));
    const PoolGeometry g = pool_geometry(checked_pool_attributes(PoolKind::Max, attrs), shape);
    Tensor x(DType::Float32, g.input_shape());
    std::mt19937_64 rng(7);
    testing::pool_fast::fill_random<float>(x.values<float>(), rng, Draw::Spread, false);
    Tensor y(DType::Float32, g.output_shape()), am(DType::Int64, g.output_shape());
    max_pool_forward<float>(g, std::span<const float>(x.values<float>()), y.values<float>(),
                            am.values<std::int64_t>());
    Tensor offsets(DType::Int32, g.output_shape());
    for (std::size_t o = 0; o < offsets.values<std::int32_t>().size(); ++o)
      offsets.values<std::int32_t>()[o] = static_cast<std::int32_t>(
          am.values<std::int64_t>()[o] -
          static_cast<std::int64_t>(o) / g.output_plane() * g.input_plane());
    Tensor dy(DType::Float32, g.output_shape()), dx_ref(DType::Float32, g.input_shape());
    for (float& v : dy.values<float>()) v = -0.0f;
    for (float& v : dx_ref.values<float>()) v = -0.0f;
    const Tensor dx0 = dx_ref.clone();
    max_pool_backward<float>(am.values<std::int64_t>(), std::span<const float>(dy.values<float>()),
                             1.0, dx_ref.values<float>());
    for (PoolImpl impl : testing::pool_fast::fast_impls()) {
      SCOPED_TRACE(pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor dx = dx0.clone();
      fast::max_pool_backward<float>(g, offsets.values<std::int32_t>(),
                                     std::span<const float>(dy.values<float>()), 1.0,
                                     dx.values<float>(), 2);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(dx, dx_ref));
    }
  }
}

// lowest() is also what the kernels pad MaxPool's rows with: a real lowest()
// must still win its window by row-major order, over the padding too.
TEST(PoolFastSweep, MaxArgmaxOfLowestValuesAsTheReference) {
  const std::vector<std::pair<Shape, Attributes>> cases = {
      {{1, 3, 6, 8}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},           // fused, no clipping
      {{1, 3, 6, 8}, window_attrs({2, 2}, {2, 2}, {1, 1, 1, 1})},           // fused, padded
      {{1, 2, 4, 6, 8}, window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
      {{1, 3, 7, 9}, window_attrs({3, 3}, {2, 2}, {1, 1, 1, 1})},           // staged
  };
  std::vector<std::pair<Shape, Attributes>> all = cases;
  Attributes ceil = window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0});
  ceil["ceil_mode"] = std::int64_t{1};
  all.push_back({{1, 3, 7, 9}, ceil});  // fused, the last windows clipped
  std::mt19937_64 rng(11);
  for (const auto& [shape, attrs] : all) {
    SCOPED_TRACE(to_string(shape));
    const PoolGeometry g = pool_geometry(checked_pool_attributes(PoolKind::Max, attrs), shape);
    Tensor x(DType::Float32, shape);
    const float lowest = std::numeric_limits<float>::lowest();
    for (float& v : x.values<float>()) {
      const auto roll = rng() % 8;
      v = roll < 5 ? lowest : roll < 7 ? -std::numeric_limits<float>::infinity() : -1.0f;
    }
    const std::span<const float> cx(x.values<float>());
    Tensor y_ref(DType::Float32, g.output_shape()), am_ref(DType::Int64, g.output_shape());
    max_pool_forward<float>(g, cx, y_ref.values<float>(), am_ref.values<std::int64_t>());
    for (PoolImpl impl : testing::pool_fast::fast_impls()) {
      SCOPED_TRACE(pool_impl_name(impl));
      const testing::pool_fast::ImplScope scope(impl);
      Tensor y(DType::Float32, g.output_shape()), am(DType::Int64, g.output_shape());
      fast::max_pool_forward<float>(g, cx, y.values<float>(), am.values<std::int64_t>(), 2);
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(y, y_ref));
      EXPECT_TRUE(testing::pool_fast::bitwise_equal(am, am_ref));
      Tensor offsets(DType::Int32, g.output_shape());
      fast::max_pool_forward<float>(g, cx, y.values<float>(), offsets.values<std::int32_t>(), 2);
      for (std::size_t o = 0; o < offsets.values<std::int32_t>().size(); ++o)
        ASSERT_EQ(offsets.values<std::int32_t>()[o] +
                      static_cast<std::int64_t>(o) / g.output_plane() * g.input_plane(),
                  am_ref.values<std::int64_t>()[o])
            << "output " << o;
    }
  }
}

// Corrupt saved state must give an error naming it, on every level (the
// reference level checks before its kernel), never a write outside dX.
template <typename A>
void expect_refused(const PoolGeometry& g, const Tensor& argmax, const Tensor& dy,
                    std::int64_t output, A bad, const std::string& want) {
  Tensor corrupt = argmax.clone();
  corrupt.values<A>()[static_cast<std::size_t>(output)] = bad;
  std::vector<PoolImpl> levels = testing::pool_fast::fast_impls();
  levels.push_back(PoolImpl::Reference);
  for (PoolImpl impl : levels) {
    SCOPED_TRACE(pool_impl_name(impl));
    const testing::pool_fast::ImplScope scope(impl);
    Tensor dx(DType::Float32, g.input_shape());
    try {
      fast::max_pool_backward<float>(g, std::span<const A>(corrupt.values<A>()),
                                     std::span<const float>(dy.values<float>()), 1.0,
                                     dx.values<float>(), 2);
      ADD_FAILURE() << "no error for " << bad << " at output " << output;
    } catch (const RunError& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
  }
}

TEST(PoolFastSweep, MaxBackwardRefusesASavedArgmaxOutsideItsPlane) {
  const Shape shape{1, 2, 9, 20};  // 180 outputs per plane: not a multiple of 8 or 16
  const PoolGeometry g =
      pool_geometry(checked_pool_attributes(PoolKind::Max, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})),
                    shape);
  // The fused backward (2x2 windows, stride 2) checks as the scatter does.
  const PoolGeometry fused = pool_geometry(
      checked_pool_attributes(PoolKind::Max, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})),
      Shape{1, 2, 18, 40});
  {
    Tensor dy(DType::Float32, fused.output_shape()), offsets(DType::Int32, fused.output_shape());
    for (std::int32_t& v : offsets.values<std::int32_t>()) v = 0;
    expect_refused<std::int32_t>(fused, offsets, dy, 181, 720,
                                 "saved argmax offset 720 of output 181 is outside its plane 1 "
                                 "[0, 720)");
  }
  Tensor x(DType::Float32, shape), y(DType::Float32, g.output_shape());
  Tensor flat(DType::Int64, g.output_shape()), offsets(DType::Int32, g.output_shape());
  Tensor dy(DType::Float32, g.output_shape());
  std::mt19937_64 rng(7);
  testing::pool_fast::fill_random<float>(x.values<float>(), rng, Draw::Spread, false);
  const std::span<const float> cx(x.values<float>());
  max_pool_forward<float>(g, cx, y.values<float>(), flat.values<std::int64_t>());
  fast::max_pool_forward<float>(g, cx, y.values<float>(), offsets.values<std::int32_t>(), 1);
  // Output 180 + o belongs to plane 1, whose inputs are [180, 360).
  const std::string plane1 = " is outside its plane 1 ";
  for (const auto& [o, bad] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {183, 179},
           {359, 360},
           {280, -1},
           {200, std::numeric_limits<std::int64_t>::min()},
           {201, std::numeric_limits<std::int64_t>::max()}})
    expect_refused<std::int64_t>(g, flat, dy, o, bad,
                                 "saved argmax " + std::to_string(bad) + " of output " +
                                     std::to_string(o) + plane1 + "[180, 360)");
  for (const auto& [o, bad] : std::vector<std::pair<std::int64_t, std::int32_t>>{
           {183, 180},
           {359, -1},
           {200, std::numeric_limits<std::int32_t>::min()},
           {201, std::numeric_limits<std::int32_t>::max()}})
    expect_refused<std::int32_t>(g, offsets, dy, o, bad,
                                 "saved argmax offset " + std::to_string(bad) + " of output " +
                                     std::to_string(o) + plane1 + "[0, 180)");
}

}  // namespace
}  // namespace nodeflow
