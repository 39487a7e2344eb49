#include "support/mnist_fixtures.hpp"

#include <zlib.h>

#include <fstream>
#include <stdexcept>

namespace nodeflow::testing {

std::string linear_classifier_json(const std::string& bias_source) {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "linear",
  "inputs": [{"name": "image", "dtype": "float32", "shape": [null, 1, 28, 28]},
             {"name": "label", "dtype": "int64", "shape": [null]}],
  "outputs": ["logits", "loss"],
  "initializers": [
    {"name": "W", "dtype": "float32", "shape": [10, 784], "init": {"rule": "zeros"}, "trainable": true},
    {"name": "B", "dtype": "float32", "shape": [10], "trainable": true, )" +
         bias_source + R"(}],
  "nodes": [
    {"op_type": "Flatten", "name": "flatten", "inputs": ["image"], "attributes": {"axis": 1}},
    {"op_type": "Gemm", "name": "fc", "inputs": ["flatten", "W", "B"],
     "specified_outputs_name": ["logits"], "attributes": {"transB": 1}},
    {"op_type": "SoftmaxCrossEntropyLoss", "name": "xent", "inputs": ["logits", "label"],
     "specified_outputs_name": ["loss"]}]})";
}

std::string idx_bytes(std::uint8_t type, const std::vector<std::uint32_t>& dims,
                      const std::string& data) {
  std::string out{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((d >> shift) & 0xff);
  return out + data;
}

std::string gzip_bytes(const std::string& bytes) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int code = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (code != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void write_blank_digits(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto write_split = [&](const std::string& prefix, std::int64_t count) {
    std::string labels;
    for (std::int64_t i = 0; i < count; ++i) labels += static_cast<char>(i % 10);
    const auto n = static_cast<std::uint32_t>(count);
    write_bytes(dir / (prefix + "-images-idx3-ubyte"),
                idx_bytes(0x08, {n, 28, 28}, std::string(static_cast<std::size_t>(count) * 784, '\0')));
    write_bytes(dir / (prefix + "-labels-idx1-ubyte"), idx_bytes(0x08, {n}, labels));
  };
  write_split("train", kBlankTrainCount);
  write_split("t10k", kBlankTestCount);
}

}  // namespace nodeflow::testing
