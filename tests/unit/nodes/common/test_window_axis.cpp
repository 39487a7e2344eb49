// The window-axis module on its own (docs/pooling.md "Output size"): the one
// output-size rule (floor, ceil with the last-window rule, SAME_UPPER,
// SAME_LOWER, VALID) with its overflow checks, the valid and padded taps of a
// window against a brute-force count, and floor/ceil division.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/errors.hpp"
#include "nodes/common/window_axis.hpp"

namespace nodeflow {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

WindowAxis axis(std::int64_t kernel, std::int64_t stride, std::int64_t dilation = 1,
                std::int64_t pad_begin = 0, std::int64_t pad_end = 0) {
  WindowAxis a;
  a.kernel = kernel;
  a.stride = stride;
  a.dilation = dilation;
  a.pad_begin = pad_begin;
  a.pad_end = pad_end;
  return a;
}

WindowAxis resolved(const WindowAxis& a, std::int64_t in, AutoPad auto_pad, bool ceil_mode) {
  return resolve_window_axis(a, in, {auto_pad, ceil_mode, "pooling"});
}

std::string overflow_of(const WindowAxis& a, std::int64_t in, const WindowRule& rule) {
  try {
    resolve_window_axis(a, in, rule);
  } catch (const ShapeMismatch& e) {
    return e.what();
  }
  return "no error";
}

TEST(WindowDivision, FloorAndCeilForEverySign) {
  EXPECT_EQ(floor_div(7, 2), 3);
  EXPECT_EQ(ceil_div(7, 2), 4);
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(ceil_div(-7, 2), -3);
  EXPECT_EQ(floor_div(-6, 3), -2);
  EXPECT_EQ(ceil_div(-6, 3), -2);
  EXPECT_EQ(floor_div(0, 5), 0);
  EXPECT_EQ(ceil_div(0, 5), 0);
  EXPECT_EQ(floor_div(-1, 5), -1);
  EXPECT_EQ(ceil_div(1, 5), 1);
  EXPECT_EQ(floor_div(kMax, 1), kMax);
  EXPECT_EQ(ceil_div(kMax, 2), kMax / 2 + 1);
}

TEST(WindowOutputSize, FloorFormula) {
  // floor((in + pb + pe - ext) / s) + 1
  EXPECT_EQ(resolved(axis(2, 2), 5, AutoPad::NotSet, false).out, 2);           // floor(3/2)+1
  EXPECT_EQ(resolved(axis(3, 1), 5, AutoPad::NotSet, false).out, 3);           // 2+1
  EXPECT_EQ(resolved(axis(3, 2, 1, 1, 1), 4, AutoPad::NotSet, false).out, 2);  // floor(3/2)+1
  EXPECT_EQ(resolved(axis(3, 1, 2), 7, AutoPad::NotSet, false).out, 3);        // ext 5: 2+1
  EXPECT_EQ(resolved(axis(2, 3, 1, 0, 1), 7, AutoPad::NotSet, false).out, 3);  // floor(6/3)+1
}

TEST(WindowOutputSize, CeilFormulaKeepsALastWindowThatStartsInTheInput) {
  // ceil((5 - 2) / 2) + 1 = 3; the third window starts at 4 < 5: kept.
  EXPECT_EQ(resolved(axis(2, 2), 5, AutoPad::NotSet, true).out, 3);
  // 4x4, k3 s2 p1: ceil(3/2)+1 = 3; window 2 starts at 4-1 = 3 < 4: kept.
  EXPECT_EQ(resolved(axis(3, 2, 1, 1, 1), 4, AutoPad::NotSet, true).out, 3);
  // Exact division: ceil equals floor.
  EXPECT_EQ(resolved(axis(2, 2), 6, AutoPad::NotSet, true).out, 3);
}

TEST(WindowOutputSize, CeilDropsALastWindowThatWouldStartInTheEndPad) {
  // in 2, k 2, s 2, end pad 1: ceil(1/2)+1 = 2, but window 1 would start at
  // 2 >= in + pb = 2, i.e. entirely in the end padding: dropped.
  EXPECT_EQ(resolved(axis(2, 2, 1, 0, 1), 2, AutoPad::NotSet, true).out, 1);
  // in 5, k 2, s 3, pads 1+1: ceil(5/3)+1 = 3; window 2 starts at 6-1 = 5 >= 5.
  EXPECT_EQ(resolved(axis(2, 3, 1, 1, 1), 5, AutoPad::NotSet, true).out, 2);
  // Same with pb = 2 (k 3): window 2 starts at 6-2 = 4 < 5: kept.
  EXPECT_EQ(resolved(axis(3, 3, 1, 2, 1), 5, AutoPad::NotSet, true).out, 3);
}

TEST(WindowOutputSize, SameUpperAndSameLowerSplitTheTotalPad) {
  // in 6, k 3, s 2: out = ceil(6/2) = 3, P = (3-1)*2 + 3 - 6 = 1.
  const WindowAxis upper = resolved(axis(3, 2), 6, AutoPad::SameUpper, false);
  EXPECT_EQ(upper.out, 3);
  EXPECT_EQ(upper.pad_begin, 0);
  EXPECT_EQ(upper.pad_end, 1);
  const WindowAxis lower = resolved(axis(3, 2), 6, AutoPad::SameLower, false);
  EXPECT_EQ(lower.out, 3);
  EXPECT_EQ(lower.pad_begin, 1);
  EXPECT_EQ(lower.pad_end, 0);
  // Even total: in 5, k 3, s 2 -> out 3, P = 4 + 3 - 5 = 2 -> 1 + 1 either way.
  const WindowAxis even = resolved(axis(3, 2), 5, AutoPad::SameLower, false);
  EXPECT_EQ(even.pad_begin, 1);
  EXPECT_EQ(even.pad_end, 1);
  // Dilated: in 6, k 3, d 2 (ext 5), s 1 -> out 6, P = 5 + 5 - 6 = 4.
  const WindowAxis dilated = resolved(axis(3, 1, 2), 6, AutoPad::SameUpper, false);
  EXPECT_EQ(dilated.out, 6);
  EXPECT_EQ(dilated.pad_begin, 2);
  EXPECT_EQ(dilated.pad_end, 2);
  // P is never negative: in 7, k 1, s 3 -> out 3, (3-1)*3 + 1 - 7 = 0.
  const WindowAxis none = resolved(axis(1, 3), 7, AutoPad::SameUpper, false);
  EXPECT_EQ(none.out, 3);
  EXPECT_EQ(none.pad_begin + none.pad_end, 0);
  // In 4, k 1, s 3: (2-1)*3 + 1 - 4 = 0 again; in 2, k 2, s 5: out 1, P = 0.
  EXPECT_EQ(resolved(axis(2, 5), 2, AutoPad::SameLower, false).pad_begin, 0);
}

TEST(WindowOutputSize, CeilModeHasNoEffectWithSame) {
  for (AutoPad same : {AutoPad::SameUpper, AutoPad::SameLower}) {
    const WindowAxis floor_mode = resolved(axis(2, 3), 7, same, false);
    const WindowAxis ceil_mode = resolved(axis(2, 3), 7, same, true);
    EXPECT_EQ(floor_mode.out, 3);
    EXPECT_EQ(ceil_mode.out, 3);
    EXPECT_EQ(ceil_mode.pad_begin, floor_mode.pad_begin);
    EXPECT_EQ(ceil_mode.pad_end, floor_mode.pad_end);
  }
}

TEST(WindowOutputSize, ValidIgnoresPadsAndHonoursCeilMode) {
  const WindowAxis floor_mode = resolved(axis(2, 2, 1, 1, 1), 5, AutoPad::Valid, false);
  EXPECT_EQ(floor_mode.out, 2);
  EXPECT_EQ(floor_mode.pad_begin, 0);
  EXPECT_EQ(floor_mode.pad_end, 0);
  EXPECT_EQ(resolved(axis(2, 2), 5, AutoPad::Valid, true).out, 3);
}

TEST(WindowOutputSize, ConvCases) {
  // No ceil_mode: NOTSET floor((7 + 1 + 1 - 3) / 2) + 1 = 4.
  EXPECT_EQ(resolved(axis(3, 2, 1, 1, 1), 7, AutoPad::NotSet, false).out, 4);
  // floor((8 - 3) / 2) + 1 = 3: the last partial window is dropped.
  EXPECT_EQ(resolved(axis(3, 2), 8, AutoPad::NotSet, false).out, 3);
  // VALID ignores the explicit pads.
  WindowAxis a = resolved(axis(3, 2, 1, 4, 4), 7, AutoPad::Valid, false);
  EXPECT_EQ(a.out, 3);
  EXPECT_EQ(a.pad_begin, 0);
  EXPECT_EQ(a.pad_end, 0);
  // SAME: out = ceil(6 / 1) = 6, total pad 5 + 4 - 6 = 3; UPPER puts the odd one at the end.
  a = resolved(axis(4, 1), 6, AutoPad::SameUpper, false);
  EXPECT_EQ(a.out, 6);
  EXPECT_EQ(a.pad_begin, 1);
  EXPECT_EQ(a.pad_end, 2);
  a = resolved(axis(4, 1), 6, AutoPad::SameLower, false);
  EXPECT_EQ(a.pad_begin, 2);
  EXPECT_EQ(a.pad_end, 1);
  // SAME with stride: out = ceil(7 / 2) = 4, pad = 3*2 + 3 - 7 = 2.
  a = resolved(axis(3, 2), 7, AutoPad::SameUpper, false);
  EXPECT_EQ(a.out, 4);
  EXPECT_EQ(a.pad_begin + a.pad_end, 2);
  // A kernel wider than the padded input gives no window (floor(-2 / 1) + 1).
  EXPECT_EQ(resolved(axis(5, 1), 3, AutoPad::NotSet, false).out, -1);
}

TEST(WindowOutputSize, DynamicInputOrKernelGivesADynamicOutput) {
  WindowAxis a = resolved(axis(3, 1, 1, 1, 2), kDynamicDim, AutoPad::NotSet, false);
  EXPECT_EQ(a.in, kDynamicDim);
  EXPECT_EQ(a.out, kDynamicDim);
  EXPECT_EQ(a.pad_begin, 1);
  EXPECT_EQ(a.pad_end, 2);
  // VALID's pads are known without the size.
  a = resolved(axis(3, 1, 1, 1, 2), kDynamicDim, AutoPad::Valid, false);
  EXPECT_EQ(a.pad_begin + a.pad_end, 0);
  // Conv: W's kernel may be dynamic.
  EXPECT_EQ(resolved(axis(kDynamicDim, 1), 9, AutoPad::SameUpper, false).out, kDynamicDim);
}

TEST(WindowOutputSize, SizesBeyondInt64AreRefusedNamingTheFamily) {
  // in + pb + pe.
  EXPECT_EQ(overflow_of(axis(3, 1, 1, 5, 5), kMax - 3, {AutoPad::NotSet, false, "pooling"}),
            "pooling size overflows int64");
  EXPECT_EQ(overflow_of(axis(3, 1, 1, 5, 5), kMax - 3, {AutoPad::NotSet, false, "convolution"}),
            "convolution size overflows int64");
  // SAME: (out-1)*s + ext.
  EXPECT_EQ(overflow_of(axis(4, 1), kMax, {AutoPad::SameUpper, false, "pooling"}),
            "pooling size overflows int64");
  // ceil_mode: (out-1)*s, with a stride larger than the extent.
  EXPECT_EQ(overflow_of(axis(1, 1 << 30), kMax - 1, {AutoPad::NotSet, true, "pooling"}),
            "pooling size overflows int64");
  // The extent itself (Conv's kernel comes from W's shape).
  EXPECT_EQ(overflow_of(axis(std::int64_t{1} << 40, 1, std::int64_t{1} << 31), 8,
                        {AutoPad::NotSet, false, "convolution"}),
            "convolution size overflows int64");
  // At the edge of the range everything still resolves.
  EXPECT_EQ(resolved(axis(3, 1, 1, 1, 1), kMax - 2, AutoPad::NotSet, false).out, kMax - 2);
  const WindowAxis same = resolved(axis(1, 1), kMax, AutoPad::SameLower, false);
  EXPECT_EQ(same.out, kMax);
  EXPECT_EQ(same.pad_begin + same.pad_end, 0);
  EXPECT_FALSE(same.valid_taps(kMax - 1).empty());
}

// The taps and outputs of a window, counted position by position.
struct BruteForce {
  IndexRange valid, padded;
};

BruteForce count_taps(const WindowAxis& a, std::int64_t o) {
  BruteForce b{{-1, -1}, {-1, -1}};
  auto extend = [](IndexRange& r, std::int64_t t) {
    if (r.begin < 0) r.begin = t;
    r.end = t + 1;
  };
  for (std::int64_t t = 0; t < a.kernel; ++t) {
    const std::int64_t pos = a.position(o, t);
    if (pos >= 0 && pos < a.in) extend(b.valid, t);
    if (pos >= -a.pad_begin && pos < a.in + a.pad_end) extend(b.padded, t);
  }
  return b;
}

TEST(WindowTaps, ValidAndPaddedTapsMatchABruteForceCountOverASweep) {
  int checked = 0;
  for (std::int64_t in = 1; in <= 7; ++in)
    for (std::int64_t k = 1; k <= 4; ++k)
      for (std::int64_t s = 1; s <= 3; ++s)
        for (std::int64_t d = 1; d <= 3; ++d)
          for (std::int64_t pb = 0; pb < d * (k - 1) + 1; ++pb)
            for (std::int64_t pe = 0; pe < d * (k - 1) + 1; pe += 2)
              for (bool ceil_mode : {false, true}) {
                const WindowAxis a =
                    resolved(axis(k, s, d, pb, pe), in, AutoPad::NotSet, ceil_mode);
                const std::string what = "in " + std::to_string(in) + " k " + std::to_string(k) +
                                         " s " + std::to_string(s) + " d " + std::to_string(d) +
                                         " pads " + std::to_string(pb) + "+" + std::to_string(pe) +
                                         (ceil_mode ? " ceil" : "");
                for (std::int64_t o = 0; o < a.out; ++o) {
                  const BruteForce want = count_taps(a, o);
                  const IndexRange valid = a.valid_taps(o), padded = a.padded_taps(o);
                  if (want.valid.begin < 0) {
                    EXPECT_TRUE(valid.empty()) << what << " output " << o;
                  } else {
                    EXPECT_EQ(valid.begin, want.valid.begin) << what << " output " << o;
                    EXPECT_EQ(valid.end, want.valid.end) << what << " output " << o;
                  }
                  ASSERT_GE(want.padded.begin, 0) << what;  // a window starts in input + pads
                  EXPECT_EQ(padded.begin, want.padded.begin) << what << " output " << o;
                  EXPECT_EQ(padded.end, want.padded.end) << what << " output " << o;
                  ++checked;
                }
                // The adjoint view: output o is listed for tap t exactly when t is valid for o.
                for (std::int64_t t = 0; t < k; ++t) {
                  const IndexRange outs = a.outputs_with_valid_tap(t);
                  for (std::int64_t o = 0; o < a.out; ++o) {
                    const IndexRange valid = a.valid_taps(o);
                    EXPECT_EQ(o >= outs.begin && o < outs.end, t >= valid.begin && t < valid.end)
                        << what << " tap " << t << " output " << o;
                  }
                }
              }
  EXPECT_GT(checked, 10000);
}

TEST(WindowTaps, CeilModeTapsPastTheEndPadAreNotPadded) {
  // in 6, k 3, s 2, ceil: windows at 0, 2, 4; the last reads 4, 5 and 6,
  // past the end, where no pad is.
  const WindowAxis a = resolved(axis(3, 2), 6, AutoPad::NotSet, true);
  ASSERT_EQ(a.out, 3);
  EXPECT_EQ(a.valid_taps(2).size(), 2);
  EXPECT_EQ(a.padded_taps(2).size(), 2);
  // in 7, end pad 1: the last window reads 6, the pad at 7, and 8 past it.
  const WindowAxis b = resolved(axis(3, 2, 1, 0, 1), 7, AutoPad::NotSet, true);
  ASSERT_EQ(b.out, 4);
  EXPECT_EQ(b.valid_taps(3).size(), 1);
  EXPECT_EQ(b.padded_taps(3).size(), 2);
}

TEST(WindowTransposedSize, InvertsTheFloorRule) {
  // in 3 outputs of k 2, s 2 come from (3-1)*2 + 2 = 6 inputs; pads take off.
  EXPECT_EQ(transposed_size(axis(2, 2), 3, "pooling"), 6);
  EXPECT_EQ(transposed_size(axis(3, 2, 1, 1, 0), 3, "pooling"), 6);
  EXPECT_EQ(resolved(axis(3, 2, 1, 1, 0), 6, AutoPad::NotSet, false).out, 3);
  // Dilation widens the window: ext 5.
  EXPECT_EQ(transposed_size(axis(3, 1, 2), 4, "convolution"), 8);
  try {
    transposed_size(axis(2, std::int64_t{1} << 31), std::int64_t{1} << 40, "pooling");
    ADD_FAILURE() << "no overflow";
  } catch (const ShapeMismatch& e) {
    EXPECT_EQ(std::string(e.what()), "pooling size overflows int64");
  }
}

}  // namespace
}  // namespace nodeflow
