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
  std::string name;         ///< as --data takes it ("mnist", "fashion-mnist", "npy:DIR")
  std::string description;  ///< one line for the editor
  /// Why the dataset cannot be loaded now ("" when it can): missing files, say.
  std::function<std::string()> problem;
  /// Loads it (throws nodeflow::Error naming what is wrong).
  std::function<SplitDataset()> load;
};

using DatasetCatalog = std::vector<DatasetEntry>;

/// The datasets named by `specs`, each as `nodeflow train --data` takes it
/// (training/datasets.hpp: mnist[:DIR], fashion-mnist[:DIR], npy:DIR); an
/// entry's name is "mnist" or "fashion-mnist" whatever its folder, and an npy
/// spec as given. Throws InvalidAttribute for a spec --data refuses.
DatasetCatalog default_datasets(const std::vector<std::string>& specs);

/// The entry called `name`, or nullptr.
const DatasetEntry* find_dataset(const DatasetCatalog& catalog, const std::string& name);

}  // namespace nodeflow::server
