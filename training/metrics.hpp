#pragma once
// Classification metrics: accuracy, per-class accuracy and the confusion matrix.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace nodeflow::training {

/// Index of the largest value in each row of a float [N, C] tensor (the first
/// one on ties; a NaN row predicts class 0 unless a later value is larger).
/// Throws ShapeMismatch for another rank, UnsupportedDType for integer dtypes.
std::vector<std::int64_t> predicted_classes(const Tensor& scores);

/// Counts over labelled predictions.
class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(std::int64_t num_classes);
  /// Adds one batch: `scores` [N, C] with C == num_classes, `labels` N class
  /// indices. Throws ShapeMismatch / InvalidAttribute for mismatches and labels
  /// outside [0, C).
  void add(const Tensor& scores, const std::vector<std::int64_t>& labels);
  void add(std::int64_t label, std::int64_t predicted);

  std::int64_t num_classes() const { return classes_; }
  /// Samples with true class `label` predicted as `predicted`.
  std::int64_t count(std::int64_t label, std::int64_t predicted) const;
  std::int64_t total() const { return total_; }
  std::int64_t correct() const;
  /// correct / total (0 for no samples).
  double accuracy() const;
  /// Per true class: correct / samples of that class (NaN for a class without samples).
  std::vector<double> per_class_accuracy() const;
  /// Human-readable table: overall accuracy, per-class accuracy and the matrix
  /// (rows: true class, columns: predicted class).
  std::string format() const;

 private:
  std::int64_t classes_;
  std::vector<std::int64_t> counts_;
  std::int64_t total_ = 0;
};

}  // namespace nodeflow::training
