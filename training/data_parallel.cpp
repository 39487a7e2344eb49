#include "training/data_parallel.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace nodeflow::training {
namespace {

std::uint64_t fnv1a_value(std::uint64_t value, std::uint64_t hash) {
  std::byte bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  return fnv1a(bytes, hash);
}

std::uint64_t fnv1a_double(double value, std::uint64_t hash) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return fnv1a_value(bits, hash);
}

std::uint64_t fnv1a_text(const std::string& text, std::uint64_t hash) {
  hash = fnv1a_value(text.size(), hash);  // "ab"+"c" and "a"+"bc" differ
  return fnv1a(std::as_bytes(std::span(text.data(), text.size())), hash);
}

std::uint64_t fnv1a_tensor(const Tensor& t, std::uint64_t hash) {
  hash = fnv1a_value(static_cast<std::uint64_t>(t.dtype()), hash);
  hash = fnv1a_value(t.shape().size(), hash);
  for (const std::int64_t d : t.shape()) hash = fnv1a_value(static_cast<std::uint64_t>(d), hash);
  return fnv1a(std::span(t.raw(), t.nbytes()), hash);
}

// "batch_size 64" with the shards it would give, for messages.
std::string batch_text(std::size_t samples, int ranks) {
  const Shard small = shard_of(samples, ranks - 1, ranks);
  return std::to_string(samples) + " sample(s), which cannot be cut into " + std::to_string(ranks) +
         " non-empty shards (the last rank's would hold " + std::to_string(small.count) + ")";
}

}  // namespace

Shard shard_of(std::size_t batch_size, int rank, int size) {
  const auto n = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
  const std::size_t base = batch_size / n, extra = batch_size % n;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

void check_shardable(std::size_t samples, std::int64_t batch_size, int ranks) {
  if (ranks <= 1 || samples == 0 || batch_size < 1) return;
  const auto batch = static_cast<std::size_t>(batch_size);
  const auto n = static_cast<std::size_t>(ranks);
  const std::size_t first = std::min(batch, samples), last = samples % batch;
  if (first < n)
    throw InvalidAttribute("data-parallel training on " + std::to_string(ranks) +
                           " ranks: a batch of " + batch_text(first, ranks) +
                           "; every rank needs a sample of every batch: give batch_size >= " +
                           std::to_string(ranks) + " (the training set has " +
                           std::to_string(samples) + " samples)");
  if (last != 0 && last < n)
    throw InvalidAttribute("data-parallel training on " + std::to_string(ranks) +
                           " ranks: the last batch of each epoch (" + std::to_string(samples) +
                           " samples in batches of " + std::to_string(batch) + ") has " +
                           batch_text(last, ranks) +
                           "; every rank needs a sample of every batch: choose a batch_size "
                           "that divides the training set or leaves at least " +
                           std::to_string(ranks) + " samples over");
}

void sum_gradients(ProcessGroup& group, TensorMap& grads, const std::set<std::string>& names,
                   double weight) {
  for (const DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    std::vector<const std::string*> members;
    std::size_t count = 0;
    for (const std::string& name : names) {
      const Tensor& g = grads.at(name);
      if (g.dtype() != dtype) continue;
      members.push_back(&name);
      count += static_cast<std::size_t>(g.numel());
    }
    if (members.empty()) continue;
    visit_float_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> buffer(count);
      const T w = static_cast<T>(weight);
      std::size_t at = 0;
      for (const std::string* name : members)
        for (const T x : std::as_const(grads.at(*name)).values<T>()) buffer[at++] = x * w;
      group.sum(dtype, reinterpret_cast<std::byte*>(buffer.data()), count);
      at = 0;
      for (const std::string* name : members) {
        const Tensor& old = grads.at(*name);
        Tensor summed(dtype, old.shape());
        for (T& x : summed.values<T>()) x = buffer[at++];
        grads[*name] = summed;
      }
    });
  }
}

void average_updates(ProcessGroup& group, TensorMap& updates, double weight) {
  std::size_t count = 0;
  for (const auto& [name, value] : updates)
    if (is_float(value.dtype())) count += static_cast<std::size_t>(value.numel());
  if (count == 0) return;
  std::vector<double> buffer(count);
  std::size_t at = 0;
  for (const auto& entry : updates) {
    const Tensor& value = entry.second;  // a lambda may not capture a structured binding (clang 14)
    if (!is_float(value.dtype())) continue;
    visit_float_dtype(value.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (const T x : value.values<T>()) buffer[at++] = static_cast<double>(x) * weight;
    });
  }
  group.sum(DType::Float64, reinterpret_cast<std::byte*>(buffer.data()), count);
  at = 0;
  for (auto& [name, value] : updates) {
    if (!is_float(value.dtype())) continue;
    Tensor mean(value.dtype(), value.shape());
    visit_float_dtype(value.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (T& x : mean.values<T>()) x = static_cast<T>(buffer[at++]);
    });
    value = mean;
  }
}

std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t hash) {
  for (const std::byte b : bytes) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::uint64_t initializers_fingerprint(const Graph& graph) {
  std::uint64_t hash = fnv1a({});
  for (const Initializer& init : graph.def().initializers) {
    hash = fnv1a_text(init.name, hash);
    hash = fnv1a_tensor(init.value, hash);
  }
  return hash;
}

std::uint64_t dataset_fingerprint(const Dataset& data) {
  std::uint64_t hash = fnv1a_tensor(data.samples, fnv1a({}));
  hash = fnv1a(std::as_bytes(std::span(data.labels)), hash);
  return fnv1a_value(static_cast<std::uint64_t>(data.num_classes), hash);
}

std::uint64_t settings_fingerprint(const TrainConfig& config) {
  const OptimizerSettings& o = config.optimizer;
  std::uint64_t hash = fnv1a_value(static_cast<std::uint64_t>(o.kind), fnv1a({}));
  for (const double x : {o.lr, o.momentum, o.beta1, o.beta2, o.eps, o.weight_decay})
    hash = fnv1a_double(x, hash);
  hash = fnv1a_value(o.nesterov ? 1 : 0, hash);
  const ScheduleSettings& s = config.schedule;
  hash = fnv1a_value(static_cast<std::uint64_t>(s.kind), hash);
  for (const std::int64_t x : {s.step_size, s.t_max, config.batch_size, config.epochs,
                               static_cast<std::int64_t>(s.milestones.size())})
    hash = fnv1a_value(static_cast<std::uint64_t>(x), hash);
  for (const std::int64_t m : s.milestones) hash = fnv1a_value(static_cast<std::uint64_t>(m), hash);
  hash = fnv1a_double(s.gamma, fnv1a_double(s.lr_min, hash));
  hash = fnv1a_value(config.seed, hash);
  hash = fnv1a_value(config.weight_decay_overrides.size(), hash);
  for (const auto& [name, decay] : config.weight_decay_overrides)
    hash = fnv1a_double(decay, fnv1a_text(name, hash));
  const Bindings& b = config.bindings;
  for (const std::string* name : {&b.input, &b.label, &b.loss, &b.prediction})
    hash = fnv1a_text(*name, hash);
  return hash;
}

void check_same_on_every_rank(ProcessGroup& group, std::uint64_t value, const std::string& what,
                              const std::string& hint) {
  const std::vector<std::uint64_t> values = group.all_gather(value);
  std::vector<std::string> differing;
  for (std::size_t r = 1; r < values.size(); ++r)
    if (values[r] != values[0]) differing.push_back(std::to_string(r));
  if (differing.empty()) return;
  std::string ranks;
  for (std::size_t i = 0; i < differing.size(); ++i)
    ranks += (i == 0 ? "" : ", ") + differing[i];
  throw RunError("data-parallel training on " + std::to_string(group.size()) + " ranks: rank" +
                 (differing.size() == 1 ? " " : "s ") + ranks + " ha" +
                 (differing.size() == 1 ? "s" : "ve") + " other " + what + " than rank 0; " +
                 hint);
}

}  // namespace nodeflow::training
