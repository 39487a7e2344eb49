#include "nodes/pool_window.hpp"

#include <algorithm>
#include <vector>

namespace nodeflow {
namespace {

// The taps of every window along one axis: windows are separable, so an N-D
// window is the cartesian product of its per-axis taps.
struct AxisTaps {
  std::vector<std::vector<std::int64_t>> inputs;  // per output index: input coordinates
  std::vector<std::int64_t> padded;               // per output index: taps inside input + pads

  explicit AxisTaps(const PoolAxis& a)
      : inputs(static_cast<std::size_t>(a.output)), padded(inputs.size()) {
    for (std::int64_t o = 0; o < a.output; ++o)
      for (std::int64_t t = 0; t < a.kernel; ++t) {
        const std::int64_t pos = a.position(o, t);
        if (pos >= 0 && pos < a.input) inputs[static_cast<std::size_t>(o)].push_back(pos);
        if (pos >= -a.pad_begin && pos < a.input + a.pad_end) ++padded[static_cast<std::size_t>(o)];
      }
  }
};

}  // namespace

double most_windows_per_input(const PoolGeometry& geometry) {
  double windows = 1;
  for (const PoolAxis& a : geometry.axes)
    windows *= static_cast<double>(std::min(a.kernel, a.output));
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
      for (std::int64_t base : offsets)
        for (std::int64_t coord : taps[i].inputs[o])
          next.push_back(base * geometry.axes[i].input + coord);
      offsets.swap(next);
    }
    window.inputs = offsets;
    visit(window);
    for (std::size_t i = rank; i-- > 0;) {
      if (++index[i] < geometry.axes[i].output) break;
      index[i] = 0;
    }
  }
}

}  // namespace nodeflow
