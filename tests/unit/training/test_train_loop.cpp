// The training loop: a tiny network trained on a fixed toy problem to a known
// loss, reproducibility for a seed, the Dropout stream, and what fit() writes
// (CSV, chart, checkpoint) and the reload check.
//
// The toy problem's expected numbers come from tests/reference/training_reference.py
// (numpy, float64, PyTorch's SGD formula; no PyTorch is available here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/graph_compare.hpp"
#include "support/graph_parts.hpp"
#include "support/temp_dir.hpp"
#include "support/toy_network.hpp"
#include "training/evaluation.hpp"
#include "training/reload_check.hpp"
#include "training/trainer.hpp"

namespace nodeflow::training {
namespace {

namespace fs = std::filesystem;
using Values = std::vector<float>;
using testing::expect_values;
using testing::same_bits;
using testing::temp_dir;
using testing::toy_data;
using testing::toy_graph;

TrainConfig toy_config(std::int64_t batch_size, std::int64_t epochs) {
  TrainConfig c;
  c.optimizer.lr = 0.1;
  c.optimizer.momentum = 0.9;
  c.batch_size = batch_size;
  c.epochs = epochs;
  c.seed = 42;
  c.log_every = 0;
  c.bindings = {"x", "y", "loss", "logits"};
  return c;
}

TEST(TrainLoop, TinyNetworkReachesTheKnownLoss) {
  // Full batch (8), SGD lr 0.1 momentum 0.9, 30 epochs = 30 steps.
  Graph g(toy_graph());
  Trainer trainer(g, toy_config(8, 30));
  const Dataset data = toy_data();
  std::vector<EpochMetrics> history;
  for (std::int64_t e = 0; e < 30; ++e) history.push_back(trainer.train_epoch(data, e));
  EXPECT_EQ(trainer.steps(), 30);
  // Each epoch's loss is measured before its step.
  EXPECT_NEAR(history.front().train_loss, 0.696247537, 1e-6);
  EXPECT_NEAR(history.back().train_loss, 0.172592069, 1e-5);
  EXPECT_NEAR(evaluate(g, data, trainer.config().bindings, 8).loss, 0.161750477, 1e-5);
  EXPECT_DOUBLE_EQ(history.back().train_accuracy, 1.0);
  expect_values(g.initializer("W1")->value,
                {-0.210264704f, -0.827033082f, 1.14820541f, 1.28322074f, -1.13552127f,
                 -0.249202995f, 0.231370434f, 0.333372753f},
                1e-5);
  expect_values(g.initializer("B1")->value,
                {0.328343318f, -1.37497395f, 0.388170874f, 0.149798079f}, 1e-5);
  expect_values(g.initializer("W2")->value,
                {0.296134797f, -1.72074454f, 1.17251989f, -0.416137262f, -0.496134797f, 1.52074454f,
                 -0.672519885f, 0.316137262f},
                1e-5);
  expect_values(g.initializer("B2")->value, {0.764354451f, -0.764354451f}, 1e-5);
}

TEST(TrainLoop, SameSeedSameWeightsOtherSeedOtherWeights) {
  auto train = [](std::uint64_t seed) {
    Graph g(toy_graph({.dropout = true}));
    TrainConfig c = toy_config(3, 4);  // batches of 3: the shuffled order matters
    c.seed = seed;
    Trainer trainer(g, c);
    for (std::int64_t e = 0; e < 4; ++e) trainer.train_epoch(toy_data(), e);
    return g.initializer("W1")->value.clone();
  };
  const Tensor a = train(7), b = train(7), c = train(8);
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_FALSE(same_bits(a, c));
}

TEST(TrainLoop, ProgressCallbackSeesEveryStepAndStopsTraining) {
  // Batches of 3 over 8 samples: 3 batches per epoch.
  Graph g(toy_graph());
  Trainer trainer(g, toy_config(3, 5));
  std::vector<Progress> seen;
  trainer.set_progress_callback([&](const Progress& p) {
    seen.push_back(p);
    return p.step < 4;  // stop after the 4th step, the 1st of epoch 2
  });
  const Dataset data = toy_data();
  const std::vector<EpochMetrics> history = trainer.fit(data, data);
  EXPECT_TRUE(trainer.stopped());
  EXPECT_EQ(trainer.steps(), 4);
  ASSERT_EQ(seen.size(), 4u);
  ASSERT_EQ(history.size(), 2u);  // the partial epoch is evaluated and kept
  EXPECT_EQ(seen[2].epoch, 1);
  EXPECT_EQ(seen[2].batch, 3);
  EXPECT_EQ(seen[2].batches, 3);
  EXPECT_EQ(seen[3].epoch, 2);
  EXPECT_EQ(seen[3].batch, 1);
  EXPECT_DOUBLE_EQ(seen[2].loss, history[0].train_loss);
  EXPECT_DOUBLE_EQ(seen[2].accuracy, history[0].train_accuracy);
  EXPECT_DOUBLE_EQ(seen[3].lr, history[1].lr);
  // The next epoch clears the stop; a cleared callback sees nothing.
  trainer.set_progress_callback({});
  trainer.train_epoch(data, 2);
  EXPECT_FALSE(trainer.stopped());
  EXPECT_EQ(trainer.steps(), 7);
}

TEST(TrainLoop, DropoutMaskChangesEveryStepAndReplaysForTheSeed) {
  // lr 0: the weights stay put, so the loss differs between steps only through the mask.
  auto losses = [](std::uint64_t seed) {
    Graph g(toy_graph({.dropout = true}));
    TrainConfig c = toy_config(8, 1);
    c.seed = seed;
    c.optimizer.lr = 0.0;
    c.optimizer.momentum = 0.0;
    Trainer trainer(g, c);
    const Dataset d = toy_data();
    std::vector<double> out;
    for (int k = 0; k < 6; ++k) out.push_back(trainer.step(slice(d, 0, 8), 0.0).loss);
    return out;
  };
  const std::vector<double> first = losses(5);
  std::set<double> distinct(first.begin(), first.end());
  EXPECT_GE(distinct.size(), 5u);  // 6 masks of 8 x 4 units: a repeat is possible, not likely
  EXPECT_EQ(losses(5), first);
  EXPECT_NE(losses(6), first);
}

TEST(TrainLoop, FitWritesCsvChartAndCheckpointAndTheFileReloadsBitForBit) {
  const fs::path dir = temp_dir("fit");
  Graph g(toy_graph({.dropout = true}));
  TrainConfig c = toy_config(4, 3);
  c.schedule.kind = ScheduleKind::Step;
  c.schedule.step_size = 2;
  c.schedule.gamma = 0.5;
  Trainer trainer(g, c);
  TrainOutputs out{dir / "metrics.csv", dir / "chart.svg", dir / "checkpoint.json"};
  const std::vector<EpochMetrics> history = trainer.fit(toy_data(), toy_data(), out);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].lr, 0.1);
  EXPECT_EQ(history[1].lr, 0.1);
  EXPECT_EQ(history[2].lr, 0.05);
  EXPECT_EQ(trainer.steps(), 6);

  std::ifstream csv(out.metrics_csv);
  std::stringstream text;
  text << csv.rdbuf();
  const std::string written = text.str();
  EXPECT_EQ(written, metrics_csv(history));
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 4);
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(fs::exists(out.chart));
  }

  // The checkpoint holds the weights after the last epoch, every bit of them.
  const Graph checkpoint = load_graph_file(out.checkpoint);
  for (const Initializer& init : g.def().initializers)
    EXPECT_TRUE(same_bits(checkpoint.initializer(init.name)->value, init.value)) << init.name;
  const Evaluation ev = evaluate(checkpoint, toy_data(), c.bindings, 8);
  EXPECT_DOUBLE_EQ(ev.confusion.accuracy(), history.back().test_accuracy);
  EXPECT_DOUBLE_EQ(ev.loss, history.back().test_loss);

  const ReloadCheck same = check_reload(g, out.checkpoint, toy_data(), c.bindings, 3);
  EXPECT_TRUE(same.identical());
  // One changed weight is caught.
  GraphDef changed = g.def();
  changed.initializers[2].value = changed.initializers[2].value.clone();
  changed.initializers[2].value.data<float>()[0] += 1.0f;
  save_graph_file(dir / "changed.json", changed);
  const ReloadCheck differs = check_reload(g, dir / "changed.json", toy_data(), c.bindings, 3);
  EXPECT_FALSE(differs.identical());
  EXPECT_EQ(*differs.first_difference, 0u);
  fs::remove_all(dir);
}

TEST(TrainLoop, RefusesBindingsTheGraphDoesNotHave) {
  Graph g(toy_graph());
  TrainConfig c = toy_config(8, 1);
  c.bindings.label = "labels";
  try {
    Trainer t(g, c);
    FAIL();
  } catch (const InvalidGraph& e) {
    EXPECT_STREQ(e.what(),
                 "bindings.label: 'labels' is not a graph input (the graph's inputs: 'x' float32 "
                 "[?, 2], 'y' int64 [?])");
  }
  c = toy_config(8, 1);
  c.bindings.prediction = "x";
  EXPECT_THROW(Trainer(g, c), InvalidGraph);
  c = toy_config(8, 1);
  c.weight_decay_overrides = {{"W7", 0.1}};
  EXPECT_THROW(Trainer(g, c), InvalidAttribute);
}

TEST(TrainLoop, DivergenceIsReportedNotTrainedOn) {
  Graph g(toy_graph());
  TrainConfig c = toy_config(8, 1);
  Trainer trainer(g, c);
  Dataset d = toy_data();
  d.samples.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  const Tensor before = g.initializer("W1")->value.clone();
  EXPECT_THROW(trainer.step(slice(d, 0, 8), 0.1), RunError);
  EXPECT_TRUE(same_bits(before, g.initializer("W1")->value));
}

}  // namespace
}  // namespace nodeflow::training
