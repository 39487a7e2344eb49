#include "server/datasets.hpp"

#include "training/mnist.hpp"

namespace nodeflow::server {

DatasetCatalog default_datasets(const std::filesystem::path& mnist_dir) {
  DatasetEntry mnist;
  mnist.name = "mnist";
  mnist.description = "MNIST digits, 1x28x28 float32 in [0, 1], 10 classes: " +
                      std::to_string(training::kMnistTrainCount) + " to train on, " +
                      std::to_string(training::kMnistTotal - training::kMnistTrainCount) +
                      " held out";
  mnist.problem = [mnist_dir]() -> std::string {
    const std::vector<std::string> missing = training::missing_mnist_files(mnist_dir);
    if (missing.empty()) return "";
    return "the MNIST digits are not in " + mnist_dir.string() + " (missing " +
           std::to_string(missing.size()) +
           " of 0.json ... 9.json; scripts/fetch_mnist.sh fetches them, --mnist-dir points "
           "`nodeflow serve` at them)";
  };
  mnist.load = [mnist_dir] {
    training::MnistData data = training::load_mnist(mnist_dir);
    return SplitDataset{std::move(data.train), std::move(data.test)};
  };
  return {std::move(mnist)};
}

const DatasetEntry* find_dataset(const DatasetCatalog& catalog, const std::string& name) {
  for (const DatasetEntry& entry : catalog)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace nodeflow::server
