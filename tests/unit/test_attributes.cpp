// Attribute specs: the wording every "expected ..., got ..." message shares.
#include <gtest/gtest.h>

#include "core/attributes.hpp"
#include "core/errors.hpp"

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

}  // namespace
}  // namespace nodeflow
