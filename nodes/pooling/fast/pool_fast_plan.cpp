#include "nodes/pooling/fast/pool_fast_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "nodes/pooling/pool_window.hpp"

namespace nodeflow::fast {
namespace {

// Scratch buffers of one work item stay well inside a core's L2 cache.
constexpr std::int64_t kScratchBudget = std::int64_t{1} << 15;
// Tap tables are never allowed to dwarf the tensors they describe.
constexpr std::int64_t kMaxTableEntries = std::int64_t{1} << 26;
// Lane offsets of the vector kernels are int32.
constexpr std::int64_t kLaneLimit = std::int64_t{1} << 30;

bool make_axis(const WindowAxis& g, bool count_include_pad, AxisPlan& a) {
  static_cast<WindowAxis&>(a) = g;
  const auto outs = static_cast<std::size_t>(a.out);
  a.tap_lo.resize(outs);
  a.tap_hi.resize(outs);
  a.divisor.resize(outs);
  a.t_first = a.kernel;
  a.t_end = 0;
  std::int64_t entries = 0;
  for (std::int64_t o = 0; o < a.out; ++o) {
    const auto [lo, hi] = a.valid_taps(o);
    const auto i = static_cast<std::size_t>(o);
    a.tap_lo[i] = lo;
    a.tap_hi[i] = hi;
    a.divisor[i] = count_include_pad ? a.padded_taps(o).size() : hi - lo;
    if (hi > lo) {
      a.t_first = std::min(a.t_first, lo);
      a.t_end = std::max(a.t_end, hi);
    }
    entries += hi - lo;
    if (entries > kMaxTableEntries) return false;
  }
  if (a.t_end <= a.t_first || a.t_end - a.t_first > 2 * (a.in + a.out) + 64) return false;

  const auto taps = static_cast<std::size_t>(a.t_end - a.t_first);
  a.out_lo.resize(taps);
  a.out_hi.resize(taps);
  for (std::int64_t t = a.t_first; t < a.t_end; ++t) {
    const auto [lo, hi] = a.outputs_with_valid_tap(t);
    a.out_lo[static_cast<std::size_t>(t - a.t_first)] = lo;
    a.out_hi[static_cast<std::size_t>(t - a.t_first)] = hi;
  }

  // Windows per input position, ascending: counted, then filled in output order.
  a.window_begin.assign(static_cast<std::size_t>(a.in) + 1, 0);
  for (std::int64_t o = 0; o < a.out; ++o)
    for (std::int64_t t = a.tap_lo[static_cast<std::size_t>(o)];
         t < a.tap_hi[static_cast<std::size_t>(o)]; ++t)
      ++a.window_begin[static_cast<std::size_t>(a.position(o, t)) + 1];
  for (std::size_t i = 1; i < a.window_begin.size(); ++i) a.window_begin[i] += a.window_begin[i - 1];
  a.windows.resize(static_cast<std::size_t>(entries));
  std::vector<std::int64_t> fill(a.window_begin.begin(), a.window_begin.end() - 1);
  for (std::int64_t o = 0; o < a.out; ++o)
    for (std::int64_t t = a.tap_lo[static_cast<std::size_t>(o)];
         t < a.tap_hi[static_cast<std::size_t>(o)]; ++t)
      a.windows[static_cast<std::size_t>(fill[static_cast<std::size_t>(a.position(o, t))]++)] = o;
  return true;
}

std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= v[i];
  return n;
}

// Each axis's input and output length.
void axis_lengths(const Plan& plan, std::vector<std::int64_t>& in, std::vector<std::int64_t>& out) {
  for (const AxisPlan& a : plan.axes) {
    in.push_back(a.in);
    out.push_back(a.out);
  }
}

// Largest scratch buffer a forward chunk of `chunk` axis-0 outputs needs: the
// stages keep the rows of the input slab the chunk reads and reduce the axes
// from the last to axis 1 (axis 0 writes the output).
std::int64_t forward_scratch(const Plan& plan, std::int64_t chunk) {
  const std::size_t n = plan.axes.size();
  std::vector<std::int64_t> in, out;
  axis_lengths(plan, in, out);
  const AxisPlan& a0 = plan.axes[0];
  std::int64_t most = 0;
  for (std::int64_t ob = 0; ob < a0.out; ob += chunk) {
    std::int64_t r0 = 0, r1 = 0;
    axis_slab(a0, ob, std::min(a0.out, ob + chunk), r0, r1);
    const std::int64_t slab = r1 - r0;
    // After reducing axis k (k >= 1): slab x in[1..k) x out[k..n).
    for (std::size_t k = 1; k < n; ++k)
      most = std::max(most, slab * product(in, 1, k) * product(out, k, n));
  }
  return most;
}

// Largest scratch buffer an average-backward chunk of `chunk` axis-0 inputs
// needs: dy/divisor for the windows touching the chunk, then the gradient
// spread back one axis at a time from axis 0 to axis n-2 (the last axis is
// spread straight into dx).
std::int64_t backward_scratch(const Plan& plan, std::int64_t chunk) {
  const std::size_t n = plan.axes.size();
  std::vector<std::int64_t> in, out;
  axis_lengths(plan, in, out);
  const AxisPlan& a0 = plan.axes[0];
  std::int64_t most = 0;
  for (std::int64_t ib = 0; ib < a0.in; ib += chunk) {
    const std::int64_t ie = std::min(a0.in, ib + chunk);
    const auto first = a0.windows.begin() + a0.window_begin[static_cast<std::size_t>(ib)];
    const auto last = a0.windows.begin() + a0.window_begin[static_cast<std::size_t>(ie)];
    const auto [lo, hi] = std::minmax_element(first, last);
    const std::int64_t windows = first == last ? 0 : *hi - *lo + 1;
    most = std::max(most, windows * product(out, 1, n));
    // After spreading axis k (0 <= k <= n-2): rows x in[1..k] x out[k+1..n).
    for (std::size_t k = 0; k + 1 < n; ++k)
      most = std::max(most, (ie - ib) * product(in, 1, k + 1) * product(out, k + 1, n));
  }
  return most;
}

// Halves a chunk until its scratch fits the budget and there are enough items
// for the threads to share evenly.
template <typename Scratch>
std::int64_t pick_chunk(std::int64_t extent, std::int64_t planes, int threads, Scratch scratch) {
  std::int64_t chunk = extent;
  while (chunk > 1 && scratch(chunk) > kScratchBudget) chunk = (chunk + 1) / 2;
  const std::int64_t wanted = 4 * static_cast<std::int64_t>(threads);
  while (chunk > 1 && planes * ceil_div(extent, chunk) < wanted) chunk = (chunk + 1) / 2;
  return chunk;
}

}  // namespace

void axis_slab(const AxisPlan& a, std::int64_t ob, std::int64_t oe, std::int64_t& r0,
               std::int64_t& r1) {
  r0 = a.in;
  r1 = 0;
  for (std::int64_t o = ob; o < oe; ++o) {
    const auto i = static_cast<std::size_t>(o);
    r0 = std::min(r0, a.position(o, a.tap_lo[i]));
    r1 = std::max(r1, a.position(o, a.tap_hi[i] - 1) + 1);
  }
}

bool make_plan(const PoolGeometry& g, Reduce reduce, bool count_include_pad, std::int64_t p,
               int threads, Plan& plan) {
  plan = Plan{};
  plan.reduce = reduce;
  plan.count_include_pad = count_include_pad;
  plan.p = p;
  plan.planes = g.planes();
  plan.overlap = most_windows_per_input(g);
  plan.in_plane = g.input_plane();
  plan.out_plane = g.output_plane();
  if (g.axes.empty() || plan.in_plane > std::numeric_limits<std::int32_t>::max()) return false;

  plan.whole_plane = true;
  std::vector<WindowAxis> axes = g.axes;
  if (axes.size() == 1) {
    // 1-D runs as 2-D with a unit first axis: one code path for every rank.
    WindowAxis unit;
    unit.in = unit.out = 1;
    axes.insert(axes.begin(), unit);
  }
  for (const WindowAxis& ax : axes) {
    // A stride beyond the input leaves one window on the axis, while the
    // kernels' stride-phase buffers grow with the stride (gigabytes for a
    // stride of 2^31): the reference kernels take such geometries.
    if (ax.stride > ax.in) return false;
    plan.whole_plane = plan.whole_plane && ax.out == 1 && ax.kernel == ax.in &&
                       ax.dilation == 1 && ax.pad_begin == 0;
    plan.axes.emplace_back();
    if (!make_axis(ax, count_include_pad, plan.axes.back())) return false;
    const AxisPlan& a = plan.axes.back();
    plan.vector_ok = plan.vector_ok && a.stride < kLaneLimit &&
                     a.out + 64 < kLaneLimit / a.stride &&
                     (a.out + 64) * a.stride + a.pad_begin + a.in < kLaneLimit &&
                     a.t_end * a.dilation < kLaneLimit;
  }

  if (reduce == Reduce::Average) {
    // Divisors of axes 1.. at every output position of those axes; int64 like
    // the reference's window count, refused if even that could overflow.
    plan.inner_divisor.assign(1, 1);
    for (std::size_t k = 1; k < plan.axes.size(); ++k) {
      const AxisPlan& a = plan.axes[k];
      std::vector<std::int64_t> next;
      next.reserve(plan.inner_divisor.size() * static_cast<std::size_t>(a.out));
      for (std::int64_t prefix : plan.inner_divisor)
        for (std::int64_t d : a.divisor) {
          std::int64_t v = 0;
          if (__builtin_mul_overflow(prefix, d, &v)) return false;
          next.push_back(v);
        }
      plan.inner_divisor.swap(next);
    }
    std::int64_t largest = 0;
    for (std::int64_t d : plan.axes[0].divisor) largest = std::max(largest, d);
    for (std::int64_t d : plan.inner_divisor) {
      std::int64_t v = 0;
      if (__builtin_mul_overflow(largest, d, &v)) return false;
    }
  }

  const std::int64_t workers = std::max(1, threads);
  if (plan.whole_plane) {
    plan.chunk = plan.input_chunk = 1;
    plan.chunks = plan.input_chunks = 1;
    return true;
  }
  const AxisPlan& a0 = plan.axes[0];
  plan.chunk = pick_chunk(a0.out, plan.planes, static_cast<int>(workers),
                          [&](std::int64_t c) { return forward_scratch(plan, c); });
  plan.chunks = ceil_div(a0.out, plan.chunk);
  plan.forward_scratch = static_cast<std::size_t>(forward_scratch(plan, plan.chunk));
  plan.input_chunk = pick_chunk(a0.in, plan.planes, static_cast<int>(workers),
                                [&](std::int64_t c) { return backward_scratch(plan, c); });
  plan.input_chunks = ceil_div(a0.in, plan.input_chunk);
  plan.backward_scratch = static_cast<std::size_t>(backward_scratch(plan, plan.input_chunk));
  // Even one row per chunk can stage far more than a plane where an axis that
  // shrinks comes before one padded wide (x [1, 1, 10000, 1], kernel
  // [10000, 100000], pads 99999 staged 10^9 values per thread for an output of
  // 10^5: 4 GB, no tensor cap applies to it). The reference kernels keep one
  // window at a time.
  const std::int64_t bound = std::max(kScratchBudget, plan.in_plane + plan.out_plane);
  return static_cast<std::int64_t>(plan.forward_scratch) <= bound &&
         static_cast<std::int64_t>(plan.backward_scratch) <= bound;
}

void throw_argmax_outside(std::int64_t value, std::int64_t output, std::int64_t plane,
                          std::int64_t in_plane, bool offset) {
  const std::int64_t origin = offset ? 0 : plane * in_plane;
  throw RunError("saved argmax " + std::string(offset ? "offset " : "") + std::to_string(value) +
                 " of output " + std::to_string(output) + " is outside its plane " +
                 std::to_string(plane) + " [" + std::to_string(origin) + ", " +
                 std::to_string(origin + in_plane) + ")");
}

}  // namespace nodeflow::fast
