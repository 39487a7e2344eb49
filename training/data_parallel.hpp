#pragma once
// What the trainer does with a ProcessGroup (docs/distributed.md): cut each
// global batch into the ranks' shards, combine the ranks' gradients and
// running statistics, and check that the ranks train the same network on the
// same data with the same weights.
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>

#include "core/executor.hpp"
#include "core/graph.hpp"
#include "training/dataset.hpp"
#include "training/process_group.hpp"
#include "training/train_config.hpp"

namespace nodeflow::training {

/// The samples of a global batch that `rank` of `size` trains on: the
/// contiguous run [first, first + count) of the batch's `batch_size`
/// positions; the ranks' runs follow each other in rank order and their
/// lengths differ by at most one (the first batch_size % size ranks take one
/// more).
struct Shard {
  std::size_t first = 0;
  std::size_t count = 0;
};
Shard shard_of(std::size_t batch_size, int rank, int size);

/// Throws InvalidAttribute when an epoch over `samples` samples in batches of
/// `batch_size` has a batch with fewer samples than the `ranks` ranks (a rank
/// would get none): the message gives the batch sizes that work.
void check_shardable(std::size_t samples, std::int64_t batch_size, int ranks);

/// Collective: replaces each gradient of `names` (in `grads`) by the sum over
/// the ranks of `weight` times the rank's gradient, `weight` being the rank's
/// share of the global batch (its samples over the batch's). The sums are
/// taken in the gradients' dtypes, tensor by tensor in name order, each in one
/// ProcessGroup::sum per dtype. The new tensors have buffers of their own.
void sum_gradients(ProcessGroup& group, TensorMap& grads, const std::set<std::string>& names,
                   double weight);

/// Collective: replaces each tensor of `updates` (the new values of
/// non-trainable initializers a training-mode forward computed: BatchNormalization's
/// running mean and variance) by the weighted mean over the ranks, `weight`
/// being the rank's share of the global batch. The sum is taken in float64 and
/// rounded once to each tensor's dtype, so ranks that agree give that value
/// back exactly. Every rank must hold the same names.
void average_updates(ProcessGroup& group, TensorMap& updates, double weight);

/// FNV-1a (64 bits) of every initializer's name, dtype, shape and bytes, in
/// document order: equal on two ranks when their weights are equal bit for bit.
std::uint64_t initializers_fingerprint(const Graph& graph);

/// FNV-1a (64 bits) of a dataset's samples (dtype, shape, bytes), labels and
/// class count.
std::uint64_t dataset_fingerprint(const Dataset& data);

/// FNV-1a (64 bits) of the settings that decide the steps, which every rank
/// must share: optimizer, schedule, batch_size, epochs, seed,
/// weight_decay_overrides and bindings (not threads, eval_batch_size,
/// log_every or max_tensor_bytes, which may differ from host to host).
std::uint64_t settings_fingerprint(const TrainConfig& config);

/// FNV-1a (64 bits) of `bytes`, continuing from `hash` (the FNV offset basis
/// to start).
std::uint64_t fnv1a(std::span<const std::byte> bytes,
                    std::uint64_t hash = 0xcbf29ce484222325ULL);

/// Collective: throws RunError when some rank's `value` differs from rank
/// 0's, naming those ranks and `what` ("rank 1 of 2 has other initial weights
/// than rank 0: ..."). `what` names the compared thing ("initial weights");
/// `hint` says what to do about it.
void check_same_on_every_rank(ProcessGroup& group, std::uint64_t value, const std::string& what,
                              const std::string& hint);

}  // namespace nodeflow::training
