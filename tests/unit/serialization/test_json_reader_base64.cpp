// The strict base64 codec used for initializer data (serialization/base64.hpp).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "serialization/base64.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

std::string decode_to_string(std::string_view text) {
  std::string out;
  for (std::byte b : decode_base64(text)) out += static_cast<char>(b);
  return out;
}

std::string decode_error(std::string_view text) {
  SCOPED_TRACE("decoding '" + std::string(text) + "'");
  return testing::error_of<Error>([&] { decode_base64(text); });
}

TEST(Base64, Rfc4648TestVectors) {
  // RFC 4648 section 10.
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(encode_base64(bytes_of(plain)), encoded);
    EXPECT_EQ(decode_to_string(encoded), plain);
  }
}

TEST(Base64, EveryByteValueAndLengthRoundTrips) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 300; ++n) {
    std::vector<std::byte> data(n);
    for (auto& b : data) b = static_cast<std::byte>(rng() & 0xff);
    const std::string text = encode_base64(data);
    EXPECT_EQ(text.size(), (n + 2) / 3 * 4);
    EXPECT_EQ(decode_base64(text), data) << n;
  }
  // "+/" are the last two alphabet letters: bytes fb ff bf.
  EXPECT_EQ(encode_base64(std::vector<std::byte>{std::byte{0xfb}, std::byte{0xff}, std::byte{0xbf}}), "+/+/");
}

TEST(Base64, StrictDecoderRefusesEverythingElse) {
  EXPECT_NE(decode_error("Zm9").find("not a multiple of 4"), std::string::npos);
  EXPECT_NE(decode_error("Zm9v\n").find("not a multiple of 4"), std::string::npos);
  EXPECT_NE(decode_error("Zm 9").find("character 2: character code 32"), std::string::npos);
  EXPECT_NE(decode_error("Zm9-").find("not in the base64 alphabet"), std::string::npos);  // base64url
  EXPECT_NE(decode_error("Zm9_").find("not in the base64 alphabet"), std::string::npos);
  EXPECT_NE(decode_error("Z===").find("'=' before the end"), std::string::npos);
  EXPECT_NE(decode_error("====").find("'=' before the end"), std::string::npos);
  EXPECT_NE(decode_error("Zg==Zg==").find("'=' before the end"), std::string::npos);
  EXPECT_NE(decode_error("Z=g=").find("'=' before the end"), std::string::npos);
  // Non-canonical: "Zh==" carries bits after the one byte "f".
  EXPECT_NE(decode_error("Zh==").find("non-zero bits"), std::string::npos);
  EXPECT_NE(decode_error("Zm9=").find("non-zero bits"), std::string::npos);
  EXPECT_NE(decode_error(std::string("Zm\0v", 4)).find("character code 0"), std::string::npos);
  EXPECT_NE(decode_error("Zm\xc3\xa9").find("character code 195"), std::string::npos);
}

}  // namespace
}  // namespace nodeflow
