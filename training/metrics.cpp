#include "training/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace nodeflow::training {

std::vector<std::int64_t> predicted_classes(const Tensor& scores) {
  if (scores.rank() != 2)
    throw ShapeMismatch("predictions must be [N, classes], got " + to_string(scores.shape()));
  if (!is_float(scores.dtype()))
    throw UnsupportedDType("predictions must be float scores, got " +
                           std::string(dtype_name(scores.dtype())));
  const std::int64_t n = scores.shape()[0], c = scores.shape()[1];
  std::vector<std::int64_t> out(static_cast<std::size_t>(n), 0);
  visit_float_dtype(scores.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = scores.data<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < c; ++j)
        if (static_cast<double>(s[i * c + j]) > static_cast<double>(s[i * c + best])) best = j;
      out[static_cast<std::size_t>(i)] = best;
    }
  });
  return out;
}

ConfusionMatrix::ConfusionMatrix(std::int64_t num_classes)
    : classes_(num_classes), counts_(static_cast<std::size_t>(num_classes * num_classes), 0) {
  if (num_classes < 1) throw InvalidAttribute("a confusion matrix needs at least one class");
}

void ConfusionMatrix::add(std::int64_t label, std::int64_t predicted) {
  if (label < 0 || label >= classes_ || predicted < 0 || predicted >= classes_)
    throw InvalidAttribute("class " +
                           std::to_string(label < 0 || label >= classes_ ? label : predicted) +
                           " is outside [0, " + std::to_string(classes_) + ")");
  ++counts_[static_cast<std::size_t>(label * classes_ + predicted)];
  ++total_;
}

void ConfusionMatrix::add(const Tensor& scores, const std::vector<std::int64_t>& labels) {
  const std::vector<std::int64_t> predicted = predicted_classes(scores);
  if (scores.shape()[1] != classes_ || predicted.size() != labels.size())
    throw ShapeMismatch("predictions " + to_string(scores.shape()) + " for " +
                        std::to_string(labels.size()) + " labels of " + std::to_string(classes_) +
                        " classes");
  for (std::size_t i = 0; i < labels.size(); ++i) add(labels[i], predicted[i]);
}

std::int64_t ConfusionMatrix::count(std::int64_t label, std::int64_t predicted) const {
  return counts_.at(static_cast<std::size_t>(label * classes_ + predicted));
}

std::int64_t ConfusionMatrix::correct() const {
  std::int64_t c = 0;
  for (std::int64_t k = 0; k < classes_; ++k) c += count(k, k);
  return c;
}

double ConfusionMatrix::accuracy() const {
  return total_ == 0 ? 0.0 : static_cast<double>(correct()) / static_cast<double>(total_);
}

std::vector<double> ConfusionMatrix::per_class_accuracy() const {
  std::vector<double> out;
  for (std::int64_t k = 0; k < classes_; ++k) {
    std::int64_t row = 0;
    for (std::int64_t j = 0; j < classes_; ++j) row += count(k, j);
    out.push_back(row == 0 ? std::numeric_limits<double>::quiet_NaN()
                           : static_cast<double>(count(k, k)) / static_cast<double>(row));
  }
  return out;
}

std::string ConfusionMatrix::format() const {
  std::string text;
  char buf[64];
  std::snprintf(buf, sizeof buf, "accuracy %.2f%% (%lld of %lld)\n", 100.0 * accuracy(),
                static_cast<long long>(correct()), static_cast<long long>(total_));
  text += buf;
  text += "per-class accuracy:\n";
  const std::vector<double> per_class = per_class_accuracy();
  for (std::int64_t k = 0; k < classes_; ++k) {
    if (std::isnan(per_class[static_cast<std::size_t>(k)]))
      std::snprintf(buf, sizeof buf, "  class %lld: no samples\n", static_cast<long long>(k));
    else
      std::snprintf(buf, sizeof buf, "  class %lld: %.2f%%\n", static_cast<long long>(k),
                    100.0 * per_class[static_cast<std::size_t>(k)]);
    text += buf;
  }
  text += "confusion matrix (rows: true class, columns: predicted class):\n      ";
  for (std::int64_t j = 0; j < classes_; ++j) {
    std::snprintf(buf, sizeof buf, "%6lld", static_cast<long long>(j));
    text += buf;
  }
  text += "\n";
  for (std::int64_t k = 0; k < classes_; ++k) {
    std::snprintf(buf, sizeof buf, "%6lld", static_cast<long long>(k));
    text += buf;
    for (std::int64_t j = 0; j < classes_; ++j) {
      std::snprintf(buf, sizeof buf, "%6lld", static_cast<long long>(count(k, j)));
      text += buf;
    }
    text += "\n";
  }
  return text;
}

}  // namespace nodeflow::training
