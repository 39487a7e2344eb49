#pragma once
// The datasets a training run started through the server may use, by the
// names `nodeflow train --data` takes (docs/server.md, "Training").
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "training/dataset.hpp"

namespace nodeflow::server {

/// A dataset split into the samples trained on and the held-out ones.
struct SplitDataset {
  training::Dataset train, test;
};

struct DatasetEntry {
  std::string name;         ///< as --data takes it ("mnist")
  std::string description;  ///< one line for the editor
  /// Why the dataset cannot be loaded now ("" when it can): missing files, say.
  std::function<std::string()> problem;
  /// Loads it (throws nodeflow::Error naming what is wrong).
  std::function<SplitDataset()> load;
};

using DatasetCatalog = std::vector<DatasetEntry>;

/// The datasets of `nodeflow train`: "mnist", the digits in `mnist_dir`
/// (training/mnist.hpp: 8,000 to train on, 2,000 held out).
DatasetCatalog default_datasets(const std::filesystem::path& mnist_dir);

/// The entry called `name`, or nullptr.
const DatasetEntry* find_dataset(const DatasetCatalog& catalog, const std::string& name);

}  // namespace nodeflow::server
