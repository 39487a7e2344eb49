// The reductions' shared traversal (nodes/reduction/reduce_axes): axes
// normalisation and its refusals, output shapes, the plans of the common
// cases, and a seeded sweep checking that for_each_reduce_line visits every
// input element once, at the right output, with 1 and 2 threads.
#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"
#include "nodes/reduction/reduce_axes.hpp"
#include "reduce_reference.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using testing::error_of;

std::vector<bool> mask(std::initializer_list<std::int64_t> axes, std::size_t rank, bool noop = false) {
  const std::vector<std::int64_t> v(axes);
  return reduced_axes(v, rank, noop);
}

TEST(ReduceAxes, NormalisesNegativeAxesAndEmptyLists) {
  EXPECT_EQ(mask({0, -1}, 4), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(mask({}, 3), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(mask({}, 3, true), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(mask({}, 0), (std::vector<bool>{}));
}

TEST(ReduceAxes, RefusesAxesOutOfRangeAndRepeats) {
  EXPECT_EQ(error_of<ShapeMismatch>([] { mask({0, 3}, 3); }),
            "input 1 (axes): axes[1] = 3 is outside [-3, 2] for input rank 3");
  EXPECT_EQ(error_of<ShapeMismatch>([] { mask({-4}, 3); }),
            "input 1 (axes): axes[0] = -4 is outside [-3, 2] for input rank 3");
  EXPECT_EQ(error_of<ShapeMismatch>([] { mask({0}, 0); }),
            "input 1 (axes): axes[0] = 0 is outside [0, -1] for input rank 0");
  EXPECT_EQ(error_of<ShapeMismatch>([] { mask({1, 0, -2}, 3); }),
            "input 1 (axes): axes[2] = -2 repeats axis 1 (axes[0] = 1)");
}

TEST(ReduceAxes, OutputShapesKeepOrDropTheReducedAxes) {
  const std::vector<bool> r{true, false, true};
  EXPECT_EQ(reduced_shape({2, kDynamicDim, 4}, r, true), (Shape{1, kDynamicDim, 1}));
  EXPECT_EQ(reduced_shape({2, kDynamicDim, 4}, r, false), (Shape{kDynamicDim}));
  EXPECT_EQ(reduced_shape({2, 3}, {true, true}, false), (Shape{}));
}

TEST(ReducePlan, MiddleAxisReadsContiguousRowsLastAxisContiguousLines) {
  const ReducePlan middle = make_reduce_plan({16, 256, 56, 56}, {false, true, false, false});
  EXPECT_FALSE(middle.line_reduced);
  EXPECT_EQ(middle.line, 56 * 56);
  EXPECT_EQ(middle.kept_dims, (std::vector<std::int64_t>{16}));
  EXPECT_EQ(middle.kept_strides, (std::vector<std::int64_t>{256 * 56 * 56}));
  EXPECT_EQ(middle.reduced_dims, (std::vector<std::int64_t>{256}));
  EXPECT_EQ(middle.reduced_strides, (std::vector<std::int64_t>{56 * 56}));
  EXPECT_EQ(middle.outputs, 16 * 56 * 56);
  EXPECT_EQ(middle.lines, 256);
  EXPECT_EQ(middle.reduced, 256);

  const ReducePlan last = make_reduce_plan({16, 256, 56, 56}, {false, false, false, true});
  EXPECT_TRUE(last.line_reduced);
  EXPECT_EQ(last.line, 56);
  EXPECT_EQ(last.kept_dims, (std::vector<std::int64_t>{16 * 256 * 56}));
  EXPECT_TRUE(last.reduced_dims.empty());
  EXPECT_EQ(last.outputs, 16 * 256 * 56);
  EXPECT_EQ(last.lines, 1);

  // Axes of length 1 vanish, so [0] and [2] merge around them.
  const ReducePlan ones = make_reduce_plan({3, 1, 4, 5}, {true, false, true, false});
  EXPECT_EQ(ones.reduced_dims, (std::vector<std::int64_t>{12}));
  EXPECT_EQ(ones.line, 5);
  EXPECT_EQ(ones.reduced, 12);

  // A scalar, or only axes of length 1: one line of one element.
  const ReducePlan scalar = make_reduce_plan({}, {});
  EXPECT_EQ(scalar.line, 1);
  EXPECT_EQ(scalar.outputs, 1);
  EXPECT_EQ(scalar.input_count, 1);
}

TEST(ReducePlan, RowsAreCutIntoColumnBlocksForThreads) {
  const ReducePlan one_row = make_reduce_plan({1000, 8192}, {true, false});
  EXPECT_EQ(reduce_column_blocks(one_row, 1), 2);  // 4096 columns at most
  EXPECT_EQ(reduce_column_blocks(one_row, 4), 4);
  const ReducePlan narrow = make_reduce_plan({100000, 100}, {true, false});
  EXPECT_EQ(reduce_column_blocks(narrow, 2), 1);  // at least 64 columns per block
}

// Every input element is visited once; a kept line meets consecutive outputs,
// a reduced line folds into its output at the reduced ordinals k * n + j.
void check_traversal(const Shape& shape, const std::vector<bool>& reduced, int threads) {
  const auto slices = testing::reduced_slices(shape, reduced);
  const ReducePlan plan = make_reduce_plan(shape, reduced);
  ASSERT_EQ(plan.outputs, static_cast<std::int64_t>(slices.size()));
  std::vector<std::int64_t> out_of(static_cast<std::size_t>(plan.input_count), -1), ordinal_of(out_of);
  for (std::size_t o = 0; o < slices.size(); ++o)
    for (std::size_t j = 0; j < slices[o].size(); ++j) {
      out_of[static_cast<std::size_t>(slices[o][j])] = static_cast<std::int64_t>(o);
      ordinal_of[static_cast<std::size_t>(slices[o][j])] = static_cast<std::int64_t>(j);
    }
  std::vector<int> visits(out_of.size(), 0);
  std::vector<int> bad(out_of.size(), 0);
  for_each_reduce_line(plan, threads, [&](std::int64_t in, std::int64_t out, std::int64_t n, std::int64_t k) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto i = static_cast<std::size_t>(in + j);
      ++visits[i];
      const std::int64_t o = plan.line_reduced ? out : out + j;
      const std::int64_t ord = plan.line_reduced ? k * n + j : k;
      if (out_of[i] != o || ordinal_of[i] != ord) bad[i] = 1;
    }
  });
  for (std::size_t i = 0; i < visits.size(); ++i) {
    ASSERT_EQ(visits[i], 1) << "element " << i << " of " << to_string(shape);
    ASSERT_EQ(bad[i], 0) << "element " << i << " of " << to_string(shape);
  }
}

TEST(ReduceTraversal, SweepVisitsEveryElementOnceAtItsOutput) {
  for (const auto& rc : testing::reduce_sweep(7, 300, 5)) {
    SCOPED_TRACE(testing::describe(rc));
    check_traversal(rc.shape, rc.reduced, 1);
  }
}

TEST(ReduceTraversal, LargeTensorsWithTwoThreads) {
  const Shape shape{6, 37, 5, 41};  // 45510 elements: above the parallel threshold
  for (int bits = 0; bits < 16; ++bits) {
    std::vector<bool> reduced(4);
    for (std::size_t a = 0; a < 4; ++a) reduced[a] = (bits >> a) & 1;
    for (int threads : {1, 2}) check_traversal(shape, reduced, threads);
  }
  check_traversal({1, 70000}, {true, false}, 2);  // one row cut into blocks
}

}  // namespace
}  // namespace nodeflow
