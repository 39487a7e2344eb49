// The broadcast traversal (nodes/common/broadcast.hpp) against a naive
// per-element index computation, and sum_to_shape against naive sums.
#include "nodes/common/broadcast.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/errors.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

// The flat offset of output element i in an operand of `shape` broadcast to `out`.
std::int64_t naive_offset(const Shape& out, const Shape& shape, std::int64_t i) {
  const auto strides = broadcast_strides(shape, out);
  std::int64_t offset = 0;
  for (std::size_t a = out.size(); a-- > 0;) {
    offset += (i % out[a]) * strides[a];
    i /= out[a];
  }
  return offset;
}

struct Pattern {
  Shape a, b;
};

const std::vector<Pattern> kPatterns = {
    {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}}, {{2, 1, 4}, {1, 3, 1}}, {{5}, {}},
    {{}, {}},               {{1, 1}, {1}},       {{4, 1, 3, 2}, {4, 5, 1, 2}}, {{3, 0, 2}, {1, 2}},
    {{2, 3, 5}, {2, 1, 5}}, {{7, 1}, {1, 6}}};

TEST(Broadcast, RunsVisitEveryElementWithTheNaiveOffsets) {
  for (const Pattern& p : kPatterns) {
    const Shape out = broadcast_shapes(p.a, p.b);
    const Shape shapes[] = {p.a, p.b};
    const BroadcastPlan plan = plan_broadcast(out, shapes);
    ASSERT_EQ(plan.total, element_count(out));
    // Every split of the range gives the same visit as the whole.
    for (std::int64_t cut = 0; cut <= plan.total; cut += std::max<std::int64_t>(1, plan.total / 3)) {
      std::vector<int> seen(static_cast<std::size_t>(plan.total), 0);
      auto visit = [&](std::int64_t i, const std::array<std::int64_t, 2>& at, std::int64_t n) {
        for (std::int64_t j = 0; j < n; ++j) {
          ++seen[static_cast<std::size_t>(i + j)];
          EXPECT_EQ(at[0] + j * plan.step(0), naive_offset(out, p.a, i + j)) << to_string(p.a);
          EXPECT_EQ(at[1] + j * plan.step(1), naive_offset(out, p.b, i + j)) << to_string(p.b);
        }
      };
      for_each_run<2>(plan, 0, cut, visit);
      for_each_run<2>(plan, cut, plan.total, visit);
      for (int s : seen) EXPECT_EQ(s, 1);
    }
  }
}

TEST(Broadcast, PlanMergesAxesWalkedAsOne) {
  const Shape same[] = {{16, 8, 5, 5}, {16, 8, 5, 5}};
  EXPECT_EQ(plan_broadcast({16, 8, 5, 5}, same).dims, (std::vector<std::int64_t>{3200}));
  const Shape bias[] = {{16, 8, 5, 5}, {8, 1, 1}};
  const BroadcastPlan plan = plan_broadcast({16, 8, 5, 5}, bias);
  EXPECT_EQ(plan.dims, (std::vector<std::int64_t>{16, 8, 25}));
  EXPECT_EQ(plan.strides[1], (std::vector<std::int64_t>{0, 1, 0}));
}

TEST(Broadcast, ShapesOfSeveralInputsNameTheInputsThatDoNotFit) {
  const Shape ok[] = {{2, 1}, {3}, {1, 1, 3}};
  EXPECT_EQ(broadcast_shapes(ok), (Shape{1, 2, 3}));
  const Shape bad[] = {{2, 3}, {1}, {4}};
  EXPECT_EQ(testing::error_of<ShapeMismatch>([&] { broadcast_shapes(bad); }),
            "input 0 [2, 3] and input 2 [4] cannot be broadcast (axis 1 of the result: 3 vs 4)");
  const Shape dynamic[] = {{kDynamicDim, 1}, {4}};
  EXPECT_EQ(broadcast_shapes(dynamic), (Shape{kDynamicDim, 4}));
}

TEST(Broadcast, SumToShapeAddsOverTheBroadcastAxesOnAnyThreadCount) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> value(-8, 8);
  const Shape out = {6, 40, 300};
  Tensor g(DType::Float64, out);
  for (double& v : g.values<double>()) v = value(rng);
  for (const Shape& shape : {Shape{40, 1}, Shape{6, 1, 300}, Shape{1}, Shape{}, Shape{6, 40, 300}}) {
    std::vector<double> want(static_cast<std::size_t>(element_count(shape)), 0.0);
    for (std::int64_t i = 0; i < g.numel(); ++i)
      want[static_cast<std::size_t>(naive_offset(out, shape, i))] += g.data<double>()[i];
    for (int threads : {1, 2, 4}) {
      const Tensor s = sum_to_shape(g, shape, threads);
      ASSERT_EQ(s.shape(), shape);
      for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(s.data<double>()[k], want[k]);
    }
  }
}

TEST(Broadcast, AccumulateBroadcastGradientAddsIntoThePrefilledBuffer) {
  const Tensor g = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor dst = Tensor::from<double>({3}, {10, 20, 30});
  accumulate_broadcast_gradient(dst, g, 0.5);
  EXPECT_EQ(std::vector<double>(dst.values<double>().begin(), dst.values<double>().end()),
            (std::vector<double>{12.5, 23.5, 34.5}));
}

}  // namespace
}  // namespace nodeflow
