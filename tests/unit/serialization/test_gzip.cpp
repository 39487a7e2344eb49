// The gzip reader (serialization/gzip.hpp): known content through zlib's own
// compressor and through bytes made by Python's gzip module, members one after
// the other, and hostile files (not gzip, truncated, corrupt, trailing bytes,
// more than the limit).
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "serialization/gzip.hpp"
#include "support/error_of.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/files.hpp"

namespace nodeflow {
namespace {

using testing::gzip_bytes;

using testing::as_bytes;

std::string gunzipped(const std::string& gz, std::size_t max_bytes = 1 << 20) {
  return gunzip(as_bytes(gz), "f.gz", max_bytes);
}

TEST(Gzip, DecompressesKnownContent) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += static_cast<char>(i * 7 % 251);
  EXPECT_EQ(gunzipped(gzip_bytes(text)), text);
  EXPECT_EQ(gunzipped(gzip_bytes("")), "");
  // python3 -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'idx', mtime=0))"
  const std::string python("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcbL\xa9\x00\x00\x10~"
                           "\x08\xe7\x03\x00\x00\x00",
                           23);
  EXPECT_EQ(gunzipped(python), "idx");
}

TEST(Gzip, ReadsMembersOneAfterTheOtherAndZeroPadding) {
  EXPECT_EQ(gunzipped(gzip_bytes("abc") + gzip_bytes("def")), "abcdef");
  EXPECT_EQ(gunzipped(gzip_bytes("abc") + std::string(5, '\0')), "abc");
}

TEST(Gzip, ReadsInPiecesAndTellsTheEnd) {
  const std::string gz = gzip_bytes("0123456789");
  GzipReader reader(as_bytes(gz), "f.gz");
  std::string out(4, '\0');
  EXPECT_EQ(reader.read(reinterpret_cast<std::byte*>(out.data()), 4), 4u);
  EXPECT_EQ(out, "0123");
  EXPECT_EQ(reader.read(reinterpret_cast<std::byte*>(out.data()), 4), 4u);
  EXPECT_EQ(reader.read(reinterpret_cast<std::byte*>(out.data()), 4), 2u);
  EXPECT_EQ(out.substr(0, 2), "89");
  EXPECT_EQ(reader.read(reinterpret_cast<std::byte*>(out.data()), 4), 0u);
  EXPECT_EQ(reader.position(), 10u);
}

TEST(Gzip, RefusesWhatIsNotGzip) {
  EXPECT_EQ(testing::error_of<IoError>([] { gunzipped("\x1f"); }),
            "f.gz: not a gzip file (fewer than 2 bytes)");
  EXPECT_EQ(testing::error_of<IoError>([] { gunzipped(std::string("\0\0\x08\x01", 4)); }),
            "f.gz: not a gzip file (it does not start with 1f 8b)");
}

TEST(Gzip, RefusesTruncatedFiles) {
  std::string text(5000, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * i % 256);
  const std::string gz = gzip_bytes(text);
  for (std::size_t keep : {std::size_t{2}, std::size_t{10}, gz.size() / 2, gz.size() - 1}) {
    const std::string message = testing::error_of<IoError>([&] { gunzipped(gz.substr(0, keep)); });
    EXPECT_NE(message.find("f.gz: the gzip data ends early (the file is truncated)"),
              std::string::npos)
        << keep << ": " << message;
  }
}

TEST(Gzip, RefusesCorruptData) {
  const std::string text(3000, 'a');
  std::string bad_crc = gzip_bytes(text);
  bad_crc[bad_crc.size() - 6] ^= 0x01;  // the CRC-32 of the trailer
  EXPECT_EQ(testing::error_of<IoError>([&] { gunzipped(bad_crc); }),
            "f.gz: corrupt gzip data after 3000 decompressed bytes: incorrect data check");
  std::string bad_length = gzip_bytes(text);
  bad_length[bad_length.size() - 2] ^= 0x01;  // the length of the trailer
  EXPECT_EQ(testing::error_of<IoError>([&] { gunzipped(bad_length); }),
            "f.gz: corrupt gzip data after 3000 decompressed bytes: incorrect length check");
  std::string bad_method = gzip_bytes(text);
  bad_method[2] = 0x07;  // not deflate
  EXPECT_NE(testing::error_of<IoError>([&] { gunzipped(bad_method); }).find("unknown compression method"),
            std::string::npos);
  EXPECT_EQ(testing::error_of<IoError>([&] { gunzipped(gzip_bytes("abc") + "junk"); }),
            "f.gz: 4 bytes after the end of the gzip data that are not another gzip member");
}

TEST(Gzip, StopsAtTheLimit) {
  const std::string gz = gzip_bytes(std::string(10000, 'z'));
  EXPECT_EQ(gunzipped(gz, 10000).size(), 10000u);
  EXPECT_EQ(testing::error_of<IoError>([&] { gunzipped(gz, 9999); }),
            "f.gz: decompresses to more than 9999 bytes, the limit");
}

}  // namespace
}  // namespace nodeflow
