#pragma once
// Labelled samples in memory, and the mini-batches cut from them.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.hpp"

namespace nodeflow::training {

/// N samples: `samples` is [N, ...] (any float dtype), `labels` holds N class
/// indices in [0, num_classes).
struct Dataset {
  Tensor samples;
  std::vector<std::int64_t> labels;
  std::int64_t num_classes = 0;

  std::size_t size() const { return labels.size(); }
};

/// One mini-batch: samples [B, ...] and labels as an int64 tensor [B].
struct Batch {
  Tensor samples;
  Tensor labels;
};

/// Throws ShapeMismatch when the sample count and label count differ, and
/// InvalidAttribute when a label is outside [0, num_classes).
void validate(const Dataset& data);

/// The samples and labels at `indices` (in that order), copied into a new batch.
/// Throws ShapeMismatch for an index outside the dataset.
Batch gather(const Dataset& data, std::span<const std::size_t> indices);

/// Samples [begin, end) in order.
Batch slice(const Dataset& data, std::size_t begin, std::size_t end);

/// The samples at `indices` as a dataset of their own.
Dataset subset(const Dataset& data, std::span<const std::size_t> indices);

/// `first`'s samples followed by `second`'s, with the larger num_classes.
/// Throws ShapeMismatch when their samples differ in dtype or in shape after N.
Dataset concatenate(const Dataset& first, const Dataset& second);

/// A reproducible split: the samples in the order of shuffled_indices(N,
/// Rng(seed)); the first `first_count` make `first`, the rest `second`.
/// Throws ShapeMismatch when first_count > N.
struct Split {
  Dataset first, second;
};
Split split(const Dataset& data, std::size_t first_count, std::uint64_t seed);

}  // namespace nodeflow::training
