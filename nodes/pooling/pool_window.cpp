#include "nodes/pooling/pool_window.hpp"

#include <algorithm>
#include <vector>

namespace nodeflow {
namespace {

// The taps of every window along one axis: windows are separable, so an N-D
// window is the cartesian product of its per-axis taps. The taps inside the
// input are consecutive: a start and a count per window, not a list of
// coordinates (which summed to outputs x kernel: 800 MB for a 40 KB input
// padded by 9999 on each side).
struct AxisTaps {
  std::vector<std::int64_t> first;   // per output index: input coordinate of its first valid tap
  std::vector<std::int64_t> count;   // per output index: valid taps, first + j * dilation
  std::vector<std::int64_t> padded;  // per output index: taps inside input + pads

  explicit AxisTaps(const WindowAxis& a)
      : first(static_cast<std::size_t>(a.out)), count(first.size()), padded(first.size()) {
    for (std::int64_t o = 0; o < a.out; ++o) {
      const auto i = static_cast<std::size_t>(o);
      const IndexRange valid = a.valid_taps(o);
      first[i] = a.position(o, valid.begin);
      count[i] = valid.size();
      padded[i] = a.padded_taps(o).size();
    }
  }
};

}  // namespace

double most_windows_per_input(const PoolGeometry& geometry) {
  double windows = 1;
  for (const WindowAxis& a : geometry.axes)
    windows *= static_cast<double>(std::min(a.kernel, a.out));
  return windows;
}

void for_each_window(const PoolGeometry& geometry,
                     const std::function<void(const PoolWindow&)>& visit) {
  const std::size_t rank = geometry.axes.size();
  std::vector<AxisTaps> taps;
  for (const auto& a : geometry.axes) taps.emplace_back(a);

  const std::int64_t windows = geometry.output_plane();
  std::vector<std::int64_t> index(rank, 0);  // output position, last axis fastest
  std::vector<std::int64_t> offsets, next;
  for (std::int64_t w = 0; w < windows; ++w) {
    PoolWindow window;
    window.output = w;
    window.padded_count = 1;
    // Row-major window order: extend every partial offset by the next axis's taps.
    offsets.assign(1, 0);
    for (std::size_t i = 0; i < rank; ++i) {
      const auto o = static_cast<std::size_t>(index[i]);
      window.padded_count *= taps[i].padded[o];
      next.clear();
      const WindowAxis& axis = geometry.axes[i];
      for (std::int64_t base : offsets)
        for (std::int64_t j = 0; j < taps[i].count[o]; ++j)
          next.push_back(base * axis.in + taps[i].first[o] + j * axis.dilation);
      offsets.swap(next);
    }
    window.inputs = offsets;
    visit(window);
    for (std::size_t i = rank; i-- > 0;) {
      if (++index[i] < geometry.axes[i].out) break;
      index[i] = 0;
    }
  }
}

}  // namespace nodeflow
