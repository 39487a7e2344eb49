// Transpose (ONNX Transpose-21): output axis k is input axis perm[k]; perm
// defaults to the reversed axes. Any dtype. The gradient is the output
// gradient transposed back by the inverse permutation.
//
// The copy first merges axes that stay adjacent (and drops axes of length
// 1), so NCHW -> NHWC is a batch of [C, H*W] matrix transposes. When the
// innermost axis stays innermost it copies contiguous runs; otherwise it
// copies square tiles, so that both the strided reads and the contiguous
// writes of a tile stay in cache; 4-byte elements (and float32 gradients) go
// through the register tiles of nodes/shape/transpose_tiles.hpp where the CPU
// has them.
#include <algorithm>
#include <functional>
#include <numeric>

#include "core/accumulate.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/stream_lines.hpp"
#include "nodes/shape/movement.hpp"
#include "nodes/shape/shape_ops.hpp"
#include "nodes/shape/transpose_tiles.hpp"

namespace nodeflow {
namespace {

// Tile edge: a 32x32 tile of 8-byte elements reads 32 cache lines and
// writes 32, well inside L1.
constexpr std::int64_t kTile = 32;
// Below this many elements the copy stays on the calling thread.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 16;
// The register tiles' edge. From stream_lines::kScatteredStreamBytes on, their
// copy into long output rows streams its stores past the cache.
constexpr std::int64_t kBlockTile = 16;

// A block of the tiled copy at once: block(src, src_ld, dst, dst_ld, rows,
// cols) does dst[i * dst_ld + j] op= src[j * src_ld + i] for i < rows, j < cols.
template <typename S, typename D>
using BlockKernel = std::function<void(const S*, std::int64_t, D*, std::int64_t, std::int64_t, std::int64_t)>;

// The copy dst[o] = src[sum_k o_k * src_stride[k]] over an output of
// (collapsed) dims `dims`, written row-major.
struct PermutePlan {
  Shape dims;
  std::vector<std::int64_t> src_stride;
  std::int64_t numel = 1;
};

PermutePlan plan_permute(const Shape& in, const std::vector<std::size_t>& perm) {
  const std::vector<std::int64_t> in_stride = row_major_strides(in);
  PermutePlan plan;
  for (const std::size_t p : perm) {
    plan.numel *= in[p];
    if (in[p] == 1) continue;
    // Merge into the previous output axis when the two are adjacent in the input too.
    if (!plan.dims.empty() && plan.src_stride.back() == in_stride[p] * in[p]) {
      plan.dims.back() *= in[p];
      plan.src_stride.back() = in_stride[p];
    } else {
      plan.dims.push_back(in[p]);
      plan.src_stride.push_back(in_stride[p]);
    }
  }
  return plan;
}

// Row-major position over `dims` with two linear offsets that follow it:
// seek once to the start of a thread's range, then step.
struct Walk {
  Shape dims;
  std::vector<std::int64_t> src_step, dst_step;
  std::vector<std::int64_t> index;
  std::int64_t src = 0, dst = 0;

  void seek(std::int64_t flat) {
    index.assign(dims.size(), 0);
    src = dst = 0;
    for (std::size_t a = dims.size(); a-- > 0;) {
      index[a] = flat % dims[a];
      flat /= dims[a];
      src += index[a] * src_step[a];
      dst += index[a] * dst_step[a];
    }
  }
  void next() {
    for (std::size_t a = dims.size(); a-- > 0;) {
      src += src_step[a];
      dst += dst_step[a];
      if (++index[a] < dims[a]) return;
      src -= src_step[a] * dims[a];
      dst -= dst_step[a] * dims[a];
      index[a] = 0;
    }
  }
};

// dst (row-major over plan.dims) op= src permuted; op(D&, S) assigns or adds.
// `block`, when set, does the blocks of the tiled path (16 rows and columns
// at least) as op would.
template <typename S, typename D, typename Op>
void permute(const PermutePlan& plan, const S* src, D* dst, int threads, Op op,
             const BlockKernel<S, D>& block = {}) {
  if (plan.numel == 0) return;
  if (plan.numel < kParallelElements) threads = 1;
  const std::size_t m = plan.dims.size();
  if (m == 0) {
    op(dst[0], src[0]);
    return;
  }
  const std::vector<std::int64_t> dst_stride = row_major_strides(plan.dims);
  Walk walk;
  if (plan.src_stride[m - 1] == 1) {
    // The innermost axis stays innermost: contiguous runs over the other axes.
    const std::int64_t run = plan.dims[m - 1];
    walk.dims.assign(plan.dims.begin(), plan.dims.end() - 1);
    walk.src_step.assign(plan.src_stride.begin(), plan.src_stride.end() - 1);
    walk.dst_step.assign(dst_stride.begin(), dst_stride.end() - 1);
    parallel_ranges(threads, plan.numel / run, [&](std::int64_t begin, std::int64_t end) {
      Walk w = walk;
      w.seek(begin);
      for (std::int64_t i = begin; i < end; ++i, w.next()) {
        const S* s = src + w.src;
        D* d = dst + w.dst;
        for (std::int64_t j = 0; j < run; ++j) op(d[j], s[j]);
      }
    });
    return;
  }
  // Tiles over output axis a (innermost, strided reads) and axis b (the
  // input's innermost, strided writes); the walk covers the other axes and
  // the rows of tiles along b.
  const std::size_t a = m - 1;
  const std::size_t b = static_cast<std::size_t>(
      std::find(plan.src_stride.begin(), plan.src_stride.end(), 1) - plan.src_stride.begin());
  const std::int64_t na = plan.dims[a], nb = plan.dims[b];
  const std::int64_t sa = plan.src_stride[a], db = dst_stride[b];
  for (std::size_t k = 0; k < m; ++k)
    if (k != a && k != b) {
      walk.dims.push_back(plan.dims[k]);
      walk.src_step.push_back(plan.src_stride[k]);
      walk.dst_step.push_back(dst_stride[k]);
    }
  const std::int64_t outer = plan.numel / (na * nb);
  // Items: the other axes times blocks of `rows` along b. The block kernel
  // streams along its rows, so its blocks are as long as possible while giving
  // each thread about four; the element loop copies square tiles.
  const bool use_block = block && na >= kBlockTile && nb >= kBlockTile;
  std::int64_t rows = kTile;
  if (use_block) {
    const std::int64_t wanted = std::max<std::int64_t>(1, (4 * threads + outer - 1) / outer);
    rows = std::max(kBlockTile, ((nb + wanted - 1) / wanted + kBlockTile - 1) / kBlockTile * kBlockTile);
  }
  walk.dims.push_back((nb + rows - 1) / rows);
  walk.src_step.push_back(rows);
  walk.dst_step.push_back(rows * db);
  parallel_ranges(threads, outer * walk.dims.back(), [&](std::int64_t begin, std::int64_t end) {
    Walk w = walk;
    w.seek(begin);
    for (std::int64_t item = begin; item < end; ++item, w.next()) {
      const std::int64_t n = std::min(rows, nb - w.index.back() * rows);
      if (use_block) {
        block(src + w.src, sa, dst + w.dst, db, n, na);
        continue;
      }
      for (std::int64_t j0 = 0; j0 < na; j0 += kTile) {
        const std::int64_t cols = std::min(kTile, na - j0);
        for (std::int64_t i = 0; i < n; ++i) {
          const S* s = src + w.src + i + j0 * sa;
          D* d = dst + w.dst + i * db + j0;
          for (std::int64_t j = 0; j < cols; ++j) op(d[j], s[j * sa]);
        }
      }
    }
  });
}

// dst = src permuted by `plan`, element by element (any dtype, both the same).
void copy_permuted(const PermutePlan& plan, const Tensor& src, Tensor& dst, int threads) {
  visit_element_size(src.dtype(), [&](auto tag) {
    using E = decltype(tag);
    BlockKernel<E, E> block;
    if constexpr (sizeof(E) == 4)
      if (transpose_tiles::available())
        block = [large = dst.nbytes() >= stream_lines::kScatteredStreamBytes](
                    const E* s, std::int64_t sa, E* d, std::int64_t db, std::int64_t rows, std::int64_t cols) {
          // Output rows of 256 elements (NCHW -> NHWC) took 2.2-2.5x as long streamed.
          transpose_tiles::copy(s, sa, d, db, rows, cols, large && db >= stream_lines::kMinStreamElements);
        };
    permute(plan, static_cast<const E*>(static_cast<const void*>(src.raw())),
            static_cast<E*>(static_cast<void*>(dst.raw())), threads, [](E& d, E s) { d = s; }, block);
  });
}

class TransposeNode final : public Node {
 public:
  explicit TransposeNode(NodeConfig c) : Node(std::move(c)), perm_(optional_ints(config().attributes, "perm")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    Shape out;
    for (const std::size_t p : perm_for(x.shape.size())) out.push_back(x.shape[p]);
    return {TensorInfo{x.dtype, out}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    const std::vector<std::size_t> perm = perm_for(x.rank());
    Shape out_shape;
    for (const std::size_t p : perm) out_shape.push_back(x.shape()[p]);
    Tensor y = Tensor::uninitialized(x.dtype(), out_shape);
    copy_permuted(plan_permute(x.shape(), perm), x, y, ctx.threads);
    ctx.outputs[0] = std::move(y);
  }

  // The gradient is dy transposed back: a copy when it is not scaled.
  bool overwrites_gradients() const override { return true; }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) {
      ctx.zero_if_overwritten(0);
      return;
    }
    // dx += scale * dy transposed by the inverse permutation.
    const std::vector<std::size_t> perm = perm_for(dx.rank());
    std::vector<std::size_t> inverse(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = k;
    const PermutePlan plan = plan_permute(dy.shape(), inverse);
    if (ctx.overwrites(0) && ctx.scale_for(0) == 1.0 && dx.dtype() == dy.dtype()) {
      copy_permuted(plan, dy, dx, ctx.threads);
      return;
    }
    ctx.zero_if_overwritten(0);
    visit_float_dtype(dx.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const auto k = static_cast<A>(ctx.scale_for(0));
      BlockKernel<T, T> block;
      if constexpr (std::is_same_v<T, float>)
        if (transpose_tiles::available())
          block = [k](const float* s, std::int64_t sa, float* d, std::int64_t db, std::int64_t rows,
                      std::int64_t cols) { transpose_tiles::add(s, sa, d, db, rows, cols, k); };
      permute(plan, dy.data<T>(), dx.data<T>(), ctx.threads,
              [k](T& d, T s) { d = static_cast<T>(static_cast<A>(d) + k * static_cast<A>(s)); }, block);
    });
  }

 private:
  // The permutation for an input of rank `rank` (perm's values are a
  // permutation of 0..n-1, check_perm made sure at load).
  std::vector<std::size_t> perm_for(std::size_t rank) const {
    std::vector<std::size_t> perm(rank);
    if (!perm_) {
      std::iota(perm.rbegin(), perm.rend(), std::size_t{0});
      return perm;
    }
    if (perm_->size() != rank)
      throw InvalidAttribute("attributes.perm: " + to_string(AttrValue{*perm_}) + " has " +
                             std::to_string(perm_->size()) + " values, the input has rank " +
                             std::to_string(rank));
    std::transform(perm_->begin(), perm_->end(), perm.begin(), [](std::int64_t p) { return static_cast<std::size_t>(p); });
    return perm;
  }

  std::optional<std::vector<std::int64_t>> perm_;
};

void check_perm(const Attributes& attrs) {
  const auto perm = optional_ints(attrs, "perm");
  if (!perm) return;
  std::vector<bool> seen(perm->size(), false);
  for (const std::int64_t p : *perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(perm->size()) || seen[static_cast<std::size_t>(p)])
      throw InvalidAttribute("attributes.perm: " + to_string(AttrValue{*perm}) + " is not a permutation of 0.." +
                             std::to_string(static_cast<std::int64_t>(perm->size()) - 1));
    seen[static_cast<std::size_t>(p)] = true;
  }
}

}  // namespace

void register_transpose(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Transpose";
  s.definition = "ONNX Transpose-21";
  s.doc = "Permutes the axes by perm (default: reversed)";
  s.inputs = {{"data", graph_dtypes(), "any rank"}};
  s.outputs = {{"transposed", graph_dtypes(), "data's dtype; dimension k is data's dimension perm[k]"}};
  AttrSpec perm;
  perm.name = "perm";
  perm.kind = AttrKind::Ints;
  perm.doc = "a permutation of the axes: output axis k is input axis perm[k]; default the reversed axes";
  s.attributes = {perm};
  s.check_attributes = check_perm;
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<TransposeNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
