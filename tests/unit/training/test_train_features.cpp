// Training features (docs/training-config.md, "Gradient clipping,
// accumulation and loss scaling"; "Checkpoints and resuming"): clipping by
// value and by global norm, gradient accumulation, the exponential schedule
// and dynamic loss scaling against numbers from PyTorch
// (tests/reference/training_features_reference.py, its output beside it) or
// worked out by hand; and resuming: a run stopped after k steps and restored
// from its state ends bit-identical to the uninterrupted run.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <vector>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/graph_compare.hpp"
#include "support/graph_parts.hpp"
#include "support/temp_dir.hpp"
#include "support/toy_network.hpp"
#include "training/checkpoint.hpp"
#include "training/lr_schedule.hpp"
#include "training/train_config.hpp"
#include "training/trainer.hpp"

namespace nodeflow::training {
namespace {

namespace fs = std::filesystem;
using testing::expect_values;
using testing::same_bits;
using testing::temp_dir;
using testing::toy_data;
using testing::toy_graph;

TrainConfig sgd_config(double lr = 0.1, double momentum = 0.9) {
  TrainConfig c;
  c.optimizer.lr = lr;
  c.optimizer.momentum = momentum;
  c.batch_size = 8;
  c.epochs = 1;
  c.seed = 42;
  c.log_every = 0;
  c.bindings = {"x", "y", "loss", "logits"};
  return c;
}

struct Expected {
  std::vector<float> w1, b1, w2, b2;
};

void expect_weights(const Graph& g, const Expected& e, double tol = 1e-6) {
  expect_values(g.initializer("W1")->value, e.w1, tol);
  expect_values(g.initializer("B1")->value, e.b1, tol);
  expect_values(g.initializer("W2")->value, e.w2, tol);
  expect_values(g.initializer("B2")->value, e.b2, tol);
}

// Three full-batch SGD steps (lr 0.1, momentum 0.9) with `clip`.
void expect_clipped(const ClipSettings& clip, const Expected& e) {
  Graph g(toy_graph());
  TrainConfig c = sgd_config();
  c.clipping = clip;
  Trainer trainer(g, c);
  const Dataset d = toy_data();
  for (int k = 0; k < 3; ++k) trainer.step(slice(d, 0, 8), 0.1);
  expect_weights(g, e);
}

TEST(TrainFeatures, ClippingByValueMatchesPyTorch) {
  ClipSettings clip;
  clip.value = 0.05;
  expect_clipped(clip, {{0.480974906f, -0.303828529f, 0.208830927f, 0.396149142f, -0.602498256f,
                         0.100805633f, 0.296365252f, 0.302425885f},
                        {0.02805f, -0.02805f, 0.00928517965f, 0.0279259617f},
                        {0.187633477f, -0.505106243f, 0.315669501f, 0.093917157f, -0.38763348f,
                         0.305106255f, 0.184330514f, -0.193917158f},
                        {0.02805f, -0.02805f}});
}

TEST(TrainFeatures, ClippingByGlobalNormMatchesPyTorch) {
  ClipSettings clip;
  clip.max_norm = 0.1;
  expect_clipped(clip, {{0.493155736f, -0.301399827f, 0.203197143f, 0.398663535f, -0.600869117f,
                         0.100278459f, 0.298671387f, 0.300853256f},
                        {0.0161785045f, -0.0269954984f, 0.00320854298f, 0.0102830277f},
                        {0.195501884f, -0.501841339f, 0.305590202f, 0.0977086871f, -0.395501887f,
                         0.30184135f, 0.194409813f, -0.197708689f},
                        {0.0304557529f, -0.0304557529f}});
  ClipSettings inf;
  inf.max_norm = 0.02;
  inf.norm_type = std::numeric_limits<double>::infinity();
  expect_clipped(inf, {{0.497548148f, -0.300468085f, 0.20110253f, 0.399456951f, -0.600306381f,
                        0.100108054f, 0.29953283f, 0.300330579f},
                       {0.00597090087f, -0.0099140528f, 0.00116801785f, 0.00378307975f},
                       {0.198357466f, -0.50059286f, 0.301995987f, 0.0991978557f, -0.398357469f,
                        0.300592872f, 0.198004028f, -0.199197857f},
                       {0.0112199274f, -0.0112199274f}});
}

TEST(TrainFeatures, ClippingByValueThenNormMatchesPyTorch) {
  ClipSettings clip;
  clip.value = 0.05;
  clip.max_norm = 0.06;
  expect_clipped(clip, {{0.491354995f, -0.301654945f, 0.203897666f, 0.398090066f, -0.601099448f,
                         0.10038409f, 0.29836033f, 0.301163581f},
                        {0.0128307961f, -0.0128307961f, 0.00418631899f, 0.0128307961f},
                        {0.194253935f, -0.502122524f, 0.30706838f, 0.0972230948f, -0.394253938f,
                         0.302122536f, 0.192931634f, -0.197223096f},
                        {0.0128307961f, -0.0128307961f}});
}

TEST(TrainFeatures, AccumulatedMicroBatchesMakeTheStepOfTheWholeBatch) {
  // Micro-batches of 3 and 5 samples (weighted 3/8 and 5/8), SGD lr 0.5
  // momentum 0.9, two steps: PyTorch's numbers for the whole batch of 8.
  const Expected torch{{0.445379934f, -0.315950991f, 0.232282032f, 0.399273654f, -0.607918176f,
                        0.100710451f, 0.288190805f, 0.303344865f},
                       {0.104658262f, -0.180031787f, 0.0224353884f, 0.0683008124f},
                       {0.167823892f, -0.52318418f, 0.345636572f, 0.0783573357f, -0.367823895f,
                        0.323184192f, 0.154363443f, -0.178357337f},
                       {0.199136452f, -0.199136452f}};
  const Dataset d = toy_data();
  Graph g(toy_graph());
  Trainer trainer(g, sgd_config(0.5, 0.9));
  const std::vector<Batch> micro{slice(d, 0, 3), slice(d, 3, 8)};
  for (int k = 0; k < 2; ++k) {
    const StepResult r = trainer.step(micro, 0.5);
    EXPECT_EQ(r.samples, 8);
  }
  EXPECT_EQ(trainer.steps(), 2);
  expect_weights(g, torch);

  // Through train_epoch: batch_size 3 with gradient_accumulation 3 is one
  // step per epoch over 3 + 3 + 2 samples, the step of the whole batch.
  Graph whole(toy_graph()), accumulated(toy_graph());
  TrainConfig c = sgd_config(0.5, 0.9);
  Trainer a(whole, c);
  c.batch_size = 3;
  c.gradient_accumulation = 3;
  Trainer b(accumulated, c);
  for (std::int64_t e = 0; e < 2; ++e) {
    const EpochMetrics ma = a.train_epoch(d, e), mb = b.train_epoch(d, e);
    EXPECT_NEAR(ma.train_loss, mb.train_loss, 1e-6);
  }
  EXPECT_EQ(b.steps(), 2);
  for (const char* name : {"W1", "B1", "W2", "B2"}) {
    const auto want = whole.initializer(name)->value.values<float>();
    expect_values(accumulated.initializer(name)->value, std::vector<float>(want.begin(), want.end()),
                  1e-6);
  }
}

TEST(TrainFeatures, ExponentialScheduleIsPyTorchsExponentialLR) {
  ScheduleSettings s;
  s.kind = ScheduleKind::Exponential;
  s.gamma = 0.7;
  const double torch[] = {0.2, 0.13999999999999999, 0.09799999999999999, 0.068599999999999994,
                          0.048019999999999993};
  for (int e = 0; e < 5; ++e) EXPECT_NEAR(learning_rate(s, 0.2, e), torch[e], 1e-16) << e;
  const TrainConfig c = parse_train_config(
      R"({"optimizer": {"type": "sgd", "lr": 1}, "schedule": {"type": "exponential", "gamma": 0.5}})");
  EXPECT_EQ(c.schedule.kind, ScheduleKind::Exponential);
  EXPECT_EQ(learning_rate(c.schedule, 1.0, 3), 0.125);
  EXPECT_THROW(parse_train_config(R"({"optimizer": {"type": "sgd", "lr": 1},
      "schedule": {"type": "exponential", "gamma": 0}})"),
               InvalidConfig);
}

TEST(TrainFeatures, LossScalingByAPowerOfTwoChangesNoBitInFloat32) {
  // Seeding backward with 2^10 and dividing by it again is exact in float32.
  Graph plain(toy_graph()), scaled(toy_graph());
  TrainConfig c = sgd_config();
  Trainer a(plain, c);
  c.loss_scaling.enabled = true;
  c.loss_scaling.init_scale = 1024;
  Trainer b(scaled, c);
  const Dataset d = toy_data();
  for (int k = 0; k < 3; ++k) {
    a.step(slice(d, 0, 8), 0.1);
    b.step(slice(d, 0, 8), 0.1);
  }
  EXPECT_EQ(b.skipped_steps(), 0);
  for (const char* name : {"W1", "B1", "W2", "B2"})
    EXPECT_TRUE(same_bits(plain.initializer(name)->value, scaled.initializer(name)->value)) << name;
}

TEST(TrainFeatures, Float16LossScalingSkipsOverflowingStepsAndBacksOff) {
  // float16 holds at most 65504: the seed 65536 is inf, so the first step's
  // gradients are inf: skipped (the weights keep every bit), the scale halves.
  // With growth_interval 2, two good steps double it back to 65536, which
  // overflows again (GradScaler's rule, worked out by hand).
  Graph g(toy_graph({.dtype = DType::Float16}));
  TrainConfig c = sgd_config();
  c.loss_scaling.enabled = true;
  c.loss_scaling.growth_interval = 2;
  Trainer trainer(g, c);
  const Dataset d = toy_data(DType::Float16);
  const Tensor w0 = g.initializer("W1")->value.clone();
  trainer.step(slice(d, 0, 8), 0.1);
  EXPECT_EQ(trainer.skipped_steps(), 1);
  EXPECT_EQ(trainer.loss_scale(), 32768.0);
  EXPECT_TRUE(same_bits(g.initializer("W1")->value, w0));
  EXPECT_EQ(trainer.optimizer().steps("W1"), 0);
  trainer.step(slice(d, 0, 8), 0.1);
  EXPECT_FALSE(same_bits(g.initializer("W1")->value, w0));
  EXPECT_EQ(trainer.loss_scale(), 32768.0);
  trainer.step(slice(d, 0, 8), 0.1);
  EXPECT_EQ(trainer.loss_scale(), 65536.0);
  EXPECT_EQ(trainer.skipped_steps(), 1);
  trainer.step(slice(d, 0, 8), 0.1);
  EXPECT_EQ(trainer.skipped_steps(), 2);
  EXPECT_EQ(trainer.loss_scale(), 32768.0);
  EXPECT_EQ(trainer.optimizer().steps("W1"), 2);
  EXPECT_EQ(trainer.steps(), 4);
}

TEST(TrainFeatures, BFloat16LossScalingTrainsLikeTheUnscaledRun) {
  // bfloat16 has float32's range: 2^16 overflows nothing here, and the
  // unscaled gradients reach the optimizer in float64, within a bfloat16
  // rounding of the unscaled run's.
  Graph plain(toy_graph({.dtype = DType::BFloat16})), scaled(toy_graph({.dtype = DType::BFloat16}));
  TrainConfig c = sgd_config();
  Trainer a(plain, c);
  c.loss_scaling.enabled = true;
  Trainer b(scaled, c);
  const Dataset d = toy_data(DType::BFloat16);
  for (int k = 0; k < 2; ++k) {
    a.step(slice(d, 0, 8), 0.1);
    b.step(slice(d, 0, 8), 0.1);
  }
  EXPECT_EQ(b.skipped_steps(), 0);
  const Tensor wa = plain.initializer("W2")->value.cast(DType::Float32);
  const Tensor wb = scaled.initializer("W2")->value.cast(DType::Float32);
  for (std::int64_t i = 0; i < wa.numel(); ++i)
    EXPECT_NEAR(wa.data<float>()[i], wb.data<float>()[i], 1e-2) << i;
}

TEST(TrainFeatures, ConfigurationKeysAreReadAndChecked) {
  const TrainConfig c = parse_train_config(R"({"optimizer": {"type": "sgd", "lr": 0.1},
      "gradient_clipping": {"value": 0.5, "max_norm": 2, "norm_type": "inf"},
      "gradient_accumulation": 4, "checkpoint_every": 10,
      "loss_scaling": {"init_scale": 1024, "growth_interval": 100}})");
  EXPECT_EQ(*c.clipping.value, 0.5);
  EXPECT_EQ(*c.clipping.max_norm, 2.0);
  EXPECT_TRUE(std::isinf(c.clipping.norm_type));
  EXPECT_EQ(c.gradient_accumulation, 4);
  EXPECT_EQ(c.checkpoint_every, 10);
  EXPECT_TRUE(c.loss_scaling.enabled);
  EXPECT_EQ(c.loss_scaling.init_scale, 1024.0);
  EXPECT_EQ(c.loss_scaling.growth_interval, 100);
  const auto error = [](const char* text) {
    try {
      parse_train_config(text);
    } catch (const InvalidConfig& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "gradient_clipping": {"max_norm": -1}})"),
            "gradient_clipping.max_norm: expected a finite number > 0, got -1");
  EXPECT_EQ(error(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "gradient_clipping": {}})"),
            "gradient_clipping: give value, max_norm or both");
  EXPECT_EQ(error(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "gradient_accumulation": 0})"),
            "gradient_accumulation: expected an integer >= 1, got 0");
  EXPECT_EQ(error(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "loss_scaling": {"backoff_factor": 1}})"),
            "loss_scaling.backoff_factor: expected a number in (0, 1), got 1");
}

// ------------------------------------------------------------- resuming ---

// Dropout, momentum, batches of 3 over 8 samples (3 steps per epoch), 3 epochs.
TrainConfig resume_config() {
  TrainConfig c = sgd_config(0.2, 0.9);
  c.batch_size = 3;
  c.epochs = 3;
  c.seed = 7;
  return c;
}

void expect_same_weights(const Graph& a, const Graph& b) {
  for (const Initializer& init : a.def().initializers)
    EXPECT_TRUE(same_bits(init.value, b.initializer(init.name)->value)) << init.name;
}

TEST(TrainResume, StoppedAfterEachStepAndResumedFromTheCheckpointEndsBitIdentical) {
  const fs::path dir = temp_dir("resume");
  const Dataset data = toy_data();
  for (const bool adam : {false, true}) {
    TrainConfig c = resume_config();
    if (adam) {
      c.optimizer.kind = OptimizerKind::Adam;
      c.optimizer.momentum = 0.0;
      c.optimizer.lr = 0.05;
    }
    Graph whole(toy_graph({.dropout = true}));
    Trainer reference(whole, c);
    const std::vector<EpochMetrics> history = reference.fit(data, data);
    ASSERT_EQ(history.size(), 3u);
    for (std::int64_t k = 1; k < reference.steps(); ++k) {
      // Stop after step k, checkpointing; resume from the file in a new trainer.
      const fs::path ck = dir / "ck.json";
      {
        Graph g(toy_graph({.dropout = true}));
        Trainer first(g, c);
        first.set_progress_callback([&](const Progress& p) { return p.step < k; });
        first.fit(data, data, TrainOutputs{{}, {}, ck});
        ASSERT_TRUE(first.stopped());
      }
      Checkpoint resumed = load_checkpoint(ck);
      EXPECT_EQ(resumed.state.step, k);
      Trainer second(resumed.graph, c);
      second.restore(resumed.state);
      const std::vector<EpochMetrics> rest = second.fit(data, data);
      EXPECT_EQ(second.steps(), reference.steps()) << "k " << k;
      expect_same_weights(whole, resumed.graph);
      ASSERT_EQ(rest.size(), history.size());
      for (std::size_t e = 0; e < rest.size(); ++e) {
        EXPECT_EQ(rest[e].train_loss, history[e].train_loss) << "k " << k << " epoch " << e;
        EXPECT_EQ(rest[e].test_loss, history[e].test_loss) << "k " << k << " epoch " << e;
      }
      for (const auto& [name, st] : reference.optimizer().state()) {
        EXPECT_TRUE(same_bits(st.m, second.optimizer().state().at(name).m)) << name;
        EXPECT_EQ(st.t, second.optimizer().state().at(name).t);
      }
      if (HasFailure()) {
        ADD_FAILURE() << (adam ? "adam" : "sgd") << ", stopped after step " << k;
        return;
      }
    }
  }
  fs::remove_all(dir);
}

TEST(TrainResume, MidEpochCheckpointsWithAccumulationAndLossScalingResumeBitIdentical) {
  const fs::path dir = temp_dir("resume-every");
  const Dataset data = toy_data();
  TrainConfig c = resume_config();
  c.batch_size = 2;
  c.gradient_accumulation = 2;  // 2 steps per epoch: 4 + 4 samples
  c.checkpoint_every = 1;
  c.loss_scaling.enabled = true;
  c.loss_scaling.growth_interval = 2;
  c.clipping.max_norm = 0.5;
  Graph whole(toy_graph({.dropout = true}));
  Trainer reference(whole, c);
  reference.fit(data, data);
  // A checkpoint after step 3 (inside epoch 2): a run killed then resumes from it.
  Graph g(toy_graph({.dropout = true}));
  TrainConfig stop = c;
  Trainer first(g, stop);
  first.set_progress_callback([](const Progress& p) { return p.step < 3; });
  first.fit(data, data, TrainOutputs{{}, {}, dir / "ck.json"});
  Checkpoint resumed = load_checkpoint(dir / "ck.json");
  EXPECT_EQ(resumed.state.epoch, 1);
  EXPECT_EQ(resumed.state.epoch_samples, 4);
  EXPECT_EQ(resumed.state.order.size(), 8u);
  EXPECT_GT(resumed.state.loss_scale, 0.0);
  Trainer second(resumed.graph, c);
  second.restore(resumed.state);
  second.fit(data, data);
  expect_same_weights(whole, resumed.graph);
  EXPECT_EQ(second.loss_scale(), reference.loss_scale());

  // The epoch goes on only on the data it began with: another training set of
  // the same size (here the labels changed) was taken silently before the
  // checkpoint kept the data's fingerprint (found trying to break issue 22).
  EXPECT_NE(resumed.state.order_data, 0u);
  EXPECT_EQ(parse_training_state(training_state_json(resumed.state)).order_data,
            resumed.state.order_data);
  Dataset other = data;
  other.labels[0] = 1;
  Checkpoint again = load_checkpoint(dir / "ck.json");
  Trainer third(again.graph, c);
  third.restore(again.state);
  try {
    third.fit(other, data);
    ADD_FAILURE() << "another training set of the same size was taken";
  } catch (const InvalidAttribute& e) {
    EXPECT_EQ(std::string(e.what()),
              "the training set has the 8 samples of the epoch being continued, but other "
              "samples, labels or classes: not the data it began with (its order indexes that "
              "data)");
  }
  fs::remove_all(dir);
}

TEST(TrainResume, TheCheckpointIsAGraphDocumentAndItsStateRoundTrips) {
  const fs::path dir = temp_dir("resume-doc");
  const Dataset data = toy_data();
  Graph g(toy_graph());
  TrainConfig c = resume_config();
  c.optimizer.kind = OptimizerKind::Adam;
  c.optimizer.momentum = 0.0;
  Trainer trainer(g, c);
  trainer.fit(data, data, TrainOutputs{{}, {}, dir / "ck.json"});
  // Every verb reads it as the trained graph.
  const Graph plain = load_graph_file(dir / "ck.json");
  expect_same_weights(g, plain);
  const TrainingState s = trainer.state();
  const TrainingState back = parse_training_state(training_state_json(s));
  EXPECT_EQ(back.step, 9);
  EXPECT_EQ(back.epoch, 3);
  EXPECT_EQ(back.shuffle_stream, s.shuffle_stream);
  ASSERT_EQ(back.history.size(), 3u);
  EXPECT_EQ(back.history[2].train_loss, s.history[2].train_loss);
  EXPECT_EQ(back.optimizer, OptimizerKind::Adam);
  for (const auto& [name, st] : s.optimizer_state) {
    EXPECT_TRUE(same_bits(st.m, back.optimizer_state.at(name).m)) << name;
    EXPECT_TRUE(same_bits(st.v, back.optimizer_state.at(name).v)) << name;
  }
  // A trained graph without a state is not a checkpoint; another optimizer
  // does not fit the state.
  save_graph_file(dir / "plain.json", g.def());
  EXPECT_THROW(load_checkpoint(dir / "plain.json"), InvalidGraph);
  TrainConfig sgd = resume_config();
  Graph other(toy_graph());
  Trainer wrong(other, sgd);
  EXPECT_THROW(wrong.restore(back), InvalidAttribute);
  // A graph other than the checkpoint's is refused naming the first
  // difference, as docs/training-config.md says (it said only "its inputs,
  // outputs or nodes ... differ from the checkpoint's").
  EXPECT_NO_THROW(check_same_structure(toy_graph(), toy_graph()));
  GraphDef changed = toy_graph();
  changed.nodes[0].position = std::array<double, 2>{10, 20};  // moved in the editor: the same graph
  EXPECT_NO_THROW(check_same_structure(changed, toy_graph()));
  changed = toy_graph();
  changed.nodes[1].op_type = "Sigmoid";
  try {
    check_same_structure(changed, toy_graph());
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("its nodes[1] differs from the checkpoint's: {", 0), 0u) << what;
    EXPECT_LT(what.find("\"Sigmoid\""), what.find(" here, {")) << what;
    EXPECT_GT(what.find("\"Tanh\""), what.find(" here, {")) << what;
  }
  changed = toy_graph();
  changed.outputs.pop_back();
  try {
    check_same_structure(changed, toy_graph());
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    EXPECT_EQ(std::string(e.what()),
              "its outputs[1] differs from the checkpoint's: nothing here, \"loss\" in the "
              "checkpoint");
  }
  // A broken state names its path.
  try {
    parse_training_state(R"({"format": "nodeflow.training_state", "version": 2})");
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    EXPECT_EQ(std::string(e.what()), "training_state.version: expected 1, got 2");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nodeflow::training
