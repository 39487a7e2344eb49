#pragma once
// What the command-line training tests share: a small MNIST classifier
// document, stand-ins for the MNIST files that need no download, and the
// IDX and gzip bytes the dataset readers' tests are made of.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nodeflow::testing {

/// Flatten -> Gemm(784 -> 10) -> mean SoftmaxCrossEntropyLoss over inputs
/// `image` [N, 1, 28, 28] and `label` [N], outputs `logits` and `loss`; W is
/// zeros and trainable, B is trainable and takes `bias_source`, the JSON of
/// its value (e.g. R"("init": {"rule": "zeros"})").
std::string linear_classifier_json(const std::string& bias_source);

/// The training and test samples write_blank_digits writes.
inline constexpr std::int64_t kBlankTrainCount = 200;
inline constexpr std::int64_t kBlankTestCount = 100;

/// Writes the four IDX files `--data mnist:DIR` reads into `dir` (created):
/// kBlankTrainCount training and kBlankTestCount test images of 28x28 zeros,
/// the label of image i being i % 10.
void write_blank_digits(const std::filesystem::path& dir);

/// An IDX file: the magic 00 00 `type` rank, the big-endian dimensions, then
/// `data` as given (already big-endian for multi-byte types).
std::string idx_bytes(std::uint8_t type, const std::vector<std::uint32_t>& dims,
                      const std::string& data);

/// `bytes` compressed as one gzip member (zlib's deflate, gzip wrapper).
std::string gzip_bytes(const std::string& bytes);

/// Writes `bytes` to `path`.
void write_bytes(const std::filesystem::path& path, const std::string& bytes);

}  // namespace nodeflow::testing
