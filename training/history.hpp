#pragma once
// What training measured per epoch, and its CSV form.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nodeflow::training {

struct EpochMetrics {
  std::int64_t epoch = 0;       ///< 1-based, as logged
  double lr = 0.0;              ///< learning rate of this epoch
  double train_loss = 0.0;      ///< mean training-mode loss over the epoch's samples
  double train_accuracy = 0.0;  ///< training-mode accuracy over the epoch (Dropout active)
  double test_loss = 0.0;       ///< held-out set, inference mode
  double test_accuracy = 0.0;
  double seconds = 0.0;  ///< wall time of the epoch's training steps
  double samples_per_second = 0.0;
};

/// "epoch,lr,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second"
/// then one line per epoch; numbers with 9 significant digits.
std::string metrics_csv(const std::vector<EpochMetrics>& history);

/// Writes metrics_csv atomically (IoError naming the path).
void write_metrics_csv(const std::filesystem::path& path, const std::vector<EpochMetrics>& history);

}  // namespace nodeflow::training
