// AveragePool, GlobalAveragePool and LpPool without intermediate overflow or
// underflow (the pooling semantics' "No intermediate overflow or underflow"):
// a value or gradient the output dtype can hold is returned, by the
// reference kernels and by every fast kernel level. Expected values come
// from exact arithmetic (the examples, worked by hand) or from an
// oracle in this file computed in long double (x86-64's 80-bit format: its
// 15-bit exponent holds any sum of float64 values), never from the kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"
#include "support/gradcheck.hpp"
#include "unit/nodes/pooling/test_pool_fast_util.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;
using LD = long double;
static_assert(std::numeric_limits<LD>::max_exponent > std::numeric_limits<double>::max_exponent,
              "the oracle needs a wider exponent than float64's");

/// Every kernel the pooling nodes may run: the reference and each fast
/// level this CPU has, with 1 and 2 threads.
struct Kernel {
  PoolImpl impl;
  int threads;
  std::string name() const {
    return std::string(pool_impl_name(impl)) + " x" + std::to_string(threads);
  }
};
std::vector<Kernel> every_kernel() {
  std::vector<Kernel> all{{PoolImpl::Reference, 1}};
  for (PoolImpl impl : testing::pool_fast::fast_impls())
    for (int threads : {1, 2}) all.push_back({impl, threads});
  return all;
}

PoolGeometry geometry(PoolKind kind, const Attributes& attrs, const Shape& shape) {
  return pool_geometry(checked_pool_attributes(kind, attrs), shape);
}

template <typename T>
std::vector<T> values(std::initializer_list<double> v) {
  std::vector<T> out;
  for (double d : v) out.push_back(static_cast<T>(d));
  return out;
}

// ---- The examples, through every kernel.

template <typename T>
void expect_average(PoolKind kind, const Attributes& attrs, const Shape& shape,
                    const std::vector<T>& x, double want) {
  const PoolGeometry g = geometry(kind, attrs, shape);
  for (const Kernel& k : every_kernel()) {
    SCOPED_TRACE(k.name());
    const testing::pool_fast::ImplScope scope(k.impl);
    std::vector<T> y(static_cast<std::size_t>(g.planes() * g.output_plane()));
    fast::average_pool_forward<T>(g, false, x, y, k.threads);
    for (const T& v : y) EXPECT_EQ(static_cast<double>(v), want);
  }
}

TEST(PoolRange, AverageOfFourLargeFloat32IsTheirValue) {
  // 4 x 3e38 sums to 1.2e39, beyond float32; the mean is 3e38.
  const auto x = values<float>({3e38, 3e38, 3e38, 3e38});
  const double want = static_cast<double>(3e38f);
  expect_average<float>(PoolKind::Average, {{"kernel_shape", ints{4}}}, {1, 1, 4}, x, want);
  expect_average<float>(PoolKind::Average, {{"kernel_shape", ints{2, 2}}}, {1, 1, 2, 2}, x, want);
  expect_average<float>(PoolKind::GlobalAverage, {}, {1, 1, 2, 2}, x, want);
  // A wide plane (the vector kernels' long loops) of 64 such values.
  const std::vector<float> wide(64, 3e38f);
  expect_average<float>(PoolKind::GlobalAverage, {}, {1, 1, 8, 8}, wide, want);
  expect_average<float>(PoolKind::Average, {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}},
                        {1, 1, 8, 8}, wide, want);
}

TEST(PoolRange, AverageOfFourLargeBfloat16IsTheirValue) {
  const auto x = values<bfloat16>({3e38, 3e38, 3e38, 3e38});
  const double want = static_cast<double>(static_cast<bfloat16>(3e38));
  expect_average<bfloat16>(PoolKind::Average, {{"kernel_shape", ints{4}}}, {1, 1, 4}, x, want);
  expect_average<bfloat16>(PoolKind::GlobalAverage, {}, {1, 1, 2, 2}, x, want);
}

TEST(PoolRange, AverageOfLargeFloat64PerWindow) {
  // A float64 sum of 1.5e308 + 1.5e308 overflows: the scaled sum does not.
  const auto x = values<double>({1.5e308, 1.5e308, 1.7e308, 1.7e308});
  const PoolGeometry g =
      geometry(PoolKind::Average, {{"kernel_shape", ints{2}}, {"strides", ints{2}}}, {1, 1, 4});
  for (const Kernel& k : every_kernel()) {
    SCOPED_TRACE(k.name());
    const testing::pool_fast::ImplScope scope(k.impl);
    std::vector<double> y(2);
    fast::average_pool_forward<double>(g, false, x, y, k.threads);
    EXPECT_EQ(y, (std::vector<double>{1.5e308, 1.7e308}));
  }
}

// dx of a node-level backward pass, through the node as the executor runs it.
std::vector<double> node_gradient(const char* op, const Attributes& attrs, const Tensor& x,
                                  const Tensor& dy, double lda = 1.0) {
  auto node = testing::make_node(op, attrs, true, lda);
  const auto fwd = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{Tensor(x.dtype(), x.shape())};
  testing::run_backward(*node, {x}, fwd, {dy}, grads);
  const Tensor dx = grads[0].cast(DType::Float64);
  return {dx.values<double>().begin(), dx.values<double>().end()};
}

TEST(PoolRange, AverageGradientSumsDoNotOverflow) {
  // Input 0 of [x0, x1] with kernel 2, pads 1 each side, count_include_pad 0
  // sits in windows [-1, 0] (divisor 1) and [0, 1] (divisor 2): it collects
  // dy0 + dy1 / 2 = 4.5e38 for dy = 3e38, which float32 cannot hold, and
  // lda_coeff 0.5 brings that to 2.25e38, which it can.
  const std::vector<float> dyv(3, 3e38f);
  const Tensor x = Tensor::from<float>({1, 1, 2}, std::span<const float>(values<float>({1, 2})));
  const Tensor dy = Tensor::from<float>({1, 1, 3}, std::span<const float>(dyv));
  const Attributes attrs{{"kernel_shape", ints{2}}, {"pads", ints{1, 1}}};
  const double want =
      static_cast<double>(static_cast<float>(0.5 * 1.5 * static_cast<double>(3e38f)));
  for (const Kernel& k : every_kernel()) {
    SCOPED_TRACE(k.name());
    const testing::pool_fast::ImplScope scope(k.impl);
    EXPECT_EQ(node_gradient("AveragePool", attrs, x, dy, 0.5), (std::vector<double>{want, want}));
  }
}

template <typename T>
struct LpCase {
  std::int64_t p;
  std::vector<T> x;
  std::vector<double> y_want;  ///< one window over all of x
  std::vector<double> dx_want;  ///< for dy = 1
  double tolerance;             ///< relative
};

template <typename T>
void expect_lp(const LpCase<T>& c) {
  const auto n = static_cast<std::int64_t>(c.x.size());
  const PoolGeometry g = geometry(PoolKind::Lp, {{"kernel_shape", ints{n}}, {"p", c.p}}, {1, 1, n});
  for (const Kernel& k : every_kernel()) {
    SCOPED_TRACE(k.name() + " p=" + std::to_string(c.p));
    const testing::pool_fast::ImplScope scope(k.impl);
    std::vector<T> y(1), dx(c.x.size(), T(0));
    fast::lp_pool_forward<T>(g, c.p, c.x, y, k.threads);
    const std::vector<T> dy{T(1)};
    fast::lp_pool_backward<T>(g, c.p, c.x, y, dy, 1.0, dx, k.threads);
    auto near = [&](double got, double want) {
      if (std::isnan(want)) return std::isnan(got);
      if (std::isinf(want)) return got == want;
      return std::abs(got - want) <= c.tolerance * std::abs(want);
    };
    EXPECT_TRUE(near(static_cast<double>(y[0]), c.y_want[0]))
        << static_cast<double>(y[0]) << " want " << c.y_want[0];
    for (std::size_t i = 0; i < dx.size(); ++i)
      EXPECT_TRUE(near(static_cast<double>(dx[i]), c.dx_want[i]))
          << "dx[" << i << "] " << static_cast<double>(dx[i]) << " want " << c.dx_want[i];
  }
}

constexpr double kCbrt2 = 1.2599210498948731648;  // 2^(1/3)
constexpr double kRsqrt2 = 0.70710678118654752440;

TEST(PoolRange, LpPoolPowersDoNotOverflow) {
  // (2 * 1e39)^(1/3) = 2^(1/3) * 1e13; dx = (1e13 / y)^2 = 2^(-2/3) each.
  const double d = 0.6299605249474366;  // 2^(-2/3)
  expect_lp<float>({3, values<float>({1e13, 1e13}), {kCbrt2 * 1e13}, {d, d}, 1e-6});
  expect_lp<double>({3, values<double>({1e110, 1e110}), {kCbrt2 * 1e110}, {d, d}, 1e-14});
  // p = 2 in float32: squares of 1e20 overflow; sqrt(2) * 1e20.
  expect_lp<float>(
      {2, values<float>({1e20, -1e20}), {1.4142135623730951e20}, {kRsqrt2, -kRsqrt2}, 1e-6});
}

TEST(PoolRange, LpPoolPowersDoNotUnderflow) {
  // Squares of 1e-30 underflow float32: sqrt(2) * 1e-30, dx = +-1/sqrt(2).
  expect_lp<float>({2, values<float>({1e-30, 0, -1e-30, 0}), {1.4142135623730951e-30},
                    {kRsqrt2, 0, -kRsqrt2, 0}, 1e-6});
  expect_lp<double>({2, values<double>({1e-200, 0, -1e-200, 0}), {1.4142135623730951e-200},
                     {kRsqrt2, 0, -kRsqrt2, 0}, 1e-14});
  // float16 sums in float32, where (1e-4)^12 is 0: 2^(1/12) * half(1e-4),
  // dx = 2^(-11/12) each (values from Python's float64).
  expect_lp<half>({12, values<half>({1e-4, 1e-4}), {0.00010596389009564505},
                   {0.5297315471796477, 0.5297315471796477}, 2e-3});
}

TEST(PoolRange, LpPoolWithAHugeExponentTendsToTheMaximum) {
  // (5^p + 3^p + 2^p)^(1/p) = 5 (1 + 0.6^p + 0.4^p)^(1/p): 5 to far below
  // float32's precision for p = 1000; the gradient goes to the maximum.
  expect_lp<float>({1000, values<float>({3, -5, 2}), {5}, {0, -1, 0}, 1e-6});
  // In float64 0.6^999 = 2.36e-222 survives (Python: 0.6 ** 999).
  expect_lp<double>(
      {1000, values<double>({3, -5, 2}), {5}, {2.3610171039723897e-222, -1, 0}, 1e-12});
  expect_lp<float>({std::int64_t{1} << 40, values<float>({1e-20, 4e30, -4e30}), {4e30},
                    {0, 1, -1}, 1e-6});
}

// The gradient of a window whose y overflowed to infinity or is subnormal
// (the forward's value is right, but has lost |x| / y): two equal elements
// a give y = 2^(1/p) a and dx = (a / y)^(p-1) = 2^(-(p-1)/p) each, for a
// seed dy = 1, whatever y rounds to.
template <typename T>
void expect_lp_of_two_equal(double a, double tolerance, const ints& ps = {2, 3, 200}) {
  for (std::int64_t p : ps) {
    const double root = std::pow(2.0, 1.0 / static_cast<double>(p));
    const double d = std::pow(2.0, -static_cast<double>(p - 1) / static_cast<double>(p));
    const auto t = static_cast<double>(static_cast<T>(a));
    // y as the output dtype rounds the exact value: infinity above its range.
    const double exact = root * t;
    const double y = exact > static_cast<double>(std::numeric_limits<T>::max())
                         ? INFINITY
                         : static_cast<double>(static_cast<T>(exact));
    expect_lp<T>({p, values<T>({a, -a}), {y}, {d, -d}, tolerance});
  }
}

TEST(PoolRange, LpPoolGradientWhereTheValueOverflows) {
  // y = inf for p = 2 and 3; for p = 200, 2^(1/200) = 1.00347 needs an
  // element nearer the largest value. (Where y is a normal value it is used
  // as it is: its rounding, times p - 1, is the gradient's error.)
  expect_lp_of_two_equal<float>(3e38, 1e-6, {2, 3});
  expect_lp_of_two_equal<float>(3.4e38, 1e-6, {2, 3, 200});
  expect_lp_of_two_equal<double>(1.7e308, 1e-14, {2, 3});
  expect_lp_of_two_equal<double>(1.795e308, 1e-14, {2, 3, 200});
  expect_lp_of_two_equal<half>(60000, 2e-3, {2, 3});
  expect_lp_of_two_equal<half>(65400, 2e-3, {2, 3, 200});
}

TEST(PoolRange, LpPoolGradientWhereTheValueIsSubnormal) {
  // The smallest subnormals: y rounds to the element itself.
  expect_lp_of_two_equal<float>(1e-45, 1e-6);
  expect_lp_of_two_equal<double>(5e-324, 1e-14);
  expect_lp_of_two_equal<half>(6e-8, 2e-3);
  expect_lp_of_two_equal<bfloat16>(1e-40, 1e-2);
  // A subnormal with a few bits left.
  expect_lp_of_two_equal<float>(3e-42, 1e-6);
  expect_lp_of_two_equal<double>(1e-320, 1e-14);
}

// The NaN and infinity rule, the same for every p: a NaN in the window makes
// y NaN and every gradient of the window NaN (zeros included); an infinity
// makes y +inf, its own gradient NaN (inf / inf) and a finite element's
// gradient dy * sign(x) * 0^(p-1) (sign(x) for p = 1, 0 above).
TEST(PoolRange, NanAndInfinityPropagateTheSameWayForEveryP) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  for (std::int64_t p : {1, 2, 3, 50}) {
    expect_lp<float>({p, values<float>({1, nan, -2, 0}), {nan}, {nan, nan, nan, nan}, 0});
    expect_lp<double>({p, values<double>({0, 0, nan}), {nan}, {nan, nan, nan}, 0});
    const double finite = p == 1 ? 1 : 0;
    expect_lp<float>({p, values<float>({1, inf, -2, 0}), {inf}, {finite, nan, -finite, 0}, 0});
    expect_lp<double>({p, values<double>({-inf, 3}), {inf}, {nan, finite}, 0});
  }
}

// ---- A seeded sweep with magnitudes near the ends of each dtype's range,
// against a long double oracle.

/// One window: its input offsets in the plane and AveragePool's divisors.
struct Window {
  std::vector<std::int64_t> inputs;
  std::int64_t padded = 1;
};

/// The windows of a plane, row-major, worked out here from the resolved axes.
std::vector<Window> windows_of(const PoolGeometry& g) {
  std::vector<Window> all{Window{{0}, 1}};
  for (const WindowAxis& a : g.axes) {
    std::vector<Window> next;
    for (const Window& w : all)
      for (std::int64_t o = 0; o < a.out; ++o) {
        Window n;
        n.padded = w.padded;
        std::int64_t padded = 0;
        for (std::int64_t t = 0; t < a.kernel; ++t) {
          const std::int64_t pos = o * a.stride - a.pad_begin + t * a.dilation;
          if (pos >= -a.pad_begin && pos < a.in + a.pad_end) ++padded;
          if (pos < 0 || pos >= a.in) continue;
          for (std::int64_t base : w.inputs) n.inputs.push_back(base * a.in + pos);
        }
        n.padded *= padded;
        next.push_back(n);
      }
    all.swap(next);
  }
  return all;
}

template <typename T>
struct Ranges {
  static LD max() { return static_cast<LD>(static_cast<double>(std::numeric_limits<T>::max())); }
  static LD min_normal() {
    return static_cast<LD>(static_cast<double>(std::numeric_limits<T>::min()));
  }
};

struct RangeCase {
  PoolKind kind = PoolKind::Average;
  Attributes attrs;
  Shape shape;
  /// Magnitudes near the dtype's largest, near its smallest normal, or
  /// mixed: about 1 with one element in 8 near the largest (so some windows
  /// and gradient items overflow the accumulator and their neighbours not);
  /// or (LpPool only) subnormal, so y is subnormal and its backward must not
  /// take |x| / y from it.
  enum class Regime { Huge, Tiny, Mixed, Subnormal } regime = Regime::Huge;
  double scale = 1;

  std::string describe() const {
    std::ostringstream s;
    s << pool_op_type(kind) << " x" << to_string(shape);
    for (const auto& [name, value] : attrs) s << " " << name << "=" << to_string(value);
    s << (regime == Regime::Huge        ? " huge"
          : regime == Regime::Tiny      ? " tiny"
          : regime == Regime::Subnormal ? " subnormal"
                                        : " mixed")
      << " scale=" << scale;
    return s.str();
  }
};

std::int64_t uniform_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

/// `subnormal`: an LpPool case of the Subnormal regime.
RangeCase random_case(std::mt19937_64& rng, bool subnormal) {
  RangeCase c;
  const int kind = subnormal ? 3 : static_cast<int>(uniform_int(rng, 0, 4));
  c.kind = kind < 2 ? PoolKind::Average : kind == 2 ? PoolKind::GlobalAverage : PoolKind::Lp;
  const auto rank = static_cast<std::size_t>(uniform_int(rng, 1, 3));
  c.shape = {uniform_int(rng, 1, 2), uniform_int(rng, 1, 2)};
  const std::int64_t largest = rank == 1 ? 40 : rank == 2 ? 19 : 7;
  for (std::size_t i = 0; i < rank; ++i) c.shape.push_back(uniform_int(rng, 1, largest));
  c.regime = subnormal ? RangeCase::Regime::Subnormal
                       : static_cast<RangeCase::Regime>(uniform_int(rng, 0, 2));
  const double scales[] = {1, 1, 0.25, -0.5, 1e-40};
  c.scale = scales[uniform_int(rng, 0, 4)];
  if (c.kind == PoolKind::GlobalAverage) return c;
  ints kernel, strides, dilations, pads(2 * rank);
  for (std::size_t i = 0; i < rank; ++i) {
    kernel.push_back(uniform_int(rng, 1, 4));
    strides.push_back(uniform_int(rng, 1, 3));
    dilations.push_back(uniform_int(rng, 0, 3) == 0 ? 2 : 1);
    const std::int64_t ext = dilations[i] * (kernel[i] - 1) + 1;
    pads[i] = uniform_int(rng, 0, ext - 1);
    pads[i + rank] = uniform_int(rng, 0, ext - 1);
  }
  c.attrs = {{"kernel_shape", kernel}, {"strides", strides}, {"dilations", dilations},
             {"pads", pads}, {"ceil_mode", uniform_int(rng, 0, 1)}};
  if (c.kind == PoolKind::Average)
    c.attrs["count_include_pad"] = uniform_int(rng, 0, 1);
  else
    c.attrs["p"] = subnormal ? ints{1, 2, 3, 60, 200}[static_cast<std::size_t>(uniform_int(rng, 0, 4))]
                             : ints{1, 2, 3, 60}[static_cast<std::size_t>(uniform_int(rng, 0, 3))];
  return c;
}

template <typename T>
double eps_of() {
  return testing::pool_fast::eps_of<T>();
}

/// |got - want| within `units` of eps(T) |want| + eps(A) magnitude + the
/// smallest subnormal; NaN and infinities must match exactly.
template <typename T>
bool close(T got_t, LD want, LD magnitude, double units) {
  const auto got = static_cast<LD>(static_cast<double>(got_t));
  if (std::isnan(want)) return std::isnan(got);
  const LD unit = static_cast<LD>(eps_of<T>()) * std::abs(want) +
                  static_cast<LD>(eps_of<accumulator_t<T>>()) * magnitude +
                  static_cast<LD>(testing::pool_fast::tiniest<T>());
  return std::isfinite(got) && std::abs(got - want) <= static_cast<LD>(units) * unit;
}

template <typename T>
void check_case(const RangeCase& c, const PoolGeometry& g, const PoolAttributes& a,
                std::mt19937_64& rng, int& compared) {
  const std::vector<Window> windows = windows_of(g);
  const std::int64_t in_plane = g.input_plane(), out_plane = g.output_plane();
  double taps = 1;
  for (const WindowAxis& ax : g.axes) taps *= static_cast<double>(ax.kernel);
  const bool lp = c.kind == PoolKind::Lp;
  // Magnitudes: near the largest value (Lp: divided by the taps, so the
  // norm fits), or near the smallest normal one, or mixed.
  using Regime = RangeCase::Regime;
  const bool tiny = c.regime == Regime::Tiny;
  const bool subnormal = c.regime == Regime::Subnormal;
  const LD largest = Ranges<T>::max() / (lp ? static_cast<LD>(2 * taps) : 1);
  // Subnormal: a quarter of T's digits left at the top, fewer below.
  const LD top = tiny        ? Ranges<T>::min_normal() * 4
                 : subnormal ? std::ldexp(Ranges<T>::min_normal(),
                                          -(3 * std::numeric_limits<T>::digits) / 4)
                             : largest;
  std::uniform_real_distribution<double> u(0.25, 1.0);
  std::bernoulli_distribution negative(0.5), rare(0.125);
  auto draw = [&](LD m) {
    if (c.regime == Regime::Mixed && !rare(rng)) m = 1;
    const LD v = static_cast<LD>(u(rng)) * m;
    return static_cast<T>(static_cast<double>(negative(rng) ? -v : v));
  };
  std::vector<T> x(static_cast<std::size_t>(g.planes() * in_plane));
  for (T& v : x) v = draw(top);
  const std::size_t outs = static_cast<std::size_t>(g.planes() * out_plane);
  // The oracle's forward.
  std::vector<LD> y_want(outs), y_magnitude(outs);  // magnitude: of the sum's terms
  for (std::int64_t plane = 0; plane < g.planes(); ++plane)
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const Window& win = windows[w];
      LD r = 0;
      if (lp) {
        // Scaled by the largest |x|: float64's extremes to the 60th power
        // leave even long double's range.
        LD m = 0;
        for (std::int64_t i : win.inputs)
          m = std::max(m, std::abs(static_cast<LD>(static_cast<double>(x[plane * in_plane + i]))));
        for (std::int64_t i : win.inputs)
          r += std::pow(std::abs(static_cast<LD>(static_cast<double>(x[plane * in_plane + i]))) / m,
                        static_cast<LD>(a.p));
        r = m * std::pow(r, 1 / static_cast<LD>(a.p));
        y_magnitude[plane * out_plane + w] = r;
      } else {
        LD m = 0;
        for (std::int64_t i : win.inputs) {
          r += static_cast<double>(x[plane * in_plane + i]);
          m += std::abs(static_cast<LD>(static_cast<double>(x[plane * in_plane + i])));
        }
        const auto divisor = static_cast<LD>(
            a.count_include_pad ? win.padded : static_cast<std::int64_t>(win.inputs.size()));
        r /= divisor;
        y_magnitude[plane * out_plane + w] = m / divisor;
      }
      y_want[plane * out_plane + w] = r;
    }
  // The backward's inputs: y as the oracle rounds it to T, dy near the top
  // of the range (huge) or its bottom (about 1 for subnormal windows, whose
  // gradients are about 1), dx prefilled.
  std::vector<T> y_in(outs), dy(outs), dx0(x.size());
  for (std::size_t o = 0; o < outs; ++o) y_in[o] = static_cast<T>(static_cast<double>(y_want[o]));
  for (T& v : dy)
    v = draw(tiny ? Ranges<T>::min_normal() * 4 : subnormal ? 1 : Ranges<T>::max());
  for (T& v : dx0)
    v = uniform_int(rng, 0, 1) ? T(0)
                           : draw(tiny        ? Ranges<T>::min_normal()
                                  : subnormal ? 1
                                              : Ranges<T>::max() / 4);
  std::vector<LD> dx_want(x.size()), dx_magnitude(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx_want[i] = static_cast<double>(dx0[i]);
  for (std::size_t i = 0; i < x.size(); ++i) dx_magnitude[i] = std::abs(dx_want[i]);
  const auto scale = static_cast<LD>(c.scale);
  for (std::int64_t plane = 0; plane < g.planes(); ++plane)
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const Window& win = windows[w];
      const std::size_t o = static_cast<std::size_t>(plane * out_plane) + w;
      const auto g_out = static_cast<LD>(static_cast<double>(dy[o]));
      // |x| / y from y as the backward receives it where that is a normal
      // T (it carries T's precision: the documented route), else from the
      // exact value (a subnormal or infinite y has lost the ratio).
      const auto y_t = static_cast<LD>(static_cast<double>(y_in[o]));
      const bool normal =
          std::abs(y_t) >= Ranges<T>::min_normal() && std::abs(y_t) <= Ranges<T>::max();
      const LD yo = normal || y_t == 0 || std::isnan(y_t) ? y_t : y_want[o];
      for (std::int64_t i : win.inputs) {
        const auto at = static_cast<std::size_t>(plane * in_plane + i);
        const auto xi = static_cast<LD>(static_cast<double>(x[at]));
        LD term = 0;
        if (!lp) {
          term = g_out / static_cast<LD>(a.count_include_pad
                                             ? win.padded
                                             : static_cast<std::int64_t>(win.inputs.size()));
        } else if (yo != 0 && xi != 0) {
          term = (xi < 0 ? -g_out : g_out) * std::pow(std::abs(xi) / yo, static_cast<LD>(a.p - 1));
        }
        dx_want[at] += scale * term;
        // LpPool's factor (|x|/y)^(p-1) carries p-1 times the ratio's rounding.
        dx_magnitude[at] += std::abs(scale * term) * static_cast<LD>(lp ? a.p : 1);
      }
    }

  const double units = std::max(2.0, taps) + 2;
  for (const Kernel& k : every_kernel()) {
    SCOPED_TRACE(k.name());
    const testing::pool_fast::ImplScope scope(k.impl);
    std::vector<T> y(outs), dx = dx0;
    if (lp) {
      fast::lp_pool_forward<T>(g, a.p, x, y, k.threads);
      fast::lp_pool_backward<T>(g, a.p, x, y_in, dy, c.scale, dx, k.threads);
    } else {
      fast::average_pool_forward<T>(g, a.count_include_pad, x, y, k.threads);
      fast::average_pool_backward<T>(g, a.count_include_pad, dy, c.scale, dx, k.threads);
    }
    for (std::size_t o = 0; o < outs; ++o) {
      if (std::abs(y_want[o]) > Ranges<T>::max()) continue;  // not representable
      ++compared;
      ASSERT_TRUE(close<T>(y[o], y_want[o], y_magnitude[o], units))
          << "y[" << o << "] = " << static_cast<double>(y[o]) << ", want "
          << static_cast<double>(y_want[o]);
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::abs(dx_want[i]) > Ranges<T>::max()) continue;
      ++compared;
      ASSERT_TRUE(close<T>(dx[i], dx_want[i], dx_magnitude[i], units))
          << "dx[" << i << "] = " << static_cast<double>(dx[i]) << ", want "
          << static_cast<double>(dx_want[i]);
    }
  }
}

template <typename T>
void sweep(std::uint64_t seed, bool subnormal = false) {
  std::mt19937_64 rng(seed);
  int cases = 0, compared = 0;
  while (cases < 150) {
    const RangeCase c = random_case(rng, subnormal);
    PoolAttributes a;
    PoolGeometry g;
    try {
      a = checked_pool_attributes(c.kind, c.attrs);
      g = pool_geometry(a, c.shape);
    } catch (const Error&) {
      continue;  // an invalid combination: the geometry tests cover those
    }
    ++cases;
    SCOPED_TRACE(c.describe());
    check_case<T>(c, g, a, rng, compared);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::cout << "[ range ] " << cases << " cases, " << compared << " values compared\n";
}

TEST(PoolRange, SweepFloat32NearTheEndsOfItsRange) { sweep<float>(1717); }
TEST(PoolRange, SweepFloat64NearTheEndsOfItsRange) { sweep<double>(1718); }
TEST(PoolRange, SweepFloat16NearTheEndsOfItsRange) { sweep<half>(1719); }
TEST(PoolRange, SweepBfloat16NearTheEndsOfItsRange) { sweep<bfloat16>(1720); }
TEST(PoolRange, SweepFloat32LpPoolSubnormalWindows) { sweep<float>(1721, true); }
TEST(PoolRange, SweepFloat64LpPoolSubnormalWindows) { sweep<double>(1722, true); }
TEST(PoolRange, SweepFloat16LpPoolSubnormalWindows) { sweep<half>(1723, true); }
TEST(PoolRange, SweepBfloat16LpPoolSubnormalWindows) { sweep<bfloat16>(1724, true); }

}  // namespace
}  // namespace nodeflow
