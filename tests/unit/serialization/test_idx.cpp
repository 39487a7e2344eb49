// IDX files (serialization/idx.hpp): every element type against values written
// by hand in big-endian order, plain and gzip-compressed, and hostile files
// (wrong magic, unsupported type, truncated header or data, dimensions larger
// than the data or than the limit, bytes after the data, gzip errors).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "serialization/idx.hpp"
#include "support/error_of.hpp"
#include "support/graph_parts.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/temp_dir.hpp"
#include "support/files.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

using testing::gzip_bytes;
using testing::idx_bytes;
using testing::values_of;

using testing::as_bytes;

Tensor parsed(const std::string& file) { return parse_idx(as_bytes(file), "f"); }

class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::temp_dir("idx"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    testing::write_bytes(dir_ / name, bytes);
    return dir_ / name;
  }
  fs::path dir_;
};

TEST(Idx, ReadsEveryElementType) {
  const Tensor u8 = parsed(idx_bytes(0x08, {2, 3}, "\x01\x02\x03\xfd\xfe\xff"));
  EXPECT_EQ(u8.dtype(), DType::UInt8);
  EXPECT_EQ(u8.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<std::uint8_t>(u8), (std::vector<std::uint8_t>{1, 2, 3, 253, 254, 255}));

  const Tensor i8 = parsed(idx_bytes(0x09, {2}, "\x7f\x80"));
  EXPECT_EQ(i8.dtype(), DType::Int8);
  EXPECT_EQ(values_of<std::int8_t>(i8), (std::vector<std::int8_t>{127, -128}));

  // int32, big-endian: 1, -2, 0x01020304.
  const Tensor i32 = parsed(idx_bytes(0x0C, {3}, std::string("\0\0\0\x01\xff\xff\xff\xfe\x01\x02\x03\x04", 12)));
  EXPECT_EQ(i32.dtype(), DType::Int64);
  EXPECT_EQ(values_of<std::int64_t>(i32), (std::vector<std::int64_t>{1, -2, 0x01020304}));

  // float32 1.5 = 3fc00000, -2 = c0000000.
  const Tensor f32 = parsed(idx_bytes(0x0D, {1, 2}, std::string("\x3f\xc0\0\0\xc0\0\0\0", 8)));
  EXPECT_EQ(f32.dtype(), DType::Float32);
  EXPECT_EQ(values_of<float>(f32), (std::vector<float>{1.5f, -2.0f}));

  // float64 0.25 = 3fd0000000000000.
  const Tensor f64 = parsed(idx_bytes(0x0E, {1}, std::string("\x3f\xd0\0\0\0\0\0\0", 8)));
  EXPECT_EQ(f64.dtype(), DType::Float64);
  EXPECT_EQ(values_of<double>(f64), (std::vector<double>{0.25}));

  const Tensor empty = parsed(idx_bytes(0x08, {0, 28, 28}, ""));
  EXPECT_EQ(empty.shape(), (Shape{0, 28, 28}));
}

TEST(Idx, RefusesMalformedHeaders) {
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(std::string("\0\0", 2)); }),
            "f: not an IDX file: 2 bytes, shorter than the 4-byte magic number");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(std::string("\x01\0\x08\x01\0\0\0\0", 8)); }),
            "f: not an IDX file: the magic number starts with 0x01 0x00, not 0x00 0x00");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(gzip_bytes(idx_bytes(0x08, {1}, "a"))); }),
            "f: not an IDX file: the magic number starts with 0x1f 0x8b, not 0x00 0x00 (it is "
            "gzip-compressed: name it .gz)");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x0B, {1}, "ab")); }),
            "f: IDX element type 0x0b (int16) is not supported (0x08 uint8, 0x09 int8, 0x0c "
            "int32, 0x0d float32, 0x0e float64)");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x42, {1}, "a")); }).substr(0, 27),
            "f: IDX element type 0x42 is");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x08, {}, "")); }),
            "f: IDX file of rank 0 (no dimensions)");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x08, {3, 4}, "").substr(0, 10)); }),
            "f: IDX header is truncated: rank 2 needs 12 bytes, the file holds 10");
}

TEST(Idx, RefusesDataThatDoesNotMatchTheDimensions) {
  // Counts larger than the data: 60000 images announced, 2 present.
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x08, {60000, 28, 28}, std::string(1568, '\0'))); }),
            "f: IDX data is truncated: dimensions [60000, 28, 28] need 47040000 bytes, the file "
            "holds 1568");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x0D, {2}, std::string(7, '\0'))); }),
            "f: IDX data is truncated: dimensions [2] need 8 bytes, the file holds 7");
  EXPECT_EQ(testing::error_of<IoError>([] { parsed(idx_bytes(0x08, {2}, "abc")); }),
            "f: IDX file has 1 bytes after the data of dimensions [2]");
  // Over the limit: refused from the header, before anything is allocated
  // (2^32 - 1 cubed would wrap a 64-bit count).
  EXPECT_EQ(testing::error_of<IoError>([] {
              parsed(idx_bytes(0x0E, {0xffffffffu, 0xffffffffu, 0xffffffffu}, ""));
            }),
            "f: IDX dimensions [4294967295, 4294967295, 4294967295] of 8-byte elements announce "
            "more than 4294967296 bytes of data, the limit");
  EXPECT_NO_THROW(parse_idx_header(as_bytes(idx_bytes(0x08, {65536, 65536}, "")), "f"));
  EXPECT_THROW(parse_idx_header(as_bytes(idx_bytes(0x08, {65536, 65537}, "")), "f"), IoError);
  // A zero dimension makes an empty tensor whatever the others.
  EXPECT_EQ(parse_idx_header(as_bytes(idx_bytes(0x0E, {0xffffffffu, 0, 0xffffffffu}, "")), "f")
                .data_bytes,
            0u);
}

TEST_F(IdxFiles, ReadsPlainAndGzipFilesAlike) {
  std::string pixels;
  for (int i = 0; i < 3 * 28 * 28; ++i) pixels += static_cast<char>(i % 256);
  const std::string file = idx_bytes(0x08, {3, 28, 28}, pixels);
  const Tensor plain = read_idx(write("images", file));
  const Tensor gz = read_idx(write("images.gz", gzip_bytes(file)));
  EXPECT_EQ(plain.shape(), (Shape{3, 28, 28}));
  EXPECT_EQ(gz.shape(), plain.shape());
  EXPECT_EQ(values_of<std::uint8_t>(gz), values_of<std::uint8_t>(plain));
  EXPECT_EQ(values_of<std::uint8_t>(plain)[300], 300 % 256);
}

TEST_F(IdxFiles, RefusesHostileGzipFiles) {
  const std::string file = idx_bytes(0x08, {1000, 28, 28}, std::string(784000, '\x07'));
  const std::string gz = gzip_bytes(file);
  const std::string where = (dir_ / "x.gz").string();
  const auto message = [&](const std::string& bytes) {
    return testing::error_of<IoError>([&] { read_idx(write("x.gz", bytes)); });
  };
  EXPECT_EQ(message(file), where + ": not a gzip file (it does not start with 1f 8b)");
  EXPECT_NE(message(gz.substr(0, gz.size() / 2)).find(where + ": the gzip data ends early"),
            std::string::npos);
  std::string corrupt = gz;
  corrupt[corrupt.size() - 7] ^= 0x10;  // the CRC-32
  EXPECT_EQ(message(corrupt),
            where + ": corrupt gzip data after 784016 decompressed bytes: incorrect data check");
  // The header announces more than the stream holds.
  EXPECT_NE(message(gzip_bytes(idx_bytes(0x08, {60000, 28, 28}, std::string(784, '\0'))))
                .find("IDX data is truncated: dimensions [60000, 28, 28] need 47040000 bytes, the "
                      "file holds 784"),
            std::string::npos);
  // The stream holds more than the header announces: refused after one byte
  // more, not after decompressing it all.
  EXPECT_EQ(message(gzip_bytes(idx_bytes(0x08, {1}, std::string(100000, 'a')))),
            where + ": IDX file has bytes after the data of dimensions [1] (decompressed)");
  // A header cut short inside the gzip stream.
  EXPECT_EQ(message(gzip_bytes(std::string("\0\0\x08\x03\0\0", 6))),
            where + ": IDX header is truncated: rank 3 needs 16 bytes, the file holds 6");
  EXPECT_EQ(message(gzip_bytes("")),
            where + ": not an IDX file: 0 bytes, shorter than the 4-byte magic number");
}

TEST_F(IdxFiles, NamesAMissingFile) {
  EXPECT_NE(testing::error_of<IoError>([&] { read_idx(dir_ / "none"); }).find("cannot read the IDX file"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeflow
