// Attribute specs: the wording every "expected ..., got ..." message shares.
#include <gtest/gtest.h>

#include "core/attributes.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"

namespace nodeflow {
namespace {

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
