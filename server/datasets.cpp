#include "server/datasets.hpp"

#include <system_error>

#include "training/datasets.hpp"

namespace nodeflow::server {

DatasetCatalog default_datasets(const std::vector<std::string>& specs) {
  DatasetCatalog catalog;
  for (const std::string& spec : specs) {
    const training::DatasetSource source = training::parse_dataset_source(spec);
    DatasetEntry entry;
    // The name a client sends: "mnist" and "fashion-mnist" whatever their
    // folder (one of each is served), a folder of .npy files as given.
    entry.name = source.kind == training::DatasetKind::Npy ? spec : source.name;
    entry.description = source.name + " in " + source.dir.string() + " (" + source.origin + ")";
    entry.problem = [source]() -> std::string {
      std::string missing;
      for (const training::DatasetFile& file : source.files()) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(file.path, ec)) continue;
        missing += (missing.empty() ? "" : ", ") + file.path.filename().string();
      }
      if (missing.empty()) return "";
      return "the " + source.name + " files are not in " + source.dir.string() + " (missing " +
             missing + "; docs/training-config.md, \"Datasets\", says how to get them, and " +
             "`nodeflow serve --data` points the server at them)";
    };
    entry.load = [source] {
      training::TrainTestData data = training::load_dataset(source);
      return SplitDataset{std::move(data.train), std::move(data.test)};
    };
    catalog.push_back(std::move(entry));
  }
  return catalog;
}

const DatasetEntry* find_dataset(const DatasetCatalog& catalog, const std::string& name) {
  for (const DatasetEntry& entry : catalog)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace nodeflow::server
