// Attribute specs: the wording every "expected ..., got ..." message shares,
// the declarative rules and the filling of defaults.
#include <gtest/gtest.h>

#include <cmath>

#include "core/attributes.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"

namespace nodeflow {
namespace {

using Ints = std::vector<std::int64_t>;

AttrSpec ints(std::string name, AttrKind kind, std::optional<std::int64_t> min,
              std::optional<std::int64_t> max = std::nullopt) {
  AttrSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.min = min;
  s.max = max;
  return s;
}

TEST(Attributes, DescribeUsesTheRightArticleAndRange) {
  EXPECT_EQ(describe(ints("p", AttrKind::Int, 1)), "a positive integer");
  EXPECT_EQ(describe(ints("i", AttrKind::Int, std::nullopt)), "an integer");
  EXPECT_EQ(describe(ints("c", AttrKind::Int, 0, 1)), "an integer 0 or 1");
  EXPECT_EQ(describe(ints("pads", AttrKind::Ints, 0)), "a list of non-negative integers");
  EXPECT_EQ(describe(ints("k", AttrKind::Ints, 1)), "a list of positive integers");
  EXPECT_EQ(describe(ints("a", AttrKind::Int, -1, 3)), "an integer in [-1, 3]");
}

TEST(Attributes, ValidateNamesAttributeRuleAndValue) {
  const std::vector<AttrSpec> specs{ints("p", AttrKind::Int, 1), ints("k", AttrKind::Ints, 1)};
  try {
    validate_attributes("LpPool", specs, {{"p", std::int64_t{0}}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "attributes.p: expected a positive integer, got 0");
  }
  try {
    validate_attributes("LpPool", specs, {{"k", std::vector<std::int64_t>{2, 0}}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "attributes.k: expected a list of positive integers, got [2, 0]");
  }
  EXPECT_NO_THROW(validate_attributes("LpPool", specs, {{"p", std::int64_t{3}}}));
}

TEST(Attributes, AnUnknownNameIsShownWithItsControlCharactersEscaped) {
  // A raw NUL ended the printed message after "attributes.kernel_shape".
  const std::vector<AttrSpec> specs{ints("p", AttrKind::Int, 1)};
  try {
    validate_attributes("LpPool", specs, {{std::string("kernel_shape\0", 13), std::int64_t{1}}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_EQ(std::string(e.what()),
              "attributes.kernel_shape\\x00: unknown attribute 'kernel_shape\\x00' for LpPool (known: p)");
  }
}

std::string refusal(const std::vector<AttrSpec>& specs, const Attributes& attrs) {
  try {
    validate_attributes("Op", specs, attrs);
  } catch (const InvalidAttribute& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Attributes, FloatRangesHaveOpenAndClosedEnds) {
  AttrSpec ratio = float_spec("ratio", 0.5, "");
  ratio.min_float = FloatBound{0.0, false};
  ratio.max_float = FloatBound{1.0, true};
  EXPECT_EQ(describe(ratio), "a number in [0, 1)");
  EXPECT_EQ(refusal({ratio}, {{"ratio", 1.0}}), "attributes.ratio: expected a number in [0, 1), got 1");
  EXPECT_EQ(refusal({ratio}, {{"ratio", 0.0}}), "accepted");
  AttrSpec epsilon = float_spec("epsilon", 1e-5, "");
  epsilon.min_float = FloatBound{0.0, false};
  EXPECT_EQ(refusal({epsilon}, {{"epsilon", -1.0}}), "attributes.epsilon: expected a number >= 0, got -1");
  AttrSpec positive = float_spec("p", 1.0, "");
  positive.min_float = FloatBound{0.0, true};
  EXPECT_EQ(describe(positive), "a number > 0");
  EXPECT_EQ(describe(float_spec("alpha", 1.0, "")), "a number");
  EXPECT_EQ(refusal({positive}, {{"p", std::nan("")}}), "attributes.p: expected a number > 0, got nan");
}

TEST(Attributes, AllowedIntsAreListed) {
  EXPECT_EQ(describe(flag_spec("ceil_mode", "")), "an integer 0 or 1");
  AttrSpec group;
  group.name = "g";
  group.allowed_ints = {1, 2, 4};
  EXPECT_EQ(describe(group), "an integer one of 1, 2, 4");
  EXPECT_EQ(refusal({group}, {{"g", std::int64_t{3}}}), "attributes.g: expected an integer one of 1, 2, 4, got 3");
  EXPECT_EQ(refusal({flag_spec("f", "")}, {{"f", std::int64_t{2}}}), "attributes.f: expected an integer 0 or 1, got 2");
}

TEST(Attributes, ListLengthsFollowAnotherAttributeAndTheLimitComesAfter) {
  AttrSpec kernel = ints("kernel_shape", AttrKind::Ints, 1);
  kernel.min_length = 1;
  kernel.length = ListLength{"", 1, "one per spatial axis"};
  AttrSpec pads = ints("pads", AttrKind::Ints, 0);
  pads.length = ListLength{"kernel_shape", 2, "begin and end per spatial axis"};
  pads.limit = 10;
  const std::vector<AttrSpec> specs{kernel, pads};
  EXPECT_EQ(refusal(specs, {{"kernel_shape", Ints{}}}),
            "attributes.kernel_shape: expected at least one value (one per spatial axis), got []");
  EXPECT_EQ(refusal(specs, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1}}}),
            "attributes.pads: expected 4 values (begin and end per spatial axis), got [1, 1]");
  EXPECT_EQ(refusal(specs, {{"kernel_shape", Ints{2}}, {"pads", Ints{11, 1}}}),
            "attributes.pads: value 11 is too large (at most 10)");
  // The input-rank lengths are the op's shape inference's, not the loader's.
  EXPECT_EQ(refusal(specs, {{"kernel_shape", Ints{2, 2, 2}}, {"pads", Ints{1, 1, 1, 1, 1, 1}}}), "accepted");
}

TEST(Attributes, DefaultsAreFilledOnceAndReadWithoutFallback) {
  AttrSpec strides = ints("strides", AttrKind::Ints, 1);
  const std::vector<AttrSpec> specs{flag_spec("ceil_mode", ""), strides};
  int checks = 0;
  const Attributes filled = checked_attributes("Op", specs, {}, [&](const Attributes& a) {
    ++checks;
    EXPECT_EQ(attr_int(a, "ceil_mode"), 0);  // the check sees the defaults
  });
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(attr_int(filled, "ceil_mode"), 0);
  EXPECT_FALSE(optional_ints(filled, "strides").has_value());
  EXPECT_THROW(attr_int(Attributes{}, "ceil_mode"), InvalidAttribute);  // unfilled: no fallback
  EXPECT_THROW(attr_float(filled, "ceil_mode"), InvalidAttribute);      // another kind
  // A given value is kept.
  EXPECT_EQ(attr_int(with_defaults(specs, {{"ceil_mode", std::int64_t{1}}}), "ceil_mode"), 1);
}

TEST(Attributes, JoinSeparatesWithCommas) {
  EXPECT_EQ(join({}), "");
  EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
}

TEST(Shapes, ZeroDimensionsDoNotHideAnOverflowingProduct) {
  // Either order of the dimensions gives the same answer; code walking the
  // shape multiplies the nonzero ones.
  constexpr std::int64_t big = std::int64_t{1} << 62;
  EXPECT_THROW(element_count({big, big, 0}), ShapeMismatch);
  EXPECT_THROW(element_count({0, big, big}), ShapeMismatch);
  EXPECT_EQ(element_count({0, big}), 0);
  EXPECT_EQ(element_count({3, 0, 5}), 0);
  EXPECT_EQ(element_count({3, 4, 5}), 60);
}

}  // namespace
}  // namespace nodeflow
