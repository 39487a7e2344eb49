// printable(): text from a user's file echoed in a message must not reach the
// terminal as control sequences (an 8-bit CSI is 0x9B, or U+009B as C2 9B),
// while well-formed UTF-8 (names may be any script) passes unchanged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.hpp"
#include "support/subprocess.hpp"

namespace nodeflow {
namespace {

constexpr std::size_t kAll = std::string_view::npos;

TEST(Printable, WellFormedUtf8PassesUnchanged) {
  for (const char* ok : {"plain ascii", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                         "\xc2\xa0", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf", "\xef\xbf\xbf"})
    EXPECT_EQ(printable(ok, kAll), ok);
}

TEST(Printable, C0AndDelAsHexBytes) {
  EXPECT_EQ(printable(std::string("a\0b\x1b\x7f", 5), kAll), "a\\x00b\\x1b\\x7f");
}

TEST(Printable, C1ControlsAsUnicodeEscapes) {
  EXPECT_EQ(printable("x\xc2\x9b" "31m", kAll), "x\\u009b31m");
  EXPECT_EQ(printable("\xc2\x80\xc2\x9f", kAll), "\\u0080\\u009f");
}

TEST(Printable, EachByteOfIllFormedUtf8AsHex) {
  EXPECT_EQ(printable("\"x\x9b", kAll), "\"x\\x9b");        // a lone continuation byte
  EXPECT_EQ(printable("\xc3(", kAll), "\\xc3(");            // a lead without continuation
  EXPECT_EQ(printable("\xc0\x80", kAll), "\\xc0\\x80");     // overlong NUL
  EXPECT_EQ(printable("\xe0\x80\x80", kAll), "\\xe0\\x80\\x80");  // overlong
  EXPECT_EQ(printable("\xed\xa0\x80", kAll), "\\xed\\xa0\\x80");  // surrogate U+D800
  EXPECT_EQ(printable("\xf4\x90\x80\x80", kAll), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\xff\xfe", kAll), "\\xff\\xfe");
  EXPECT_EQ(printable("\xe2\x82", kAll), "\\xe2\\x82");  // cut short at the end
}

TEST(Printable, CutNeverInsideASequence) {
  EXPECT_EQ(printable("ab\xe2\x82\xac", 4), "ab...");
  EXPECT_EQ(printable("ab\xe2\x82\xac", 5), "ab\xe2\x82\xac");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("\x9b\x9b\x9b", 2), "\\x9b\\x9b...");
}

TEST(Printable, AsciiOnlyEscapesEveryByteOutsideAscii) {
  EXPECT_EQ(printable("caf\xc3\xa9", kAll, true), "caf\\xc3\\xa9");
}

// The raw 0x9B byte of a malformed graph document, echoed by the JSON
// parser's "last read" context, reaches the terminal as \x9b.
TEST(Printable, TheCliEscapesARawCsiByteOfAMalformedDocument) {
  testing::ScratchDir scratch("nodeflow-printable");
  std::ofstream(scratch.path() / "bad.json", std::ios::binary) << "{\"x\x9b";
  const testing::ProcessResult r =
      testing::run_process({NODEFLOW_BUILT_CLI, "check", "bad.json"}, scratch.path());
  EXPECT_FALSE(r.sanitizer_report()) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_EQ(r.err.find('\x9b'), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("\\x9b"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace nodeflow
