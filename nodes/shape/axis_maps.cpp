#include "nodes/shape/axis_maps.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {
namespace {

// Outputs below this size are copied by the calling thread: starting the
// other threads costs more than the copy.
constexpr std::size_t kParallelBytes = std::size_t{1} << 16;

// A stretch of the innermost moved axis whose sources step evenly (Slice's
// step, 1 for a plain copy, 0 for a stretched axis) or are all kFill.
struct Run {
  std::int64_t out = 0;  // first output position
  std::int64_t len = 0;
  std::int64_t src = 0;  // first source, or kFill
  std::int64_t step = 0;
};

// The maps in the form the traversal uses. The trailing axes the maps leave
// alone are folded into a block of contiguous elements (the rows of a
// Gather along axis 0, the planes of a Slice of channels), so that the copy
// moves whole blocks; the innermost remaining axis ("last") is cut into runs.
struct Plan {
  std::size_t last = 0;              // moved axes are [0, last]; none when moved == false
  bool moved = false;                // false: the output is the input (every axis unmoved)
  std::int64_t block = 1;            // elements per block
  std::vector<std::int64_t> stride;  // input strides in blocks, axes [0, last]
  std::vector<Run> runs;             // along axis last
  std::int64_t rows = 1;             // output rows: the product of the dimensions before last
  std::int64_t row_len = 0;          // output blocks per row
};

bool is_identity(const std::vector<std::int64_t>& map, std::int64_t input_dim) {
  if (static_cast<std::int64_t>(map.size()) != input_dim) return false;
  for (std::size_t i = 0; i < map.size(); ++i)
    if (map[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

std::vector<Run> runs_of(const std::vector<std::int64_t>& map) {
  std::vector<Run> runs;
  const auto n = static_cast<std::int64_t>(map.size());
  for (std::int64_t i = 0; i < n;) {
    Run r{i, 1, map[i], 0};
    if (i + 1 < n && (map[i] == kFill) == (map[i + 1] == kFill))
      r.step = map[i] == kFill ? 0 : map[i + 1] - map[i];
    while (i + r.len < n && (map[i + r.len] == kFill) == (r.src == kFill) &&
           (r.src == kFill || map[i + r.len] - map[i + r.len - 1] == r.step))
      ++r.len;
    runs.push_back(r);
    i += r.len;
  }
  return runs;
}

Plan plan_of(const AxisMaps& maps) {
  Plan p;
  std::size_t moved_rank = maps.source.size();
  while (moved_rank > 0 && is_identity(maps.source[moved_rank - 1], maps.input[moved_rank - 1])) --moved_rank;
  p.block = dims_product(maps.input, moved_rank, maps.input.size());
  if (moved_rank == 0) return p;
  p.moved = true;
  p.last = moved_rank - 1;
  p.stride.assign(moved_rank, 1);
  for (std::size_t a = p.last; a-- > 0;) p.stride[a] = p.stride[a + 1] * maps.input[a + 1];
  p.runs = runs_of(maps.source[p.last]);
  for (std::size_t a = 0; a < p.last; ++a) p.rows *= static_cast<std::int64_t>(maps.source[a].size());
  p.row_len = static_cast<std::int64_t>(maps.source[p.last].size());
  return p;
}

// Calls f(row, base) for the output rows [begin, end): base is the input
// offset (in blocks) of the row's axis-last origin, or kFill when an outer
// axis takes the fill value. The one odometer of the five ops.
template <typename F>
void for_each_row(const AxisMaps& maps, const Plan& p, std::int64_t begin, std::int64_t end, F&& f) {
  std::vector<std::int64_t> index(p.last, 0);
  for (std::int64_t rest = begin, a = static_cast<std::int64_t>(p.last) - 1; a >= 0; --a) {
    const auto n = static_cast<std::int64_t>(maps.source[static_cast<std::size_t>(a)].size());
    index[static_cast<std::size_t>(a)] = rest % n;
    rest /= n;
  }
  for (std::int64_t row = begin; row < end; ++row) {
    std::int64_t base = 0;
    for (std::size_t a = 0; a < p.last && base != kFill; ++a) {
      const std::int64_t s = maps.source[a][static_cast<std::size_t>(index[a])];
      base = s == kFill ? kFill : base + s * p.stride[a];
    }
    f(row, base);
    for (std::size_t a = p.last; a-- > 0;) {
      if (++index[a] < static_cast<std::int64_t>(maps.source[a].size())) break;
      index[a] = 0;
    }
  }
}

// Fixed-size copies compile to plain moves.
template <std::size_t N>
void copy_elements(std::byte* dst, const std::byte* src, std::int64_t len, std::int64_t step) {
  for (std::int64_t j = 0; j < len; ++j)
    std::memcpy(dst + static_cast<std::size_t>(j) * N,
                src + static_cast<std::ptrdiff_t>(j * step) * static_cast<std::ptrdiff_t>(N), N);
}

// len blocks of `bytes` bytes from src, src + step blocks, ...
void copy_blocks(std::byte* dst, const std::byte* src, std::int64_t len, std::int64_t step,
                 std::size_t bytes) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(len) * bytes);
    return;
  }
  switch (bytes) {
    case 1:
      return copy_elements<1>(dst, src, len, step);
    case 2:
      return copy_elements<2>(dst, src, len, step);
    case 4:
      return copy_elements<4>(dst, src, len, step);
    case 8:
      return copy_elements<8>(dst, src, len, step);
    default:
      for (std::int64_t j = 0; j < len; ++j)
        std::memcpy(dst + static_cast<std::size_t>(j) * bytes,
                    src + static_cast<std::ptrdiff_t>(j * step) * static_cast<std::ptrdiff_t>(bytes), bytes);
  }
}

void fill_blocks(std::byte* dst, std::int64_t len, const std::vector<std::byte>& pattern, bool zero) {
  if (zero) {
    std::memset(dst, 0, static_cast<std::size_t>(len) * pattern.size());
    return;
  }
  for (std::int64_t j = 0; j < len; ++j)
    std::memcpy(dst + static_cast<std::size_t>(j) * pattern.size(), pattern.data(), pattern.size());
}

// How many rows of the output form a group whose writes into the input's
// gradient are disjoint from every other group's: the rows that share their
// indices along the leading outer axes that read no input index twice
// (every row, when no outer axis repeats; all of them, when axis 0 does).
std::int64_t disjoint_group_rows(const AxisMaps& maps, const Plan& p) {
  std::int64_t groups = 1;
  for (std::size_t a = 0; a < p.last; ++a) {
    std::vector<bool> seen(static_cast<std::size_t>(maps.input[a]), false);
    for (std::int64_t s : maps.source[a]) {
      if (s == kFill) continue;
      if (seen[static_cast<std::size_t>(s)]) return p.rows / groups;
      seen[static_cast<std::size_t>(s)] = true;
    }
    groups *= maps.output[a];
  }
  return p.rows / groups;
}

template <typename T>
void scatter_add(const AxisMaps& maps, const Plan& p, const T* go, T scale, T* gi, int threads) {
  const auto block = p.block;
  auto rows = [&](std::int64_t begin, std::int64_t end) {
    for_each_row(maps, p, begin, end, [&](std::int64_t row, std::int64_t base) {
      if (base == kFill) return;
      for (const Run& r : p.runs) {
        if (r.src == kFill) continue;
        for (std::int64_t j = 0; j < r.len; ++j) {
          T* d = gi + (base + r.src + j * r.step) * block;
          const T* s = go + (row * p.row_len + r.out + j) * block;
          for (std::int64_t b = 0; b < block; ++b) d[b] += scale * s[b];
        }
      }
    });
  };
  const std::int64_t group = threads > 1 ? disjoint_group_rows(maps, p) : p.rows;
  parallel_ranges(threads, p.rows / group,
                  [&](std::int64_t begin, std::int64_t end) { rows(begin * group, end * group); });
}

}  // namespace

void copy_mapped(const AxisMaps& maps, const Tensor& in, const Tensor* fill, Tensor& out, int threads) {
  if (out.numel() == 0) return;
  const Plan p = plan_of(maps);
  const std::size_t elem = dtype_size(in.dtype());
  const std::size_t bytes = elem * static_cast<std::size_t>(p.block);
  if (!p.moved) {
    std::memcpy(out.raw(), in.raw(), out.nbytes());
    return;
  }
  std::vector<std::byte> pattern(bytes, std::byte{0});
  const bool zero =
      fill == nullptr || fill->empty() ||
      std::all_of(fill->raw(), fill->raw() + elem, [](std::byte b) { return b == std::byte{0}; });
  if (!zero)
    for (std::size_t b = 0; b < bytes; b += elem) std::memcpy(pattern.data() + b, fill->raw(), elem);
  const std::byte* src = in.raw();
  std::byte* dst = out.raw();
  auto rows = [&](std::int64_t begin, std::int64_t end) {
    for_each_row(maps, p, begin, end, [&](std::int64_t row, std::int64_t base) {
      std::byte* d = dst + static_cast<std::size_t>(row * p.row_len) * bytes;
      if (base == kFill) return fill_blocks(d, p.row_len, pattern, zero);
      for (const Run& r : p.runs) {
        std::byte* dr = d + static_cast<std::size_t>(r.out) * bytes;
        if (r.src == kFill)
          fill_blocks(dr, r.len, pattern, zero);
        else
          copy_blocks(dr, src + static_cast<std::size_t>(base + r.src) * bytes, r.len, r.step, bytes);
      }
    });
  };
  parallel_ranges(out.nbytes() < kParallelBytes ? 1 : threads, p.rows, rows);
}

void scatter_add_mapped(const AxisMaps& maps, const Tensor& grad_out, double scale, Tensor& grad_in,
                        int threads) {
  if (grad_out.empty() || grad_in.empty() || grad_out.numel() == 0) return;
  const Plan p = plan_of(maps);
  const Tensor go = to_compute(grad_out);
  const DType compute = go.dtype();
  // float16/bfloat16 gradients are summed in float32 and added once.
  Tensor sum = grad_in.dtype() == compute ? grad_in : Tensor(compute, grad_in.shape());
  const double own_scale = sum.shares_buffer(grad_in) ? scale : 1.0;
  if (grad_out.nbytes() < kParallelBytes) threads = 1;
  visit_compute_dtype(compute, [&](auto tag) {
    using T = decltype(tag);
    if (!p.moved) {
      T* gi = sum.data<T>();
      const T* g = go.data<T>();
      for (std::int64_t i = 0; i < go.numel(); ++i) gi[i] += static_cast<T>(own_scale) * g[i];
      return;
    }
    scatter_add(maps, p, go.data<T>(), static_cast<T>(own_scale), sum.data<T>(), threads);
  });
  if (!sum.shares_buffer(grad_in)) accumulate_gradient(grad_in, sum, scale);
}

}  // namespace nodeflow
