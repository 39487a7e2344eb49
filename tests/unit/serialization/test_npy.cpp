// .npy reading and writing (serialization/npy.hpp): round trips of every dtype
// and shape, the conformance files (values cross-checked with numpy 1.24),
// Fortran order, big-endian, format versions, malformed files and atomic writes.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "serialization/npy.hpp"
#include "support/conformance_corpora.hpp"
#include "support/error_of.hpp"
#include "support/files.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

using testing::as_bytes;

/// A .npy file from its header dictionary and raw data, as numpy lays it out.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  std::size_t len = header.size();
  for (std::size_t i = 0; i < preamble - 8; ++i, len >>= 8) out += static_cast<char>(len & 0xff);
  return out + header + data;
}

template <typename T> std::string raw_bytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

std::string reversed_each(const std::string& bytes, std::size_t item) {
  std::string out = bytes;
  for (std::size_t i = 0; i < out.size(); i += item) std::reverse(out.begin() + i, out.begin() + i + item);
  return out;
}

Tensor parse(const std::string& file) { return parse_npy(as_bytes(file), "mem.npy"); }

/// The IoError message of parsing `file`; fails the test if it parses.
std::string parse_error(const std::string& file) {
  return testing::error_of<IoError>([&] { parse(file); });
}

class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("nodeflow_npy_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::vector<std::string> entries(const fs::path& dir) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

// ---------------------------------------------------------------- round trips

/// Distinct, exactly representable values for every dtype.
Tensor sample(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      p[i] = static_cast<T>(static_cast<float>((i * 7) % 23 - (std::is_unsigned_v<T> ? 0 : 11)));
  });
  return t;
}

using NpyRoundTrip = ScratchDir;

TEST_F(NpyRoundTrip, EveryDtypeAndShapeReadsBackIdentical) {
  const std::vector<Shape> shapes = {{}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4, 2}};
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::UInt8,
                      DType::Int64}) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + to_string(shape));
      const Tensor t = sample(dtype, shape);
      const fs::path file = dir_ / "t.npy";
      write_npy(file, t);
      const Tensor back = read_npy(file);
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.shape(), shape);
      ASSERT_EQ(back.nbytes(), t.nbytes());
      EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.nbytes()), 0);
      const std::string bytes = encode_npy(t);
      const Tensor again = parse(bytes);
      EXPECT_EQ(again.shape(), shape);
      EXPECT_EQ(std::memcmp(again.raw(), t.raw(), t.nbytes()), 0);
    }
  }
}

TEST_F(NpyRoundTrip, SpecialFloatValuesKeepTheirBits) {
  const std::uint32_t bits[] = {0x7fc00001u, 0xff800000u, 0x7f800000u, 0x80000000u, 0x00000001u,
                                0x7f7fffffu};
  Tensor t(DType::Float32, {6});
  std::memcpy(t.raw(), bits, sizeof bits);
  write_npy(dir_ / "s.npy", t);
  const Tensor back = read_npy(dir_ / "s.npy");
  EXPECT_EQ(std::memcmp(back.raw(), bits, sizeof bits), 0);
}

TEST_F(NpyRoundTrip, Bfloat16IsWrittenAsFloat32HoldingTheSameValues) {
  const Tensor t = Tensor::from<bfloat16>(
      {3}, {bfloat16(1.5f), bfloat16(-0.0078125f), bfloat16(3.3895314e38f)});
  write_npy(dir_ / "b.npy", t);
  const Tensor back = read_npy(dir_ / "b.npy");
  ASSERT_EQ(back.dtype(), DType::Float32);
  EXPECT_EQ(back.values<float>()[0], 1.5f);
  EXPECT_EQ(back.values<float>()[1], -0.0078125f);
  EXPECT_EQ(back.values<float>()[2], static_cast<float>(bfloat16(3.3895314e38f)));
}

TEST_F(NpyRoundTrip, Int32IsInternalAndNotWritten) {
  EXPECT_THROW(write_npy(dir_ / "i.npy", Tensor(DType::Int32, {2})), UnsupportedDType);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "i.npy"));
}

TEST(NpyWrite, HeaderIsWhatNumpyWrites) {
  // numpy: the dict repr, padded with spaces and '\n' to a multiple of 64 bytes.
  const std::string bytes = encode_npy(Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]), 118);
  EXPECT_EQ(bytes.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(bytes.find_first_not_of(' ', 69), 127u);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.substr(128), raw_bytes<float>({1, 2, 3, 4, 5, 6}));

  const std::string one = encode_npy(Tensor::from<std::int8_t>({3}, {1, 2, 3}));
  EXPECT_NE(one.find("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  const std::string scalar = encode_npy(Tensor::from<std::int64_t>({}, {7}));
  EXPECT_NE(scalar.find("'descr': '<i8', 'fortran_order': False, 'shape': ()"), std::string::npos);
}

// ------------------------------------------------------- conformance files

std::string conformance(const std::string& rel) { return std::string(NODEFLOW_CONFORMANCE_DIR) + "/" + rel; }

double sum_of(const Tensor& t) {
  double s = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (T v : t.values<T>()) s += static_cast<double>(v);
  });
  return s;
}

// Expected values were printed by numpy 1.24 (np.load, ravel, sum in float64).
TEST(NpyConformanceFiles, Float32) {
  const Tensor t = read_npy(conformance("avgpool_1d_k3s2_f32/inputs/x.npy"));
  ASSERT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.shape(), (Shape{2, 2, 9}));
  EXPECT_EQ(t.values<float>()[0], -0.5021544098854065f);
  EXPECT_EQ(t.values<float>()[1], 1.4436993598937988f);
  EXPECT_EQ(t.values<float>()[2], -1.4341624975204468f);
  EXPECT_EQ(t.values<float>()[35], -0.9026921391487122f);
  EXPECT_NEAR(sum_of(t), -1.5944868996739388, 1e-12);
}

TEST(NpyConformanceFiles, Float64) {
  const Tensor t = read_npy(conformance("avgpool_2d_f64/inputs/x.npy"));
  ASSERT_EQ(t.dtype(), DType::Float64);
  EXPECT_EQ(t.shape(), (Shape{2, 1, 7, 6}));
  EXPECT_EQ(t.values<double>()[0], -0.7297947315813542);
  EXPECT_EQ(t.values<double>()[2], -1.5449437218030349);
  EXPECT_EQ(t.values<double>()[83], 0.26544953876398364);
  EXPECT_NEAR(sum_of(t), -7.7966935961487325, 1e-12);
}

TEST(NpyConformanceFiles, Float16) {
  const Tensor t = read_npy(conformance("avgpool_2d_f16/inputs/x.npy"));
  ASSERT_EQ(t.dtype(), DType::Float16);
  EXPECT_EQ(t.shape(), (Shape{1, 2, 8, 8}));
  const auto v = t.values<half>();
  EXPECT_EQ(std::bit_cast<std::uint16_t>(v[0]), 0xbd96);
  EXPECT_EQ(std::bit_cast<std::uint16_t>(v[1]), 0x3b95);
  EXPECT_EQ(std::bit_cast<std::uint16_t>(v[2]), 0x2fd2);
  EXPECT_EQ(static_cast<float>(v[127]), -0.91064453125f);
  EXPECT_NEAR(sum_of(t), -0.8190689086914062, 1e-9);
}

TEST(NpyConformanceFiles, Int8AndInt64) {
  const Tensor x = read_npy(conformance("maxpool_2d_int8_indices/inputs/x.npy"));
  ASSERT_EQ(x.dtype(), DType::Int8);
  EXPECT_EQ(x.shape(), (Shape{2, 2, 5, 5}));
  EXPECT_EQ(x.values<std::int8_t>()[0], -76);
  EXPECT_EQ(x.values<std::int8_t>()[1], 4);
  EXPECT_EQ(x.values<std::int8_t>()[2], -3);
  EXPECT_EQ(x.values<std::int8_t>()[99], 4);
  EXPECT_EQ(sum_of(x), -1281.0);

  const Tensor idx = read_npy(conformance("maxpool_2d_int8_indices/expected/indices.npy"));
  ASSERT_EQ(idx.dtype(), DType::Int64);
  EXPECT_EQ(idx.shape(), (Shape{2, 2, 3, 3}));
  EXPECT_EQ(idx.values<std::int64_t>()[0], 6);
  EXPECT_EQ(idx.values<std::int64_t>()[2], 9);
  EXPECT_EQ(idx.values<std::int64_t>()[35], 99);
  EXPECT_EQ(sum_of(idx), 1864.0);
}

TEST(NpyConformanceFiles, UInt8) {
  const Tensor t = read_npy(conformance("maxpool_1d_uint8_indices/inputs/x.npy"));
  ASSERT_EQ(t.dtype(), DType::UInt8);
  EXPECT_EQ(t.shape(), (Shape{1, 3, 9}));
  EXPECT_EQ(t.values<std::uint8_t>()[0], 169);
  EXPECT_EQ(t.values<std::uint8_t>()[1], 245);
  EXPECT_EQ(t.values<std::uint8_t>()[26], 25);
  EXPECT_EQ(sum_of(t), 3584.0);
}

// Both corpora: the operators' holds rank-0, int64 and float16 files too.
TEST(NpyConformanceFiles, EveryFileReadsAndWritesBackTheSameBytes) {
  int files = 0;
  std::vector<fs::path> npy_files;
  for (const auto& corpus : testing::kConformanceCorpora)
    for (const auto& entry : fs::recursive_directory_iterator(corpus.local_dir))
      if (entry.path().extension() == ".npy") npy_files.push_back(entry.path());
  for (const auto& file : npy_files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Tensor t = read_npy(file);
    // Same data bytes at the same offset (the header text may differ in padding).
    const std::string ours = encode_npy(t);
    ASSERT_GE(original.size(), t.nbytes());
    EXPECT_EQ(original.substr(original.size() - t.nbytes()), ours.substr(ours.size() - t.nbytes()));
    ++files;
  }
  EXPECT_GT(files, 400);
}

// ------------------------------------------------- layouts and versions

TEST(NpyRead, FortranOrderIsTransposedToCOrder) {
  // np.asfortranarray(np.arange(6).reshape(2, 3)) stores 0 3 1 4 2 5.
  const Tensor t = parse(npy_file("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }",
                                  raw_bytes<std::int64_t>({0, 3, 1, 4, 2, 5})));
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  const auto v = t.values<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(v.begin(), v.end()), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(NpyRead, FortranOrder3dPlacesEveryElement) {
  // Column-major (2, 3, 4): element (i, j, k) is stored at i + 2 j + 6 k.
  std::string data;
  for (std::int16_t n = 0; n < 24; ++n) data += raw_bytes<float>({static_cast<float>(n)});
  const Tensor t = parse(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", data));
  const auto v = t.values<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(v[static_cast<std::size_t>(i * 12 + j * 4 + k)], static_cast<float>(i + 2 * j + 6 * k));
}

TEST(NpyRead, FortranOrderOfOneAxisOrEmptyIsUnchanged) {
  const Tensor t = parse(npy_file("{'descr': '|u1', 'fortran_order': True, 'shape': (3,), }", "\x01\x02\x03"));
  EXPECT_EQ(t.values<std::uint8_t>()[2], 3);
  const Tensor e = parse(npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (0, 4), }", ""));
  EXPECT_EQ(e.shape(), (Shape{0, 4}));
}

TEST(NpyRead, BigEndianIsByteSwapped) {
  const Tensor f = parse(npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                  reversed_each(raw_bytes<float>({1.5f, -2.0f}), 4)));
  EXPECT_EQ(f.values<float>()[0], 1.5f);
  EXPECT_EQ(f.values<float>()[1], -2.0f);
  const Tensor d = parse(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (), }",
                                  reversed_each(raw_bytes<double>({0.1}), 8)));
  EXPECT_EQ(d.values<double>()[0], 0.1);
  const Tensor i = parse(npy_file("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }",
                                  std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)));
  EXPECT_EQ(i.values<std::int64_t>()[0], 0x0102030405060708);
  const Tensor h = parse(npy_file("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
                                  std::string("\x3c\x00", 2)));
  EXPECT_EQ(static_cast<float>(h.values<half>()[0]), 1.0f);
  const Tensor b = parse(npy_file("{'descr': '>i1', 'fortran_order': False, 'shape': (1,), }", "\xff"));
  EXPECT_EQ(b.values<std::int8_t>()[0], -1);
}

TEST(NpyRead, BigEndianFortranOrder) {
  // (2, 2) column-major big-endian int64: stored 1 3 2 4.
  const Tensor t = parse(npy_file("{'descr': '>i8', 'fortran_order': True, 'shape': (2, 2), }",
                                  reversed_each(raw_bytes<std::int64_t>({1, 3, 2, 4}), 8)));
  const auto v = t.values<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(v.begin(), v.end()), (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST(NpyRead, OneByteDescrVariantsAndVersions) {
  for (const char* descr : {"|i1", "<i1", ">i1", "=i1"}) {
    const Tensor t = parse(npy_file(std::string("{'descr': '") + descr +
                                        "', 'fortran_order': False, 'shape': (1,), }", "\x80"));
    EXPECT_EQ(t.values<std::int8_t>()[0], -128) << descr;
  }
  for (const char* descr : {"|u1", "<u1", ">u1"}) {
    const Tensor t = parse(npy_file(std::string("{'descr': '") + descr +
                                        "', 'fortran_order': False, 'shape': (1,), }", "\x80"));
    EXPECT_EQ(t.values<std::uint8_t>()[0], 128) << descr;
  }
  const Tensor v2 = parse(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                   raw_bytes<float>({4.25f}), 2));
  EXPECT_EQ(v2.values<float>()[0], 4.25f);
}

TEST(NpyRead, HeaderGrammarVariants) {
  // Key order, double quotes, no trailing comma, Python 2 longs, spaces.
  const Tensor t = parse(npy_file("{ \"shape\" : ( 2L , 1 , ) ,\"fortran_order\":False,'descr':'<f4'}",
                                  raw_bytes<float>({1, 2})));
  EXPECT_EQ(t.shape(), (Shape{2, 1}));
  EXPECT_EQ(t.values<float>()[1], 2.0f);
}

// --------------------------------------------------------- malformed files

const std::string kGood = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                   raw_bytes<float>({1, 2, 3, 4}));

TEST(NpyMalformed, EveryTruncationIsAnIoError) {
  for (std::size_t n = 0; n < kGood.size(); ++n) {
    SCOPED_TRACE(n);
    const std::string msg = parse_error(kGood.substr(0, n));
    EXPECT_NE(msg.find("mem.npy"), std::string::npos) << msg;
  }
  EXPECT_NE(parse_error(kGood.substr(0, kGood.size() - 1)).find("truncated"), std::string::npos);
}

TEST(NpyMalformed, TrailingBytesAreRefused) {
  EXPECT_NE(parse_error(kGood + "x").find("1 bytes after the data"), std::string::npos);
}

TEST(NpyMalformed, MagicAndVersion) {
  EXPECT_NE(parse_error("PK\x03\x04 not numpy at all").find("not a .npy file"), std::string::npos);
  std::string v = kGood;
  v[6] = 4;
  EXPECT_NE(parse_error(v).find("version 4.0 is not supported"), std::string::npos);
  v = kGood;
  v[7] = 1;
  EXPECT_NE(parse_error(v).find("version 1.1"), std::string::npos);
}

TEST(NpyMalformed, FormatVersion3IsRefusedAsTheSpecReadsOnly1And2) {
  // docs/graph-format.md, "Tensor files (.npy)": format 1.0 and 2.0.
  const std::string v3 = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                  raw_bytes<float>({4.25f}), 3);
  EXPECT_EQ(parse_error(v3), "mem.npy: .npy format version 3.0 is not supported (1.0 and 2.0 are)");
}

// What read_npy makes of `bytes` sent through a FIFO (as `-i x=<(python ...)`
// hands a .npy to the CLI): the tensor, or the error's text.
std::string read_through_fifo(const std::string& bytes, Tensor* out) {
  const std::string fifo = "/tmp/nodeflow_npy_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  if (::mkfifo(fifo.c_str(), 0600) != 0) return "mkfifo failed";
  std::thread writer([&] {
    std::ofstream(fifo, std::ios::binary) << bytes;  // blocks until the reader opens
  });
  std::string error;
  try {
    *out = read_npy(fifo);
  } catch (const IoError& e) {
    error = e.what();
  }
  writer.join();
  ::unlink(fifo.c_str());
  return error;
}

TEST(NpyPipes, APipeIsReadAsItArrivesAndCheckedAsAFileIs) {
  // A FIFO used to be refused ("not a regular file"): it has no size to check
  // the header against, so its data is read up to what the header announces.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  const std::string fifo_name = "/tmp/nodeflow_npy_fifo_" + std::to_string(::getpid());
  Tensor t;
  EXPECT_EQ(read_through_fifo(npy_file(header, raw_bytes<float>({1.5f, -2.0f, 4.25f})), &t), "");
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(std::vector<float>(t.values<float>().begin(), t.values<float>().end()),
            (std::vector<float>{1.5f, -2.0f, 4.25f}));
  EXPECT_EQ(read_through_fifo(npy_file(header, raw_bytes<float>({1.5f, -2.0f})), &t),
            fifo_name + ": .npy data is truncated: shape [3] of float32 needs 12 bytes, the file "
                        "holds 8");
  EXPECT_EQ(read_through_fifo(npy_file(header, raw_bytes<float>({1, 2, 3, 4})), &t),
            fifo_name + ": .npy stream has bytes after the data of shape [3]");
  // A huge announced shape allocates nothing the stream does not send.
  EXPECT_EQ(read_through_fifo(npy_file("{'descr': '<f4', 'fortran_order': False, "
                                       "'shape': (1000000000000,), }",
                                       raw_bytes<float>({1.0f})),
                              &t),
            fifo_name + ": .npy data is truncated: shape [1000000000000] of float32 needs "
                        "4000000000000 bytes, the file holds 4");
}

TEST(NpyPipes, WritingOverAPipeIsRefusedAndLeavesIt) {
  // Saving renames a new file over the old one: over a FIFO or a device that
  // would replace it with a regular file (convert g.json /dev/null, as root,
  // replaced /dev/null). Every writer goes through write_file_atomically.
  const std::string fifo = "/tmp/nodeflow_npy_out_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    write_npy(fifo, Tensor::from<float>({1}, {1.0f}));
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + fifo +
                                         ": it is a FIFO, and saving replaces a regular file "
                                         "whole (a new file renamed over it)");
  }
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ::unlink(fifo.c_str());
}

TEST(NpyMalformed, HeaderLengthBeyondTheFileOrTheLimit) {
  std::string f = kGood;
  f[8] = '\xff';
  f[9] = '\xff';
  EXPECT_NE(parse_error(f).find("header is truncated (65535 bytes announced"), std::string::npos);
  // Version 2: a 4 GiB header length is refused before anything is read or allocated.
  std::string v2 = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw_bytes<float>({1}), 2);
  v2[8] = v2[9] = v2[10] = v2[11] = '\xff';
  EXPECT_NE(parse_error(v2).find("header length 4294967295 exceeds the limit"), std::string::npos);
}

TEST(NpyMalformed, ShapesThatOverflowOrExceedTheData) {
  EXPECT_NE(parse_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                 "(9223372036854775807, 2), }", ""))
                .find("more elements than int64 can count"),
            std::string::npos);
  EXPECT_NE(parse_error(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                 "(4611686018427387904,), }", ""))
                .find("more bytes than int64 can count"),
            std::string::npos);
  EXPECT_NE(parse_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                 "(99999999999999999999,), }", ""))
                .find("does not fit int64"),
            std::string::npos);
  // Huge but representable: refused by the byte count, never allocated.
  EXPECT_NE(parse_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                 "(1000000000, 1000000), }", raw_bytes<float>({1})))
                .find("needs 4000000000000000 bytes, the file holds 4"),
            std::string::npos);
}

TEST(NpyMalformed, HeaderDictionaryErrorsNameTheProblem) {
  const std::string d4 = raw_bytes<float>({1});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "dtype '<i4' is not supported"},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", "dtype '|b1' is not supported"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (), }", "dtype '<c8' is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "structured dtypes"},
      {"{'descr': '<f4', 'shape': (1,), }", "key 'fortran_order' is missing"},
      {"{'fortran_order': False, 'shape': (1,), }", "key 'descr' is missing"},
      {"{'descr': '<f4', 'fortran_order': False, }", "key 'shape' is missing"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unknown key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1), }", "is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1], }", "expected '('"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,) }junk", "unexpected text after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", "expected a quoted key"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,), }", "unsupported character"},
      {"{'descr': '<f4\xc3\xa9', 'fortran_order': False, 'shape': (1,), }", "unsupported character"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", "expected ',' or '}'"},
      {"", "expected '{'"},
  };
  for (const auto& [dict, words] : cases) {
    SCOPED_TRACE(dict);
    const std::string msg = parse_error(npy_file(dict, d4));
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("mem.npy: ", 0), 0u) << msg;
  }
}

TEST(NpyMalformed, HighRankIsRefused) {
  std::string shape = "(";
  for (int i = 0; i < 65; ++i) shape += "1, ";
  EXPECT_NE(parse_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "), }", ""))
                .find("more than 64 dimensions"),
            std::string::npos);
}

TEST(NpyMalformed, RandomCorruptionsNeverCrash) {
  // Every mutated file either parses to a consistent tensor or is an IoError.
  std::mt19937 rng(12345);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string f = kGood;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) f[rng() % f.size()] = static_cast<char>(rng() & 0xff);
    try {
      const Tensor t = parse(f);
      EXPECT_LE(t.nbytes(), f.size());
      ++parsed;
    } catch (const IoError&) {
    }
  }
  EXPECT_GT(parsed, 0);  // padding and data bytes flip harmlessly
}

// ------------------------------------------------------------ files on disk

using NpyFiles = ScratchDir;

TEST_F(NpyFiles, MissingFileOrDirectoryIsAnIoErrorNamingThePath) {
  try {
    read_npy(dir_ / "absent.npy");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.npy"), std::string::npos);
  }
  EXPECT_THROW(read_npy(dir_), IoError);
}

TEST_F(NpyFiles, ReadRefusesTruncatedAndPaddedFiles) {
  const fs::path p = dir_ / "t.npy";
  for (std::size_t n : {std::size_t{5}, std::size_t{40}, kGood.size() - 3, kGood.size() + 2}) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << (n <= kGood.size() ? kGood.substr(0, n) : kGood + "xx");
    EXPECT_THROW(read_npy(p), IoError) << n;
  }
}

TEST_F(NpyFiles, WriteReplacesAnExistingFileWhole) {
  const fs::path p = dir_ / "w.npy";
  write_npy(p, Tensor::from<double>({100}, std::vector<double>(100, 1.0)));
  write_npy(p, Tensor::from<std::uint8_t>({2}, {7, 9}));
  const Tensor back = read_npy(p);
  EXPECT_EQ(back.shape(), (Shape{2}));
  EXPECT_EQ(back.values<std::uint8_t>()[1], 9);
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"w.npy"}));
}

TEST_F(NpyFiles, FailedWriteThrowsAndLeavesNothing) {
  // The rename onto an existing directory fails after the data was written:
  // the temporary file must be gone.
  fs::create_directory(dir_ / "taken.npy");
  try {
    write_npy(dir_ / "taken.npy", Tensor::from<float>({1}, {1}));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("taken.npy"), std::string::npos);
  }
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"taken.npy"}));
  EXPECT_TRUE(fs::is_empty(dir_ / "taken.npy"));

  EXPECT_THROW(write_npy(dir_ / "no" / "such" / "dir.npy", Tensor::from<float>({1}, {1})), IoError);
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"taken.npy"}));
}

TEST_F(NpyFiles, WriteFailingHalfWayKeepsTheOldFile) {
  // A file-size limit makes write() fail part-way (EFBIG), even for root.
  const fs::path p = dir_ / "keep.npy";
  write_npy(p, Tensor::from<std::int64_t>({2}, {5, 6}));
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_npy(p, Tensor(DType::Float64, {1000}));
  } catch (const IoError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("keep.npy"), std::string::npos) << message;
  EXPECT_NE(message.find(": write: "), std::string::npos) << message;
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"keep.npy"}));
  const Tensor back = read_npy(p);
  EXPECT_EQ(back.values<std::int64_t>()[1], 6);
}

TEST_F(NpyFiles, WriteIntoAReadOnlyDirectoryThrows) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const fs::path ro = dir_ / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(write_npy(ro / "x.npy", Tensor::from<float>({1}, {1})), IoError);
  fs::permissions(ro, fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(ro));
}

}  // namespace
}  // namespace nodeflow
