// The fast AveragePool and LpPool kernels against the reference kernels where
// sums leave their type's range: inputs near the largest finite value
// (float32 1e38..3e38, float64 1e300..1.7e308) and in the subnormal range,
// forward and backward, float32 and float64, 1 and 3 threads, every
// instruction-set level this CPU has (portable, AVX2, AVX-512). LpPool
// gradients must be bitwise equal to the reference's (docs/pooling.md, "Fast
// and reference kernels"), and so must every result that is not finite (the
// fast kernels compute such windows again as the reference does); finite
// AveragePool/LpPool values and AveragePool gradients are sums in another
// order, held to the documented tolerance, and the sweep prints how many of
// them differ from the reference in their last bits, with the first one
// (case, element, both values, inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"
#include "support/layer_fixtures.hpp"
#include "unit/nodes/pooling/test_pool_fast_util.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::pool_fast::absolute;
using testing::pool_fast::sum_tolerance;
using testing::pool_fast::window_attrs;
using ints = std::vector<std::int64_t>;

/// Where the magnitudes of a tensor are drawn from.
enum class Range {
  Large,      ///< float32 [1e38, 3.4e38], float64 [1e300, 1.7e308], random sign
  Subnormal,  ///< below the smallest normal number, down to the smallest subnormal
  Mixed,      ///< each element large, subnormal, or zero
};

const char* range_name(Range r) {
  return r == Range::Large ? "large" : r == Range::Subnormal ? "subnormal" : "mixed";
}

template <typename T>
T draw(std::mt19937_64& rng, Range range) {
  using L = std::numeric_limits<T>;
  const bool f32 = std::is_same_v<T, float>;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double sign = rng() % 2 ? -1.0 : 1.0;
  const auto large = [&] {
    const double lo = f32 ? 1e38 : 1e300;
    const double hi = static_cast<double>(L::max());
    return static_cast<T>(sign * (lo + unit(rng) * (hi - lo)));
  };
  const auto subnormal = [&] {
    // Log-uniform over [denorm_min, min): every binade of the subnormals.
    const double lo = std::log2(static_cast<double>(L::denorm_min()));
    const double hi = std::log2(static_cast<double>(L::min()));
    return static_cast<T>(sign * std::exp2(lo + unit(rng) * (hi - lo)));
  };
  if (range == Range::Large) return large();
  if (range == Range::Subnormal) return subnormal();
  const auto roll = rng() % 5;
  return roll < 2 ? large() : roll < 4 ? subnormal() : T(0);
}

template <typename T>
Tensor drawn(const Shape& shape, std::mt19937_64& rng, Range range) {
  Tensor t(dtype_of_v<T>, shape);
  for (T& v : t.values<T>()) v = draw<T>(rng, range);
  return t;
}

template <typename T>
std::string exact(T v) {
  std::ostringstream s;
  s << std::setprecision(std::numeric_limits<T>::max_digits10) << v << " (" << std::hexfloat << v
    << ")";
  return s.str();
}

/// Empty when bitwise equal (NaN == NaN), else the first difference.
template <typename T>
std::string difference(const Tensor& got, const Tensor& want) {
  if (testing::pool_fast::bitwise_equal(got, want)) return {};
  const auto g = got.values<T>(), w = want.values<T>();
  for (std::size_t i = 0; i < g.size(); ++i)
    if (std::memcmp(&g[i], &w[i], sizeof(T)) != 0 && !(std::isnan(g[i]) && std::isnan(w[i])))
      return "element " + std::to_string(i) + ": fast " + exact(g[i]) + ", reference " +
             exact(w[i]);
  return "dtype or shape";
}

template <typename T>
std::string values_text(const Tensor& t) {
  std::ostringstream s;
  s << std::setprecision(std::numeric_limits<T>::max_digits10);
  const auto v = t.values<T>();
  for (std::size_t i = 0; i < v.size() && i < 64; ++i) s << (i ? ", " : "") << v[i];
  if (v.size() > 64) s << ", ... (" << v.size() << " values)";
  return s.str();
}

struct ExtremeCase {
  PoolKind kind = PoolKind::Average;
  Shape shape;
  Attributes attrs;
};

std::string describe(const ExtremeCase& c, DType dtype, Range x_range, Range dy_range,
                     double scale) {
  std::ostringstream s;
  s << pool_op_type(c.kind) << " " << dtype_name(dtype) << " x" << to_string(c.shape);
  for (const auto& [name, value] : c.attrs) s << " " << name << "=" << to_string(value);
  s << " x " << range_name(x_range) << ", dy " << range_name(dy_range) << ", scale " << scale;
  return s.str();
}

/// What the sweep found beyond its assertions.
struct Findings {
  int checked = 0;
  int order_differences = 0;  ///< finite results not bitwise equal, within the order tolerance
  std::string first;          ///< the first of them, described
};

// One case, one dtype, every level and thread count. LpPool gradients must be
// bitwise equal (docs/pooling.md); AveragePool and LpPool values and
// AveragePool gradients must be bitwise equal wherever the result is not
// finite, and otherwise within the documented summation-order tolerance, a
// difference there being counted and the first one kept in `found`.
template <typename T>
void check_extremes(const ExtremeCase& c, std::mt19937_64& rng, Findings& found) {
  const PoolAttributes a = checked_pool_attributes(c.kind, c.attrs);
  const PoolGeometry g = pool_geometry(a, c.shape);
  const bool average = c.kind == PoolKind::Average || c.kind == PoolKind::GlobalAverage;
  for (Range x_range : {Range::Large, Range::Subnormal, Range::Mixed})
    for (Range dy_range : {Range::Large, Range::Subnormal})
      for (double scale : {1.0, -0.5}) {
        const std::string what = describe(c, dtype_of_v<T>, x_range, dy_range, scale);
        SCOPED_TRACE(what);
        const Tensor x = drawn<T>(g.input_shape(), rng, x_range);
        const Tensor dy = drawn<T>(g.output_shape(), rng, dy_range);
        const Tensor dx0 = drawn<T>(g.input_shape(), rng, dy_range);
        const auto cx = std::span<const T>(x.values<T>());
        const auto cdy = std::span<const T>(dy.values<T>());
        Tensor y_ref(dtype_of_v<T>, g.output_shape()), dx_ref = dx0.clone();
        Tensor magnitude(dtype_of_v<T>, g.output_shape()), grad_magnitude(dtype_of_v<T>, g.input_shape());
        const Tensor ax = absolute<T>(x), ady = absolute<T>(dy);
        if (average) {
          average_pool_forward<T>(g, a.count_include_pad, cx, y_ref.values<T>());
          average_pool_backward<T>(g, a.count_include_pad, cdy, scale, dx_ref.values<T>());
          average_pool_forward<T>(g, a.count_include_pad, std::span<const T>(ax.values<T>()),
                                  magnitude.values<T>());
          average_pool_backward<T>(g, a.count_include_pad, std::span<const T>(ady.values<T>()),
                                   std::abs(scale), grad_magnitude.values<T>());
        } else {
          lp_pool_forward<T>(g, a.p, cx, y_ref.values<T>());
          lp_pool_backward<T>(g, a.p, cx, std::span<const T>(y_ref.values<T>()), cdy, scale,
                              dx_ref.values<T>());
          magnitude = absolute<T>(y_ref);
        }
        const auto mag = as_doubles(magnitude), grad_mag = as_doubles(grad_magnitude);
        ++found.checked;
        for (PoolImpl impl : testing::pool_fast::fast_impls())
          for (int threads : {1, 3}) {
            const std::string level =
                std::string(pool_impl_name(impl)) + ", " + std::to_string(threads) + " thread(s)";
            SCOPED_TRACE(level);
            const testing::pool_fast::ImplScope scope(impl);
            Tensor y(dtype_of_v<T>, g.output_shape()), dx = dx0.clone();
            if (average) {
              fast::average_pool_forward<T>(g, a.count_include_pad, cx, y.values<T>(), threads);
              fast::average_pool_backward<T>(g, a.count_include_pad, cdy, scale, dx.values<T>(),
                                             threads);
            } else {
              fast::lp_pool_forward<T>(g, a.p, cx, y.values<T>(), threads);
              fast::lp_pool_backward<T>(g, a.p, cx, std::span<const T>(y_ref.values<T>()), cdy,
                                        scale, dx.values<T>(), threads);
            }
            // Order-dependent sums: bitwise where not finite, else within the tolerance.
            const auto order_dependent = [&](const Tensor& got, const Tensor& want,
                                             const std::vector<double>& m, const char* which) {
              const std::string diff = difference<T>(got, want);
              if (diff.empty()) return;
              const auto gv = got.values<T>(), wv = want.values<T>();
              for (std::size_t i = 0; i < gv.size(); ++i)
                if (!std::isfinite(wv[i]) || !std::isfinite(gv[i])) {
                  EXPECT_TRUE(std::memcmp(&gv[i], &wv[i], sizeof(T)) == 0 ||
                              (std::isnan(gv[i]) && std::isnan(wv[i])))
                      << which << " element " << i << ": fast " << exact(gv[i]) << ", reference "
                      << exact(wv[i]) << "\n  x = [" << values_text<T>(x) << "]";
                }
              const double e = testing::pool_fast::error_in_ulps<T>(gv, wv, m);
              EXPECT_LE(e, sum_tolerance(g)) << which << " differs at " << diff;
              if (found.order_differences++ == 0)
                found.first = what + ", " + level + ": " + which + " " + diff + " (" +
                              std::to_string(e) + " ulps of the magnitude); x = [" +
                              values_text<T>(x) + "]";
            };
            order_dependent(y, y_ref, mag, "forward");
            if (average) {
              order_dependent(dx, dx_ref, grad_mag, "backward");
            } else {
              const std::string backward = difference<T>(dx, dx_ref);
              EXPECT_TRUE(backward.empty())
                  << "backward differs at " << backward << "\n  x = [" << values_text<T>(x)
                  << "]\n  dy = [" << values_text<T>(dy) << "]\n  dx before = ["
                  << values_text<T>(dx0) << "]";
            }
            if (::testing::Test::HasFailure()) return;
          }
      }
}

// Geometries of the sweep: the small windows of the fused and staged vector
// paths at full width (several vectors per row, a partial last one), 1-D and
// 3-D, padding with and without count_include_pad, ceil_mode, dilations and
// whole-plane windows.
std::vector<ExtremeCase> extreme_cases() {
  const auto with = [](Attributes a, const std::string& name, std::int64_t value) {
    a[name] = value;
    return a;
  };
  std::vector<ExtremeCase> cases;
  for (PoolKind kind : {PoolKind::Average, PoolKind::Lp}) {
    std::vector<std::pair<Shape, Attributes>> windows = {
        {{1, 2, 4, 64}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
        {{1, 2, 7, 37}, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})},
        {{2, 3, 11, 55}, with(window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0}), "ceil_mode", 1)},
        {{1, 2, 9, 40}, window_attrs({3, 2}, {2, 1}, {1, 0, 1, 1}, {1, 2})},
        {{2, 1, 70}, window_attrs({4}, {1}, {2, 1})},
        {{1, 2, 4, 6, 34}, window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
        {{2, 3, 7, 7}, window_attrs({7, 7}, {1, 1}, {0, 0, 0, 0})},
        {{2, 3, 8, 8}, window_attrs({8, 8}, {1, 1}, {0, 0, 0, 0})},
    };
    for (auto& [shape, attrs] : windows) {
      if (kind == PoolKind::Average) {
        cases.push_back({kind, shape, attrs});
        cases.push_back({kind, shape, with(attrs, "count_include_pad", 1)});
      } else {
        for (std::int64_t p : {1, 2, 3}) cases.push_back({kind, shape, with(attrs, "p", p)});
      }
    }
  }
  for (const Shape& shape : {Shape{2, 9, 4, 4}, Shape{2, 9, 5, 7}, Shape{1, 35, 9, 9}})
    cases.push_back({PoolKind::GlobalAverage, shape, {}});
  return cases;
}

TEST(PoolFastExtremes, LargeAndSubnormalInputsAgreeWithTheReferenceKernels) {
  std::mt19937_64 rng(20261202);
  Findings found;
  for (const ExtremeCase& c : extreme_cases()) {
    check_extremes<float>(c, rng, found);
    if (::testing::Test::HasFailure()) break;
    check_extremes<double>(c, rng, found);
    if (::testing::Test::HasFailure()) break;
  }
  RecordProperty("order_differences", found.order_differences);
  std::cout << "[ sweep ] " << found.checked << " large/subnormal cases on "
            << testing::pool_fast::fast_impls().size() << " fast level(s); "
            << found.order_differences
            << " finite AveragePool/LpPool results not bitwise equal (summation order)"
            << (found.first.empty() ? "" : "; first: " + found.first.substr(0, 600)) << "\n";
}

}  // namespace
}  // namespace nodeflow
