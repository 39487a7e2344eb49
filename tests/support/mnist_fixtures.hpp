#pragma once
// What the command-line training tests share: a small MNIST classifier
// document and a stand-in for the MNIST package that needs no download.
#include <filesystem>
#include <string>

namespace nodeflow::testing {

/// Flatten -> Gemm(784 -> 10) -> mean SoftmaxCrossEntropyLoss over inputs
/// `image` [N, 1, 28, 28] and `label` [N], outputs `logits` and `loss`; W is
/// zeros and trainable, B is trainable and takes `bias_source`, the JSON of
/// its value (e.g. R"("init": {"rule": "zeros"})").
std::string linear_classifier_json(const std::string& bias_source);

/// Writes the 10,000 digits the MNIST loader wants into `dir` (created):
/// 1,000 blank ones per class, as <class>.json.
void write_blank_digits(const std::filesystem::path& dir);

}  // namespace nodeflow::testing
