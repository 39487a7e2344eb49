#include "training/dataset.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "core/random.hpp"

namespace nodeflow::training {

void validate(const Dataset& data) {
  if (data.samples.rank() == 0 ||
      data.samples.shape()[0] != static_cast<std::int64_t>(data.labels.size()))
    throw ShapeMismatch("dataset: " + std::to_string(data.labels.size()) +
                        " labels for samples of shape " + to_string(data.samples.shape()));
  for (std::size_t i = 0; i < data.labels.size(); ++i)
    if (data.labels[i] < 0 || data.labels[i] >= data.num_classes)
      throw InvalidAttribute("dataset: label " + std::to_string(data.labels[i]) + " of sample " +
                             std::to_string(i) + " is outside [0, " +
                             std::to_string(data.num_classes) + ")");
}

Batch gather(const Dataset& data, std::span<const std::size_t> indices) {
  Shape shape = data.samples.shape();
  const std::size_t row_bytes =
      shape[0] == 0 ? 0 : data.samples.nbytes() / static_cast<std::size_t>(shape[0]);
  shape[0] = static_cast<std::int64_t>(indices.size());
  Batch batch{Tensor(data.samples.dtype(), shape),
              Tensor(DType::Int64, {static_cast<std::int64_t>(indices.size())})};
  std::int64_t* labels = batch.labels.data<std::int64_t>();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::size_t k = indices[i];
    if (k >= data.size())
      throw ShapeMismatch("dataset: sample index " + std::to_string(k) + " outside a dataset of " +
                          std::to_string(data.size()));
    std::memcpy(batch.samples.raw() + i * row_bytes, data.samples.raw() + k * row_bytes, row_bytes);
    labels[i] = data.labels[k];
  }
  return batch;
}

Batch slice(const Dataset& data, std::size_t begin, std::size_t end) {
  std::vector<std::size_t> indices(end > begin ? end - begin : 0);
  std::iota(indices.begin(), indices.end(), begin);
  return gather(data, indices);
}

Dataset subset(const Dataset& data, std::span<const std::size_t> indices) {
  Batch b = gather(data, indices);
  auto labels = b.labels.values<std::int64_t>();
  return {b.samples, {labels.begin(), labels.end()}, data.num_classes};
}

Dataset concatenate(const Dataset& first, const Dataset& second) {
  const Shape& a = first.samples.shape();
  const Shape& b = second.samples.shape();
  if (first.samples.dtype() != second.samples.dtype() || a.empty() || b.empty() ||
      !std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end()))
    throw ShapeMismatch("dataset: cannot concatenate samples " +
                        std::string(dtype_name(first.samples.dtype())) + " " + to_string(a) +
                        " and " + std::string(dtype_name(second.samples.dtype())) + " " +
                        to_string(b));
  Shape shape = a;
  shape[0] = a[0] + b[0];
  Dataset out{Tensor::uninitialized(first.samples.dtype(), shape), first.labels,
              std::max(first.num_classes, second.num_classes)};
  if (first.samples.nbytes()) std::memcpy(out.samples.raw(), first.samples.raw(), first.samples.nbytes());
  if (second.samples.nbytes())
    std::memcpy(out.samples.raw() + first.samples.nbytes(), second.samples.raw(),
                second.samples.nbytes());
  out.labels.insert(out.labels.end(), second.labels.begin(), second.labels.end());
  return out;
}

Split split(const Dataset& data, std::size_t first_count, std::uint64_t seed) {
  if (first_count > data.size())
    throw ShapeMismatch("dataset: cannot take " + std::to_string(first_count) + " samples out of " +
                        std::to_string(data.size()));
  Rng rng(seed);
  const std::vector<std::size_t> order = shuffled_indices(data.size(), rng);
  const std::span<const std::size_t> all(order);
  return {subset(data, all.first(first_count)), subset(data, all.subspan(first_count))};
}

}  // namespace nodeflow::training
