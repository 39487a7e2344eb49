// The fast pooling kernels touch nothing outside their tensors. Masked vector
// loads and stores are invisible to AddressSanitizer, so each tensor here is
// placed against an inaccessible page: once ending where the page begins,
// once starting where it ends. A vector that reaches past either end faults.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "core/shape.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/pool_geometry.hpp"
#include "unit/nodes/pooling/test_pool_fast_util.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;

/// `count` elements of T next to a PROT_NONE page (after them, or before).
template <typename T>
class Guarded {
 public:
  Guarded(std::size_t count, bool guard_after) : count_(count) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = count * sizeof(T);
    data_pages_ = (bytes + page_ - 1) / page_ + 1;
    length_ = (data_pages_ + 1) * page_;
    void* m = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<std::byte*>(m);
    if (guard_after) {
      mprotect(base_ + data_pages_ * page_, page_, PROT_NONE);
      data_ = reinterpret_cast<T*>(base_ + data_pages_ * page_ - bytes);
    } else {
      mprotect(base_, page_, PROT_NONE);
      data_ = reinterpret_cast<T*>(base_ + page_);
    }
  }
  ~Guarded() { munmap(base_, length_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  std::span<T> span() { return {data_, count_}; }

 private:
  std::size_t count_, page_ = 0, data_pages_ = 0, length_ = 0;
  std::byte* base_ = nullptr;
  T* data_ = nullptr;
};

struct Case {
  PoolKind kind;
  Shape shape;
  Attributes attrs;
};

using testing::pool_fast::window_attrs;

// Every read path: stride-1 runs of whole rows (P3, P7), stride-2 pairs
// with a leading tap (P1), fused pairs (P2, P5, P6), phases (stride 3), 1-D
// and global; sizes that end mid-vector.
std::vector<Case> cases() {
  Attributes ceil = window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0});
  ceil["ceil_mode"] = std::int64_t{1};
  return {
      {PoolKind::Max, {1, 3, 9, 28}, window_attrs({3, 3}, {1, 1}, {1, 1, 1, 1})},
      {PoolKind::Max, {1, 2, 7, 21}, window_attrs({3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2})},
      {PoolKind::Max, {1, 2, 9, 37}, window_attrs({3, 3}, {2, 2}, {1, 1, 1, 1})},
      {PoolKind::Max, {2, 2, 6, 38}, window_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {PoolKind::Max, {1, 2, 4, 6, 34}, window_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0})},
      {PoolKind::Max, {1, 2, 7, 29}, ceil},
      {PoolKind::Max, {1, 2, 5, 40}, window_attrs({2, 3}, {3, 3}, {0, 1, 1, 0})},
      {PoolKind::Max, {2, 3, 45}, window_attrs({3}, {1}, {1, 1})},
      {PoolKind::GlobalMax, {3, 5, 7, 7}, {}},
  };
}

template <typename Run>
void each_placement(Run&& run) {
  for (PoolImpl impl : testing::pool_fast::fast_impls())
    for (bool guard_after : {true, false})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(pool_impl_name(impl)) +
                     (guard_after ? " guard after" : " guard before") +
                     " threads=" + std::to_string(threads));
        const testing::pool_fast::ImplScope scope(impl);
        run(guard_after, threads);
      }
}

template <typename T>
void fill(std::span<T> v, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  for (T& e : v) e = static_cast<T>(d(rng));
}

TEST(PoolFastBounds, KernelsTouchNothingPastTheirTensors) {
  std::mt19937_64 rng(7);
  for (const Case& base : cases())
    for (PoolKind kind : {PoolKind::Max, PoolKind::Average, PoolKind::Lp}) {
      Case c = base;
      c.kind = kind;
      if (base.kind == PoolKind::GlobalMax && kind != PoolKind::Lp)
        c.kind = kind == PoolKind::Max ? PoolKind::GlobalMax : PoolKind::GlobalAverage;
      else if (base.kind == PoolKind::GlobalMax)
        c.attrs = window_attrs({7, 7}, {1, 1}, {0, 0, 0, 0});  // one window over the plane
      SCOPED_TRACE(std::string(pool_op_type(c.kind)) + " x" + to_string(c.shape));
      const PoolAttributes a = checked_pool_attributes(c.kind, c.attrs);
      const PoolGeometry g = pool_geometry(a, c.shape);
      const auto n_in = static_cast<std::size_t>(element_count(g.input_shape()));
      const auto n_out = static_cast<std::size_t>(element_count(g.output_shape()));
      each_placement([&](bool guard_after, int threads) {
        Guarded<float> x(n_in, guard_after), y(n_out, guard_after), dy(n_out, guard_after),
            dx(n_in, guard_after);
        Guarded<std::int64_t> argmax(n_out, guard_after);
        Guarded<std::int32_t> offsets(n_out, guard_after);
        fill(x.span(), rng);
        fill(dy.span(), rng);
        fill(dx.span(), rng);
        const std::span<const float> cx = x.span(), cdy = dy.span();
        if (kind == PoolKind::Max) {
          fast::max_pool_forward<float>(g, cx, y.span(), argmax.span(), threads);
          fast::max_pool_backward<float>(g, argmax.span(), cdy, 0.5, dx.span(), threads);
          fast::max_pool_forward<float>(g, cx, y.span(), offsets.span(), threads);
          fast::max_pool_backward<float>(g, offsets.span(), cdy, 0.5, dx.span(), threads);
        } else if (kind == PoolKind::Average) {
          fast::average_pool_forward<float>(g, false, cx, y.span(), threads);
          fast::average_pool_backward<float>(g, true, cdy, 0.5, dx.span(), threads);
        } else {
          fast::lp_pool_forward<float>(g, 2, cx, y.span(), threads);
          fast::lp_pool_backward<float>(g, 2, cx, y.span(), cdy, 0.5, dx.span(), threads);
        }
      });
    }
}

}  // namespace
}  // namespace nodeflow
