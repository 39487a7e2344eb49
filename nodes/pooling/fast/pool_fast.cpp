#include "nodes/pooling/fast/pool_fast.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "nodes/pooling/fast/pool_fast_plan.hpp"
#include "nodes/pooling/fast/pool_fast_table.hpp"
#include "nodes/pooling/pool_math.hpp"
#include "nodes/pooling/pool_window.hpp"
#include "nodes/pooling/reference/pool_kernels.hpp"

namespace nodeflow {
namespace {

PoolImpl detect_impl() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return PoolImpl::Avx512;
  if (__builtin_cpu_supports("avx2")) return PoolImpl::Avx2;
#endif
  return PoolImpl::Portable;
}

std::atomic<PoolImpl>& impl_in_use() {
  static std::atomic<PoolImpl> level = [] {
    const PoolImpl best = pool_impl_supported();
    const char* wanted = std::getenv("NODEFLOW_POOL_IMPL");
    if (wanted != nullptr)
      for (PoolImpl impl : {PoolImpl::Reference, PoolImpl::Portable, PoolImpl::Avx2, PoolImpl::Avx512})
        if (std::string(wanted) == pool_impl_name(impl) && impl <= best) return impl;
    return best;
  }();
  return level;
}

}  // namespace

const char* pool_impl_name(PoolImpl impl) {
  switch (impl) {
    case PoolImpl::Avx512:
      return "avx512";
    case PoolImpl::Avx2:
      return "avx2";
    case PoolImpl::Portable:
      return "portable";
    case PoolImpl::Reference:
      break;
  }
  return "reference";
}

PoolImpl pool_impl_supported() {
  static const PoolImpl best = detect_impl();
  return best;
}

PoolImpl pool_impl() { return impl_in_use().load(std::memory_order_relaxed); }

void set_pool_impl(PoolImpl impl) {
  if (impl > pool_impl_supported())
    throw InvalidAttribute(std::string("pooling kernels: this CPU does not support ") +
                           pool_impl_name(impl) + " (best: " +
                           pool_impl_name(pool_impl_supported()) + ")");
  impl_in_use().store(impl, std::memory_order_relaxed);
}

namespace fast {
namespace {

// Below about 256 KiB of traffic, waking a second thread costs more than it saves.
int team_for(int threads, std::int64_t elements, std::size_t element_size) {
  const auto bytes = static_cast<double>(elements) * static_cast<double>(element_size);
  return bytes < 262144.0 ? 1 : std::max(1, threads);
}

template <typename T>
int team_for(int threads, const PoolGeometry& g) {
  return team_for(threads, g.planes() * (g.input_plane() + g.output_plane()), sizeof(T));
}

// The fast kernels' plan, or false when the reference kernels must run.
// `scale`: the backward's, which sets the gradient sums' limit.
template <typename T>
bool plan_for(const PoolGeometry& g, Reduce reduce, bool count_include_pad, std::int64_t p,
              int team, Plan& plan, double scale = 1) {
  using A = accumulator_t<T>;
  if (pool_impl() == PoolImpl::Reference ||
      !make_plan(g, reduce, count_include_pad, p, team, plan))
    return false;
  if (reduce == Reduce::Lp) plan.value_floor = pool_math::lp_plain_floor<A>(p);
  plan.term_limit = pool_math::gradient_term_limit<A>(plan.overlap, scale);
  return true;
}

// With one thread, float64 and bfloat16 sums whose windows are disjoint along
// every axis (each input in at most one window) run faster in the reference
// kernels: their one loop per window overlaps the loads with the divisions,
// while the one-lane staged passes write each row's sums and read them back
// first (2x64x55x55 AveragePool k2 s2 ceil_mode: 1.2x-1.4x the reference's
// time in float64, 0.9x-1.1x in bfloat16). Not MaxPool: its fast kernels
// measured 0.65x (3-D k2 s2) to 1.1x (2-D k2 s2, within the noise). float16
// stays on the fast kernels, which convert each element once (a costly
// conversion, unlike bfloat16's shift) instead of once per window; float32
// has the fused vector kernels.
template <typename T>
bool reference_is_faster(const Plan& plan, int team) {
  if (!(std::is_same_v<T, double> || std::is_same_v<T, bfloat16>) || team != 1 ||
      plan.whole_plane || plan.reduce == Reduce::Max)
    return false;
  for (const AxisPlan& a : plan.axes)
    if ((a.t_end - a.t_first - 1) * a.dilation >= a.stride) return false;
  return true;
}

template <typename T>
const KernelTable<T>& kernels_for(const Plan& plan) {
  if constexpr (std::is_same_v<T, float>) {
    // Exponents above 2 need pow, which only the portable code has.
    if (plan.vector_ok && !(plan.reduce == Reduce::Lp && plan.p > 2)) {
#if defined(__x86_64__)
      if (pool_impl() == PoolImpl::Avx512) return avx512_kernels();
      if (pool_impl() == PoolImpl::Avx2) return avx2_kernels();
#endif
    }
  }
  return portable_kernels<T>();
}

// AveragePool's or LpPool's forward: the fast sums, with the windows they may
// have got wrong redone exactly, or reference() where the fast kernels do not run.
template <typename T, class Reference>
void sums_forward(const PoolGeometry& g, Reduce reduce, bool count_include_pad, std::int64_t p,
                  std::span<const T> x, std::span<T> y, int threads, Reference reference) {
  const int team = team_for<T>(threads, g);
  Plan plan;
  if (!plan_for<T>(g, reduce, count_include_pad, p, team, plan) ||
      reference_is_faster<T>(plan, team))
    return reference();
  const auto forward = kernels_for<T>(plan).forward;
  parallel_ranges(team, plan.forward_items(), [&](std::int64_t begin, std::int64_t end) {
    if (!forward(plan, x.data(), y.data(), Argmax{}, begin, end))
      redo_windows<T>(plan, x.data(), y.data(), begin, end);
  });
}

}  // namespace

template <typename T>
void average_pool_forward(const PoolGeometry& g, bool count_include_pad, std::span<const T> x,
                          std::span<T> y, int threads) {
  sums_forward<T>(g, Reduce::Average, count_include_pad, 0, x, y, threads,
                  [&] { nodeflow::average_pool_forward<T>(g, count_include_pad, x, y); });
}

template <typename T>
void average_pool_backward(const PoolGeometry& g, bool count_include_pad, std::span<const T> dy,
                           double scale, std::span<T> dx, int threads) {
  const int team = team_for<T>(threads, g);
  Plan plan;
  if (!plan_for<T>(g, Reduce::Average, count_include_pad, 0, team, plan, scale) ||
      reference_is_faster<T>(plan, team))
    return nodeflow::average_pool_backward<T>(g, count_include_pad, dy, scale, dx);
  const auto backward = kernels_for<T>(plan).average_backward;
  parallel_ranges(team, plan.backward_items(), [&](std::int64_t begin, std::int64_t end) {
    std::vector<GradientRedo> redo;  // elements whose sums could overflow
    backward(plan, dy.data(), scale, dx.data(), begin, end, redo);
    for (const GradientRedo& r : redo)
      average_backward_wide<T>(plan, dy.data(), scale, dx.data(), r);
  });
}

namespace {

// An argmax of A = int32 holds offsets within each plane; of int64, flat indices.
template <typename A>
constexpr bool kOffsets = std::is_same_v<A, std::int32_t>;

// Throws unless every saved argmax lies in its plane (the fast kernels check
// as they go; the reference kernels rely on this).
template <typename A>
void check_saved_argmax(const PoolGeometry& g, std::span<const A> argmax) {
  for (std::size_t o = 0; o < argmax.size(); ++o) {
    const std::int64_t plane = static_cast<std::int64_t>(o) / g.output_plane();
    const std::int64_t origin = kOffsets<A> ? 0 : plane * g.input_plane();
    if (argmax[o] < origin || argmax[o] >= origin + g.input_plane())
      throw_argmax_outside(argmax[o], static_cast<std::int64_t>(o), plane, g.input_plane(),
                           kOffsets<A>);
  }
}

// The flat input index of each saved argmax (o / output_plane is o's plane).
std::vector<std::int64_t> flat_indices(const PoolGeometry& g,
                                       std::span<const std::int32_t> offsets) {
  std::vector<std::int64_t> flat(offsets.size());
  for (std::size_t o = 0; o < flat.size(); ++o)
    flat[o] = static_cast<std::int64_t>(o) / g.output_plane() * g.input_plane() + offsets[o];
  return flat;
}

// MaxPool forward and backward for either form of the argmax.
template <typename T, typename A>
void max_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y, std::span<A> argmax,
                 int threads) {
  if (kOffsets<A> && g.input_plane() > std::numeric_limits<std::int32_t>::max())
    throw RunError("MaxPool: int32 plane offsets need planes of fewer than 2^31 elements, not " +
                   std::to_string(g.input_plane()));
  const int team = team_for<T>(threads, g);
  Plan plan;
  if (!plan_for<T>(g, Reduce::Max, false, 0, team, plan)) {
    if constexpr (kOffsets<A>) {
      std::vector<std::int64_t> flat(argmax.size());
      nodeflow::max_pool_forward<T>(g, x, y, flat);
      for (std::size_t o = 0; o < flat.size(); ++o)
        argmax[o] = static_cast<std::int32_t>(
            flat[o] - static_cast<std::int64_t>(o) / g.output_plane() * g.input_plane());
    } else {
      nodeflow::max_pool_forward<T>(g, x, y, argmax);
    }
    return;
  }
  const auto forward = kernels_for<T>(plan).forward;
  Argmax winners;
  if (!argmax.empty()) {
    if constexpr (kOffsets<A>)
      winners.offsets = argmax.data();
    else
      winners.flat = argmax.data();
  }
  parallel_ranges(team, plan.forward_items(), [&](std::int64_t begin, std::int64_t end) {
    forward(plan, x.data(), y.data(), winners, begin, end);
  });
}

template <typename T, typename A>
void max_backward(const PoolGeometry& g, std::span<const A> argmax, std::span<const T> dy,
                  double scale, std::span<T> dx, int threads) {
  const int team = team_for<T>(threads, g);
  Plan plan;
  if (!plan_for<T>(g, Reduce::Max, false, 0, team, plan)) {
    check_saved_argmax(g, argmax);
    if constexpr (kOffsets<A>)
      nodeflow::max_pool_backward<T>(flat_indices(g, argmax), dy, scale, dx);
    else
      nodeflow::max_pool_backward<T>(argmax, dy, scale, dx);
    return;
  }
  const auto backward = kernels_for<T>(plan).max_backward;
  SavedArgmax saved;
  if constexpr (kOffsets<A>)
    saved.offsets = argmax.data();
  else
    saved.flat = argmax.data();
  parallel_ranges(team, plan.planes, [&](std::int64_t begin, std::int64_t end) {
    backward(plan, saved, dy.data(), scale, dx.data(), begin, end);
  });
}

}  // namespace

template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int64_t> argmax, int threads) {
  max_forward<T>(g, x, y, argmax, threads);
}

template <typename T>
void max_pool_forward(const PoolGeometry& g, std::span<const T> x, std::span<T> y,
                      std::span<std::int32_t> offsets, int threads) {
  max_forward<T>(g, x, y, offsets, threads);
}

template <typename T>
void max_pool_backward(const PoolGeometry& g, std::span<const std::int64_t> argmax,
                       std::span<const T> dy, double scale, std::span<T> dx, int threads) {
  max_backward<T>(g, argmax, dy, scale, dx, threads);
}

template <typename T>
void max_pool_backward(const PoolGeometry& g, std::span<const std::int32_t> offsets,
                       std::span<const T> dy, double scale, std::span<T> dx, int threads) {
  max_backward<T>(g, offsets, dy, scale, dx, threads);
}

template <typename T>
void lp_pool_forward(const PoolGeometry& g, std::int64_t p, std::span<const T> x, std::span<T> y,
                     int threads) {
  sums_forward<T>(g, Reduce::Lp, false, p, x, y, threads,
                  [&] { nodeflow::lp_pool_forward<T>(g, p, x, y); });
}

template <typename T>
void lp_pool_backward(const PoolGeometry& g, std::int64_t p, std::span<const T> x,
                      std::span<const T> y, std::span<const T> dy, double scale, std::span<T> dx,
                      int threads) {
  const int team = team_for<T>(threads, g);
  Plan plan;
  if (!plan_for<T>(g, Reduce::Lp, false, p, team, plan))
    return nodeflow::lp_pool_backward<T>(g, p, x, y, dy, scale, dx);
  // The reference kernel's test, so both sum in the same type.
  const bool wide = !pool_math::gradient_fits(dy, most_windows_per_input(g), scale);
  parallel_ranges(team, plan.planes, [&](std::int64_t begin, std::int64_t end) {
    lp_backward_planes<T>(plan, x.data(), y.data(), dy.data(), scale, dx.data(), begin, end, wide);
  });
}

#define NODEFLOW_POOL_FAST_FLOAT(T)                                                                \
  template void average_pool_forward<T>(const PoolGeometry&, bool, std::span<const T>,             \
                                        std::span<T>, int);                                        \
  template void average_pool_backward<T>(const PoolGeometry&, bool, std::span<const T>, double,    \
                                         std::span<T>, int);                                       \
  template void max_pool_backward<T>(const PoolGeometry&, std::span<const std::int64_t>,           \
                                     std::span<const T>, double, std::span<T>, int);               \
  template void max_pool_backward<T>(const PoolGeometry&, std::span<const std::int32_t>,           \
                                     std::span<const T>, double, std::span<T>, int);               \
  template void lp_pool_forward<T>(const PoolGeometry&, std::int64_t, std::span<const T>,          \
                                   std::span<T>, int);                                             \
  template void lp_pool_backward<T>(const PoolGeometry&, std::int64_t, std::span<const T>,         \
                                    std::span<const T>, std::span<const T>, double, std::span<T>, \
                                    int);
#define NODEFLOW_POOL_FAST_MAX(T)                                                          \
  template void max_pool_forward<T>(const PoolGeometry&, std::span<const T>, std::span<T>, \
                                    std::span<std::int64_t>, int);                          \
  template void max_pool_forward<T>(const PoolGeometry&, std::span<const T>, std::span<T>, \
                                    std::span<std::int32_t>, int);

NODEFLOW_POOL_FAST_FLOAT(float)
NODEFLOW_POOL_FAST_FLOAT(double)
NODEFLOW_POOL_FAST_FLOAT(half)
NODEFLOW_POOL_FAST_FLOAT(bfloat16)
NODEFLOW_POOL_FAST_MAX(float)
NODEFLOW_POOL_FAST_MAX(double)
NODEFLOW_POOL_FAST_MAX(half)
NODEFLOW_POOL_FAST_MAX(bfloat16)
NODEFLOW_POOL_FAST_MAX(std::int8_t)
NODEFLOW_POOL_FAST_MAX(std::uint8_t)

}  // namespace fast
}  // namespace nodeflow
