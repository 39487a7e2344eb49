// The datasets of `--data` (training/datasets.hpp): the forms of the value,
// MNIST-style IDX folders (plain or .gz) and npy folders of known content,
// the checks across files (counts, dtypes, ranks, labels), missing files, the
// validation split, and the real MNIST and Fashion-MNIST when present (the
// MNIST of scripts/fetch_mnist.sh, Debian's dataset-fashion-mnist; skipped
// otherwise: tests need no network).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "serialization/npy.hpp"
#include "support/error_of.hpp"
#include "support/graph_parts.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/temp_dir.hpp"
#include "training/datasets.hpp"

namespace nodeflow::training {
namespace {

namespace fs = std::filesystem;

using testing::error_of;
using testing::gzip_bytes;
using testing::idx_bytes;
using testing::values_of;
using testing::write_bytes;

class Datasets : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::temp_dir("datasets"); }
  void TearDown() override { fs::remove_all(dir_); }

  // An IDX folder: `n_train` and `n_test` 2x3 images, pixel p of image i
  // being (i * 6 + p) % 256, label i % 10; gzip-compressed when `gz`.
  void write_idx_folder(std::uint32_t n_train, std::uint32_t n_test, bool gz) {
    const auto put = [&](const std::string& name, const std::string& bytes) {
      write_bytes(dir_ / (gz ? name + ".gz" : name), gz ? gzip_bytes(bytes) : bytes);
    };
    for (const auto& [prefix, n] : {std::pair{"train", n_train}, std::pair{"t10k", n_test}}) {
      std::string pixels, labels;
      for (std::uint32_t i = 0; i < n; ++i) {
        for (std::uint32_t p = 0; p < 6; ++p) pixels += static_cast<char>((i * 6 + p) % 256);
        labels += static_cast<char>(i % 10);
      }
      put(std::string(prefix) + "-images-idx3-ubyte", idx_bytes(0x08, {n, 2, 3}, pixels));
      put(std::string(prefix) + "-labels-idx1-ubyte", idx_bytes(0x08, {n}, labels));
    }
  }
  DatasetSource mnist() const { return parse_dataset_source("mnist:" + dir_.string()); }
  std::string idx_error() const { return error_of<IoError>([&] { load_dataset(mnist()); }); }

  fs::path dir_;
};

TEST(DatasetSources, ParsesTheForms) {
  const DatasetSource m = parse_dataset_source("mnist:some/dir");
  EXPECT_EQ(m.kind, DatasetKind::Mnist);
  EXPECT_EQ(m.name, "mnist");
  EXPECT_EQ(m.dir, "some/dir");
  EXPECT_EQ(m.origin, "--data");
  const DatasetSource f = parse_dataset_source("fashion-mnist");
  EXPECT_EQ(f.kind, DatasetKind::FashionMnist);
  EXPECT_EQ(f.dir, kFashionMnistDir);
  // The folder is everything after the first colon, colons included.
  const DatasetSource n = parse_dataset_source("npy:a:b");
  EXPECT_EQ(n.kind, DatasetKind::Npy);
  EXPECT_EQ(n.dir, "a:b");
  ASSERT_EQ(n.files().size(), 4u);
  EXPECT_EQ(n.files()[0].path, fs::path("a:b/train_samples.npy"));
  EXPECT_EQ(n.files()[3].path, fs::path("a:b/test_labels.npy"));
  EXPECT_EQ(m.files()[2].path, fs::path("some/dir/t10k-images-idx3-ubyte"));
  EXPECT_EQ(m.files()[2].candidates.back(), fs::path("some/dir/t10k-images-idx3-ubyte.gz"));
}

TEST(DatasetSources, MnistWithoutAFolderReadsTheEnvironmentThenTheCache) {
  const char* saved = std::getenv(kMnistDirVariable);
  const std::string kept = saved ? saved : "";
  ::setenv(kMnistDirVariable, "/from/env", 1);
  EXPECT_EQ(parse_dataset_source("mnist").dir, "/from/env");
  EXPECT_EQ(parse_dataset_source("mnist").origin, "$NODEFLOW_MNIST_DIR");
  ::setenv(kMnistDirVariable, "", 1);
  EXPECT_EQ(parse_dataset_source("mnist").dir, kMnistFetchedDir);
  if (saved) ::setenv(kMnistDirVariable, kept.c_str(), 1); else ::unsetenv(kMnistDirVariable);
}

TEST(DatasetSources, RefusesOtherValues) {
  const std::string forms =
      " (expected mnist, mnist:DIR, fashion-mnist, fashion-mnist:DIR or npy:DIR)";
  EXPECT_EQ(error_of<InvalidAttribute>([] { parse_dataset_source("cifar"); }),
            "--data: unknown dataset 'cifar'" + forms);
  EXPECT_EQ(error_of<InvalidAttribute>([] { parse_dataset_source("npy"); }),
            "--data npy needs a folder: npy:DIR" + forms);
  EXPECT_EQ(error_of<InvalidAttribute>([] { parse_dataset_source("mnist:"); }),
            "--data 'mnist:': the folder after ':' is empty" + forms);
}

TEST_F(Datasets, ReadsAnIdxFolderScaledToFloat32WithAChannelAxis) {
  write_idx_folder(12, 5, false);
  const TrainTestData d = load_dataset(mnist());
  EXPECT_EQ(d.train.samples.dtype(), DType::Float32);
  EXPECT_EQ(d.train.samples.shape(), (Shape{12, 1, 2, 3}));
  EXPECT_EQ(d.test.samples.shape(), (Shape{5, 1, 2, 3}));
  EXPECT_EQ(d.train.num_classes, 10);
  EXPECT_EQ(d.test.num_classes, 10);
  EXPECT_EQ(d.train.labels[11], 1);
  // Pixel 4 of training image 7 is 46 / 255.
  EXPECT_EQ(d.train.samples.data<float>()[7 * 6 + 4], 46.0f / 255.0f);
  EXPECT_EQ(d.test.samples.data<float>()[0], 0.0f);
}

TEST_F(Datasets, ReadsGzipFilesWhereThePlainOnesAreMissing) {
  write_idx_folder(12, 5, true);
  const TrainTestData gz = load_dataset(mnist());
  EXPECT_EQ(gz.train.samples.shape(), (Shape{12, 1, 2, 3}));
  EXPECT_EQ(mnist().files()[0].path, dir_ / "train-images-idx3-ubyte.gz");
  EXPECT_EQ(gz.train.samples.data<float>()[7 * 6 + 4], 46.0f / 255.0f);
  // Fashion-MNIST's folder has the same layout.
  EXPECT_EQ(load_dataset(parse_dataset_source("fashion-mnist:" + dir_.string())).test.labels,
            gz.test.labels);
}

TEST_F(Datasets, NamesEveryMissingFileAndHowToGetThem) {
  write_idx_folder(12, 5, false);
  fs::remove(dir_ / "t10k-labels-idx1-ubyte");
  fs::remove(dir_ / "train-images-idx3-ubyte");
  EXPECT_EQ(idx_error(),
            "mnist dataset: train-images-idx3-ubyte (or .gz) and t10k-labels-idx1-ubyte (or .gz) "
            "are missing from " + dir_.string() + " (--data). scripts/fetch_mnist.sh, run in the "
            "nodeflow source tree, fetches them into its .cache/mnist; --data mnist:DIR or "
            "NODEFLOW_MNIST_DIR=DIR point at a folder that holds them");
  const std::string none = (dir_ / "none").string();
  EXPECT_NE(error_of<IoError>([&] { load_dataset(parse_dataset_source("fashion-mnist:" + none)); })
                .find("fashion-mnist dataset: the folder " + none + " (--data) does not exist. "
                      "Debian's package dataset-fashion-mnist installs them in "
                      "/usr/share/datasets/fashion-mnist"),
            std::string::npos);
  EXPECT_NE(error_of<IoError>([&] { load_dataset(parse_dataset_source("npy:" + dir_.string())); })
                .find("train_samples.npy, train_labels.npy, test_samples.npy and test_labels.npy "
                      "are missing from"),
            std::string::npos);
}

TEST_F(Datasets, ChecksTheFilesAgainstEachOther) {
  write_idx_folder(12, 5, false);
  const std::string labels = (dir_ / "train-labels-idx1-ubyte").string();
  write_bytes(labels, idx_bytes(0x08, {11}, std::string(11, '\1')));
  EXPECT_EQ(idx_error(), labels + " (training labels): 11 labels for the 12 samples of " +
                             (dir_ / "train-images-idx3-ubyte").string());
  write_bytes(labels, idx_bytes(0x08, {12}, std::string(11, '\1') + "\x0a"));
  EXPECT_EQ(idx_error(), labels + " (training labels): label 11 is 10, outside [0, 10)");
  write_bytes(labels, idx_bytes(0x0C, {12}, std::string(48, '\0')));
  EXPECT_EQ(idx_error(), labels + " (training labels): labels must be uint8 [N], not int64 [12]");
  write_bytes(labels, idx_bytes(0x08, {12, 1}, std::string(12, '\0')));
  EXPECT_EQ(idx_error(), labels + " (training labels): labels must be of rank 1 ([N]), not uint8 [12, 1]");
  write_bytes(labels, idx_bytes(0x08, {12}, std::string(12, '\1')));
  const std::string images = (dir_ / "t10k-images-idx3-ubyte").string();
  write_bytes(images, idx_bytes(0x08, {5, 6}, std::string(30, '\0')));
  EXPECT_EQ(idx_error(), images + " (test samples): images must be uint8 [N, height, width], not "
                                  "uint8 [5, 6]");
  // A malformed file: read_idx's message, naming it.
  write_bytes(images, idx_bytes(0x08, {5, 2, 3}, std::string(29, '\0')));
  EXPECT_EQ(idx_error(), images + ": IDX data is truncated: dimensions [5, 2, 3] need 30 bytes, "
                                  "the file holds 29");
}

TEST_F(Datasets, ReadsAnNpyFolder) {
  Tensor train = Tensor::from<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  write_npy(dir_ / "train_samples.npy", train);
  write_npy(dir_ / "train_labels.npy", Tensor::from<std::int64_t>({3}, {0, 4, 2}));
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({1, 2}, {6, 7}));
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int64_t>({1}, {1}));
  const DatasetSource npy = parse_dataset_source("npy:" + dir_.string());
  TrainTestData d = load_dataset(npy);
  EXPECT_EQ(values_of<float>(d.train.samples), values_of<float>(train));
  EXPECT_EQ(d.train.labels, (std::vector<std::int64_t>{0, 4, 2}));
  EXPECT_EQ(d.test.samples.shape(), (Shape{1, 2}));
  EXPECT_EQ(d.train.num_classes, 5);  // 1 + the largest label of either split
  EXPECT_EQ(d.test.num_classes, 5);

  // uint8 samples are scaled as IDX pixels; uint8 labels are read as int64.
  write_npy(dir_ / "train_samples.npy", Tensor::from<std::uint8_t>({3, 1}, {0, 51, 255}));
  write_npy(dir_ / "test_samples.npy", Tensor::from<std::uint8_t>({1, 1}, {102}));
  write_npy(dir_ / "train_labels.npy", Tensor::from<std::uint8_t>({3}, {0, 1, 0}));
  d = load_dataset(npy);
  EXPECT_EQ(values_of<float>(d.train.samples), (std::vector<float>{0.0f, 0.2f, 1.0f}));
  EXPECT_EQ(d.train.num_classes, 2);

  const auto error = [&] { return error_of<IoError>([&] { load_dataset(npy); }); };
  const std::string test_samples = (dir_ / "test_samples.npy").string();
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({1, 2}, {0.5f, 1}));
  EXPECT_EQ(error(), test_samples + " (test samples): samples float32 [1, 2] do not match the "
                                    "training samples float32 [3, 1] of " +
                         (dir_ / "train_samples.npy").string() +
                         " (the same dtype and shape after N)");
  write_npy(dir_ / "test_samples.npy", Tensor::from<double>({1, 1}, {0.5}));
  EXPECT_NE(error().find("samples float64 [1, 1] do not match the training samples float32 [3, 1]"),
            std::string::npos);
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({2}, {0.5f, 1}));
  EXPECT_EQ(error(), test_samples + " (test samples): samples must be of rank 2 or more "
                                    "([N, ...]), not float32 [2]");
  write_npy(dir_ / "test_samples.npy", Tensor::from<std::int64_t>({1, 1}, {3}));
  EXPECT_EQ(error(), test_samples + " (test samples): samples must be float32, float64, float16 "
                                    "or uint8, not int64 [1, 1]");
  write_npy(dir_ / "test_samples.npy", Tensor::from<std::uint8_t>({1, 1}, {3}));
  const std::string test_labels = (dir_ / "test_labels.npy").string();
  write_npy(dir_ / "test_labels.npy", Tensor::from<float>({1}, {1}));
  EXPECT_EQ(error(), test_labels + " (test labels): labels must be int64, uint8 or int8, not "
                                   "float32 [1]");
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int8_t>({1}, {-1}));
  EXPECT_EQ(error(), test_labels + " (test labels): label 0 is -1, outside [0, inf)");
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int64_t>({2}, {0, 1}));
  EXPECT_EQ(error(), test_labels + " (test labels): 2 labels for the 1 samples of " + test_samples);
  write_bytes(dir_ / "test_labels.npy", "not npy");
  EXPECT_NE(error().find(test_labels), std::string::npos);
}

// Found by trying to break issue 22's datasets: a NaN sample failed training
// many steps later as "the loss is NaN (diverged; lower the learning rate)",
// an empty test split reported "accuracy 0.00%" and a reload check of
// nothing, and a folder or FIFO in place of a file was called "missing".
TEST_F(Datasets, RefusesNonFiniteSamplesEmptySplitsAndFilesThatAreNotRegular) {
  write_npy(dir_ / "train_samples.npy", Tensor::from<float>({3, 2}, {0, 1, 2, 3, 4, 5}));
  write_npy(dir_ / "train_labels.npy", Tensor::from<std::int64_t>({3}, {0, 1, 0}));
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({1, 2}, {6, 7}));
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int64_t>({1}, {1}));
  const DatasetSource npy = parse_dataset_source("npy:" + dir_.string());
  const auto error = [&] { return error_of<IoError>([&] { load_dataset(npy); }); };
  const std::string train_samples = (dir_ / "train_samples.npy").string();
  write_npy(dir_ / "train_samples.npy", Tensor::from<float>({3, 2}, {0, 1, 2, NAN, 4, 5}));
  EXPECT_EQ(error(), train_samples + " (training samples): sample 1 holds NaN (its element 1); "
                                     "samples must be finite");
  write_npy(dir_ / "train_samples.npy", Tensor::from<double>({3, 2}, {0, 1, 2, 3, -INFINITY, 5}));
  EXPECT_EQ(error(), train_samples + " (training samples): sample 2 holds -inf (its element 0); "
                                     "samples must be finite");
  write_npy(dir_ / "train_samples.npy", Tensor::from<float>({3, 2}, {0, 1, 2, 3, 4, 5}));

  const std::string test_samples = (dir_ / "test_samples.npy").string();
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({0, 2}, {}));
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int64_t>({0}, {}));
  EXPECT_EQ(error(), test_samples + " (test samples): holds no samples (float32 [0, 2]); every "
                                    "split needs at least one sample");
  write_npy(dir_ / "test_samples.npy", Tensor::from<float>({1, 2}, {6, 7}));
  write_npy(dir_ / "test_labels.npy", Tensor::from<std::int64_t>({1}, {1}));
  EXPECT_NO_THROW(load_dataset(npy));

  fs::remove(dir_ / "train_labels.npy");
  fs::create_directory(dir_ / "train_labels.npy");
  fs::remove(dir_ / "test_labels.npy");
  EXPECT_NE(error().find("npy dataset: test_labels.npy is missing from " + dir_.string() +
                         " (--data); train_labels.npy is not a regular file (a folder, FIFO or "
                         "device) in " + dir_.string() + " (--data). "),
            std::string::npos)
      << error();

  // IDX: an empty split, plain or gzip.
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  write_idx_folder(4, 0, true);
  EXPECT_EQ(idx_error(), (dir_ / "t10k-images-idx3-ubyte.gz").string() +
                             " (test samples): holds no samples (uint8 [0, 2, 3]); every split "
                             "needs at least one sample");
}

TEST(ValidationSplit, HoldsOutAFixedShuffledPart) {
  Dataset data{Tensor(DType::Float32, {10, 1}), {}, 10};
  for (int i = 0; i < 10; ++i) {
    data.samples.data<float>()[i] = static_cast<float>(i);
    data.labels.push_back(i);
  }
  const Split a = split_validation(data, 3);
  const Split b = split_validation(data, 3);
  ASSERT_EQ(a.first.size(), 7u);
  ASSERT_EQ(a.second.size(), 3u);
  EXPECT_EQ(a.second.labels, b.second.labels);
  // Every sample is in exactly one part, with its own label.
  std::vector<std::int64_t> all = a.first.labels;
  all.insert(all.end(), a.second.labels.begin(), a.second.labels.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(a.second.samples.data<float>()[i], static_cast<float>(a.second.labels[i]));
  EXPECT_EQ(error_of<InvalidAttribute>([&] { split_validation(data, 10); }),
            "validation: 10 samples cannot be held out of a training set of 10 (1 to 9)");
  EXPECT_THROW(split_validation(data, 0), InvalidAttribute);
}

// The first ten labels of a split.
std::vector<std::int64_t> first_labels(const Dataset& split) {
  return {split.labels.begin(), split.labels.begin() + 10};
}

// The sum of the bytes the samples were read from (each sample is byte / 255).
double byte_sum(const Tensor& samples) {
  double bytes = 0;
  for (float x : values_of<float>(samples)) bytes += std::round(x * 255.0f);
  return bytes;
}

// Expected numbers from the files themselves, read with numpy.
TEST(RealDatasets, Mnist) {
  const char* env = std::getenv(kMnistDirVariable);
  const fs::path dir = env != nullptr && *env != '\0'
                           ? fs::path(env)
                           : fs::path(NODEFLOW_EXAMPLES_DIR) / ".." / kMnistFetchedDir;
  if (!fs::exists(dir / "t10k-labels-idx1-ubyte"))
    GTEST_SKIP() << "MNIST not fetched (scripts/fetch_mnist.sh)";
  const TrainTestData d = load_dataset(parse_dataset_source("mnist:" + dir.string()));
  ASSERT_EQ(d.train.samples.shape(), (Shape{60000, 1, 28, 28}));
  ASSERT_EQ(d.test.samples.shape(), (Shape{10000, 1, 28, 28}));
  std::vector<std::size_t> train_counts(10), test_counts(10);
  for (std::int64_t l : d.train.labels) ++train_counts[static_cast<std::size_t>(l)];
  for (std::int64_t l : d.test.labels) ++test_counts[static_cast<std::size_t>(l)];
  EXPECT_EQ(train_counts, (std::vector<std::size_t>{5923, 6742, 5958, 6131, 5842, 5421, 5918,
                                                    6265, 5851, 5949}));
  EXPECT_EQ(test_counts,
            (std::vector<std::size_t>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}));
  EXPECT_EQ(first_labels(d.test), (std::vector<std::int64_t>{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}));
  EXPECT_EQ(byte_sum(d.test.samples), 264923200.0);
}

TEST(RealDatasets, FashionMnist) {
  if (!fs::exists(fs::path(kFashionMnistDir) / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  const TrainTestData d = load_dataset(parse_dataset_source("fashion-mnist"));
  ASSERT_EQ(d.train.samples.shape(), (Shape{60000, 1, 28, 28}));
  ASSERT_EQ(d.test.samples.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(first_labels(d.train), (std::vector<std::int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  EXPECT_EQ(first_labels(d.test), (std::vector<std::int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  EXPECT_EQ(byte_sum(d.test.samples), 573469082.0);
}

}  // namespace
}  // namespace nodeflow::training
