#pragma once
// Inference over a whole dataset: the predictions, their confusion matrix and
// the mean loss.
#include <cstdint>

#include "core/executor.hpp"
#include "core/graph.hpp"
#include "training/dataset.hpp"
#include "training/metrics.hpp"
#include "training/train_config.hpp"

namespace nodeflow::training {

/// Throws InvalidGraph naming the binding and what the graph offers instead
/// ("bindings.label: 'label' is not a graph input (the graph's inputs: 'x'
/// float32 [?, 2], 'y' int64 [?])") unless input and label are graph inputs
/// (label of dtype int64) and loss and prediction are float graph outputs.
void check_bindings(const Graph& graph, const Bindings& bindings);

/// Throws InvalidGraph, before any step, where the graph's declared shapes
/// cannot take what a pass over `data` in batches of `batch` feeds (the last
/// batch may be smaller): a fixed first (batch) dimension of the input or label
/// binding that one of those batches does not have, or a fixed class count of
/// the prediction other than data.num_classes. `pass` names the feed in the
/// message ("training (batch_size 64)"); without this check such a graph
/// failed at the last batch, after a whole epoch.
void check_feeds(const Graph& graph, const Bindings& bindings, const Dataset& data,
                 std::int64_t batch, const std::string& pass);

struct Evaluation {
  Tensor predictions;  ///< the prediction output for every sample, in dataset order: [N, C]
  ConfusionMatrix confusion;
  double loss =
      0.0;  ///< mean of the loss output over the samples (batch means weighted by batch size)
};

/// Runs the graph in inference mode over `data` in batches of `batch_size`
/// (the last one may be smaller), by an Executor with `options` (threads,
/// max_tensor_bytes). The graph's prediction output must be
/// [batch, data.num_classes]. Throws what check_bindings, check_feeds and the
/// executor throw.
Evaluation evaluate(const Graph& graph, const Dataset& data, const Bindings& bindings,
                    std::int64_t batch_size, const ExecutorOptions& options = {});

/// Where a binding's tensor is named in messages: "bindings.loss ('logits')".
std::string binding_where(const char* key, const std::string& tensor);

/// The value of a scalar (one-element) float tensor as a double.
double scalar_value(const Tensor& t);

}  // namespace nodeflow::training
