// Gradient flow through real layers and what an optimizer step does with it
// (docs/graph-format.md, "training and lda_coeff"): fan-out sums, frozen nodes, BatchNormalization's running
// statistics and weight decay on weights only.
//
// No PyTorch is available here: the expected numbers come from
// tests/reference/training_reference.py, which writes each network out in
// numpy with the backward pass derived by hand as PyTorch's autograd computes
// it (sums over consumers, detached frozen branches) and PyTorch's documented
// SGD, Adam, BatchNorm and cross-entropy formulas.
#include <gtest/gtest.h>


#include "core/executor.hpp"
#include "support/graph_compare.hpp"
#include "support/graph_parts.hpp"
#include "training/parameters.hpp"
#include "training/trainer.hpp"

namespace nodeflow::training {
namespace {

using Values = std::vector<float>;
using testing::expect_values;
using testing::f32;
using testing::node_def;
using testing::same_bits;

// h = x W1^T + b1 is read by Relu and by Tanh (fan-out);
// logits = relu(h) W2^T + b2 + tanh(h) W3^T; loss = mean softmax cross-entropy.
GraphDef fanout_graph(bool freeze_w3_branch) {
  GraphDef g;
  g.name = "fanout";
  g.inputs = {{"x", {DType::Float32, {kDynamicDim, 3}}}, {"y", {DType::Int64, {kDynamicDim}}}};
  g.initializers = {
      {"W1",
       f32({4, 3},
           {0.2f, -0.1f, 0.4f, -0.3f, 0.5f, 0.1f, 0.25f, 0.15f, -0.2f, -0.05f, -0.4f, 0.3f}),
       true},
      {"B1", f32({4}, {0.1f, -0.2f, 0.05f, 0.0f}), true},
      {"W2", f32({2, 4}, {0.3f, -0.2f, 0.1f, 0.4f, -0.1f, 0.25f, -0.3f, 0.2f}), true},
      {"B2", f32({2}, {0.05f, -0.05f}), true},
      {"W3", f32({2, 4}, {0.15f, 0.1f, -0.25f, 0.3f, 0.2f, -0.35f, 0.05f, -0.1f}), true}};
  const Attributes linear{{"transB", std::int64_t{1}}};
  g.nodes = {node_def("Gemm", "fc1", {"x", "W1", "B1"}, linear),
             node_def("Relu", "relu", {"fc1"}),
             node_def("Tanh", "tanh", {"fc1"}),
             node_def("Gemm", "fc2", {"relu", "W2", "B2"}, linear),
             node_def("Gemm", "fc3", {"tanh", "W3"}, linear, !freeze_w3_branch),
             node_def("Add", "logits", {"fc2", "fc3"}),
             node_def("SoftmaxCrossEntropyLoss", "xent", {"logits", "y"})};
  g.nodes.back().specified_outputs_name = std::vector<std::string>{"loss"};
  g.outputs = {"logits", "loss"};
  return g;
}

const TensorMap kFanoutFeeds{
    {"x", Tensor::from<float>({2, 3}, {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f})},
    {"y", Tensor::from<std::int64_t>({2}, {1, 0})}};

TrainConfig config_for(OptimizerSettings optimizer) {
  TrainConfig c;
  c.optimizer = optimizer;
  c.bindings = {"x", "y", "loss", "logits"};
  return c;
}

Batch fanout_batch() { return {kFanoutFeeds.at("x"), kFanoutFeeds.at("y")}; }

TEST(TrainGradients, FanOutSumsTheGradientsOfBothConsumers) {
  const Graph g(fanout_graph(false));
  const Executor ex(g);
  TrainingRun run = ex.forward(kFanoutFeeds);
  EXPECT_NEAR(run.outputs().at("loss").data<float>()[0], 0.996664643, 1e-6);
  const TensorMap grads = ex.backward(run, {{"loss", Tensor::from<float>({}, {1.0f})}});
  expect_values(grads.at("W1"), {-0.0767237481f, -0.157569773f, 0.339063952f, -0.0782367414f,
                                 -0.127844152f, 0.277558892f, -0.123350218f, 0.0785329822f,
                                 -0.144130006f, -0.0747603546f, -0.154371363f, 0.33211904f});
  expect_values(grads.at("B1"), {0.0379477464f, 0.0184912157f, -0.143212772f, 0.037489797f});
  expect_values(grads.at("W2"), {0.364312226f, 0, -0.167336873f, 0.341074903f, -0.364312226f, 0,
                                 0.167336873f, -0.341074903f});
  expect_values(grads.at("B2"), {0.0766173558f, -0.0766173558f});
  expect_values(grads.at("W3"), {0.259579002f, -0.0532582401f, -0.274498053f, 0.366481017f,
                                 -0.259579002f, 0.0532582401f, 0.274498053f, -0.366481017f});
  expect_values(grads.at("x"), {-0.0344799835f, -0.0264961154f, 0.121647807f, -0.00115551483f,
                                -0.00453088606f, -0.064730093f});
}

TEST(TrainGradients, SgdStepDecaysWeightsButNotBiases) {
  Graph g(fanout_graph(false));
  EXPECT_EQ(weight_parameters(g), (std::set<std::string>{"W1", "W2", "W3"}));
  OptimizerSettings sgd;
  sgd.lr = 0.1;
  sgd.momentum = 0.9;
  sgd.weight_decay = 0.01;
  Trainer trainer(g, config_for(sgd));
  const StepResult r = trainer.step(fanout_batch(), 0.1);
  EXPECT_NEAR(r.loss, 0.996664643, 1e-6);
  EXPECT_EQ(r.samples, 2);
  expect_values(
      g.initializer("W1")->value,
      {0.207472375f, -0.0841430227f, 0.365693605f, -0.291876326f, 0.512284415f, 0.0721441108f,
       0.262085022f, 0.141996702f, -0.185386999f, -0.0424739645f, -0.384162864f, 0.266488096f});
  expect_values(g.initializer("B1")->value,
                {0.0962052254f, -0.201849122f, 0.0643212772f, -0.0037489797f});
  expect_values(g.initializer("W2")->value, {0.263268777f, -0.1998f, 0.116633687f, 0.36549251f,
                                             -0.0634687774f, 0.24975f, -0.316433687f, 0.23390749f});
  expect_values(g.initializer("B2")->value, {0.0423382644f, -0.0423382644f});
  expect_values(g.initializer("W3")->value,
                {0.1238921f, 0.105225824f, -0.222300195f, 0.263051898f, 0.2257579f, -0.354975824f,
                 0.0225001947f, -0.0632518983f});
}

TEST(TrainGradients, FrozenNodeLeavesItsParameterAndOptimizerStateUntouched) {
  Graph g(fanout_graph(true));
  EXPECT_EQ(parameters_reached(g, "loss"), (std::set<std::string>{"W1", "B1", "W2", "B2"}));
  const Tensor w3_before = g.initializer("W3")->value.clone();
  OptimizerSettings adam;
  adam.kind = OptimizerKind::Adam;
  adam.lr = 0.01;
  adam.weight_decay = 0.1;  // would move W3 if the optimizer touched it
  Trainer trainer(g, config_for(adam));
  EXPECT_NEAR(trainer.step(fanout_batch(), 0.01).loss, 0.996664643, 1e-6);
  EXPECT_NEAR(trainer.step(fanout_batch(), 0.01).loss, 0.965057792, 1e-6);
  expect_values(
      g.initializer("W1")->value,
      {0.219980313f, -0.0800270412f, 0.38002346f, -0.280010277f, 0.48000578f, 0.0800412432f,
       0.270009636f, 0.17000564f, -0.220009347f, -0.0699016857f, -0.380034605f, 0.280046057f});
  expect_values(g.initializer("B1")->value, {0.0800824549f, -0.2f, 0.0700094451f, -0.0199437092f});
  expect_values(g.initializer("W2")->value,
                {0.280025113f, -0.180016659f, 0.120010009f, 0.380024007f, -0.0800268792f,
                 0.230012727f, -0.320010903f, 0.21996994f});
  expect_values(g.initializer("B2")->value, {0.0300505518f, -0.0300505518f});
  EXPECT_TRUE(same_bits(g.initializer("W3")->value, w3_before));
  EXPECT_EQ(trainer.optimizer().steps("W3"), 0);
  EXPECT_EQ(trainer.optimizer().steps("W1"), 2);
  EXPECT_TRUE(trainer.optimizer().first_moment("W3").empty());
}

// x [3, 2, 2] -> BatchNormalization -> Flatten -> Gemm (W [3, 4]) -> logits -> loss.
GraphDef batch_norm_graph(bool frozen) {
  GraphDef g;
  g.name = "bn";
  g.inputs = {{"x", {DType::Float32, {kDynamicDim, 2, 2}}}, {"y", {DType::Int64, {kDynamicDim}}}};
  g.initializers = {{"scale", f32({2}, {1.5f, 0.5f}), true},
                    {"B", f32({2}, {0.1f, -0.2f}), true},
                    {"mean", f32({2}, {0.2f, -0.1f}), false},
                    {"var", f32({2}, {1.0f, 2.0f}), false},
                    {"W",
                     f32({3, 4}, {0.1f, -0.2f, 0.3f, 0.05f, -0.15f, 0.25f, 0.1f, -0.3f, 0.2f, 0.1f,
                                  -0.1f, 0.15f}),
                     true}};
  g.nodes = {node_def("BatchNormalization", "bn", {"x", "scale", "B", "mean", "var"}, {}, !frozen),
             node_def("Flatten", "flat", {"bn"}),
             node_def("Gemm", "logits", {"flat", "W"}, {{"transB", std::int64_t{1}}}),
             node_def("SoftmaxCrossEntropyLoss", "xent", {"logits", "y"})};
  g.nodes.back().specified_outputs_name = std::vector<std::string>{"loss"};
  g.outputs = {"bn", "logits", "loss"};
  return g;
}

const Tensor kBnX = Tensor::from<float>(
    {3, 2, 2}, {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, 0.25f, -0.75f, 1.0f, -0.5f, 0.75f, 0.25f, -1.25f});
const Tensor kBnY = Tensor::from<std::int64_t>({3}, {0, 2, 1});

TEST(TrainGradients, BatchNormalizationTrainsWithBatchStatistics) {
  const Graph g(batch_norm_graph(false));
  const Executor ex(g);
  TrainingRun run = ex.forward({{"x", kBnX}, {"y", kBnY}});
  EXPECT_NEAR(run.outputs().at("loss").data<float>()[0], 0.581507725, 1e-6);
  expect_values(run.outputs().at("bn"), {0.559275882f, -2.19637941f, 0.633730629f, -0.296945422f,
                                         2.39637941f, 0.1f, -0.645948941f, 0.168392603f,
                                         -1.27782765f, 1.01855176f, -0.180610916f, -0.878617954f});
  const TensorMap grads = ex.backward(run, {{"loss", Tensor::from<float>({}, {1.0f})}});
  expect_values(grads.at("scale"), {-0.191995427f, -0.220996981f});
  expect_values(grads.at("B"), {-0.005976522f, 0.0107953345f});
  expect_values(grads.at("W"), {0.0793257799f, 0.383281933f, -0.164963579f, 0.00268576892f,
                                0.358206046f, -0.268676795f, 0.0239043485f, 0.113743153f,
                                -0.437531826f, -0.114605138f, 0.14105923f, -0.116428922f});
  expect_values(grads.at("x"),
                {0.00641785568f, 0.00607286135f, 0.00726882389f, -0.0103960865f, 0.033950204f,
                 -0.0362121569f, 0.00817196368f, -0.00573099846f, 0.025072864f, -0.0353016282f,
                 -0.00121384126f, 0.00190013867f},
                1e-5);
}

TEST(TrainGradients, TrainerAppliesOnnxRunningStatisticsNotTheOptimizer) {
  Graph g(batch_norm_graph(false));
  OptimizerSettings sgd;
  sgd.lr = 0.1;
  sgd.weight_decay = 0.5;  // must not reach the running statistics (or scale and B: not weights)
  Trainer trainer(g, config_for(sgd));
  EXPECT_EQ(trainer.trained_parameters(), (std::set<std::string>{"B", "W", "scale"}));
  trainer.step({kBnX, kBnY}, 0.1);
  // ONNX: running = 0.9 * running + 0.1 * batch statistic, with the biased variance.
  expect_values(g.initializer("mean")->value, {0.205f, -0.0691666667f});
  expect_values(g.initializer("var")->value, {0.966666667f, 1.91545139f});
  // PyTorch's BatchNorm (momentum 0.1) would have used the unbiased variance:
  // running_var {0.98, 1.93854167}. The conversion is documented in
  // nodes/normalization/batch_normalization.cpp; nodeflow follows ONNX.
  EXPECT_GT(std::abs(g.initializer("var")->value.data<float>()[0] - 0.98f), 0.01f);
  // scale and B moved by plain SGD without decay: scale - 0.1 * grad.
  expect_values(g.initializer("scale")->value, {1.5f + 0.0191995427f, 0.5f + 0.0220996981f});
  expect_values(g.initializer("B")->value, {0.1f + 0.0005976522f, -0.2f - 0.00107953345f});
}

TEST(TrainGradients, FrozenBatchNormalizationUsesAndKeepsItsRunningStatistics) {
  Graph g(batch_norm_graph(true));
  OptimizerSettings sgd;
  sgd.lr = 0.1;
  Trainer trainer(g, config_for(sgd));
  EXPECT_EQ(trainer.trained_parameters(), (std::set<std::string>{"W"}));
  const Tensor scale = g.initializer("scale")->value.clone();
  const Tensor mean = g.initializer("mean")->value.clone();
  const Tensor var = g.initializer("var")->value.clone();
  const Executor ex(g);
  TrainingRun run = ex.forward({{"x", kBnX}, {"y", kBnY}});
  expect_values(
      run.outputs().at("bn"),
      {0.54999775f, -1.699991f, 0.542460264f, -0.164644749f, 2.04999025f, 0.174999625f,
       -0.429809129f, 0.188907757f, -0.94999475f, 0.924995875f, -0.0762566227f, -0.606585383f});
  EXPECT_TRUE(run.initializer_updates().empty());
  trainer.step({kBnX, kBnY}, 0.1);
  EXPECT_TRUE(same_bits(g.initializer("scale")->value, scale));
  EXPECT_TRUE(same_bits(g.initializer("mean")->value, mean));
  EXPECT_TRUE(same_bits(g.initializer("var")->value, var));
}

TEST(TrainGradients, WeightDecayOverridesAreCheckedByName) {
  const Graph g(fanout_graph(false));
  const auto plan = weight_decay_plan(g, 0.01, {{"B1", 0.2}});
  EXPECT_EQ(plan.at("W1"), 0.01);
  EXPECT_EQ(plan.at("B1"), 0.2);
  EXPECT_EQ(plan.at("B2"), 0.0);
  try {
    weight_decay_plan(g, 0.01, {{"W9", 0.2}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "weight_decay_overrides.W9: no trainable initializer has this name");
  }
}

}  // namespace
}  // namespace nodeflow::training
