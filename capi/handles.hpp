#pragma once
// What the opaque handles of nodeflow.h are. Each holds shared ownership of
// what it runs on, so handles may be released in any order.
#include <cstdint>
#include <memory>
#include <optional>

#include "capi/nodeflow.h"
#include "core/executor.hpp"
#include "core/graph.hpp"
#include "training/dataset.hpp"
#include "training/trainer.hpp"

struct nf_graph {
  std::shared_ptr<nodeflow::Graph> graph;
};

namespace nodeflow::capi {
/// A graph and its executor, shared by the session handle and its runs.
struct SessionState {
  SessionState(std::shared_ptr<const Graph> g, ExecutorOptions options)
      : graph(std::move(g)), executor(*graph, options) {}
  std::shared_ptr<const Graph> graph;
  Executor executor;
};
}  // namespace nodeflow::capi

struct nf_session {
  std::shared_ptr<const nodeflow::capi::SessionState> state;
};

struct nf_run {
  std::shared_ptr<const nodeflow::capi::SessionState> state;
  nodeflow::TensorMap feeds;
  nodeflow::TensorMap outputs;
  std::optional<nodeflow::TrainingRun> training;  ///< the last forward, until backward
  nodeflow::TensorMap seeds;
  nodeflow::TensorMap gradients;
};

struct nf_trainer {
  std::shared_ptr<nodeflow::Graph> graph;
  std::unique_ptr<nodeflow::training::Trainer> trainer;
  nodeflow::training::Dataset data;
  std::int64_t next_epoch = 0;  ///< the schedule's epoch of the next one trained
  bool training = false;        ///< inside nf_trainer_train_*, its callback included
};
