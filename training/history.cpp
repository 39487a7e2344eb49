#include "training/history.hpp"

#include <cstdio>

#include "serialization/atomic_file.hpp"

namespace nodeflow::training {

std::string metrics_csv(const std::vector<EpochMetrics>& history) {
  std::string text =
      "epoch,lr,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second\n";
  char line[256];
  for (const EpochMetrics& m : history) {
    std::snprintf(line, sizeof line, "%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                  static_cast<long long>(m.epoch), m.lr, m.train_loss, m.train_accuracy,
                  m.test_loss, m.test_accuracy, m.seconds, m.samples_per_second);
    text += line;
  }
  return text;
}

void write_metrics_csv(const std::filesystem::path& path,
                       const std::vector<EpochMetrics>& history) {
  write_file_atomically(path, metrics_csv(history));
}

}  // namespace nodeflow::training
