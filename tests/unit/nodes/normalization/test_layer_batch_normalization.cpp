// BatchNormalization (ONNX BatchNormalization-15; docs/graph-format.md,
// "training and lda_coeff"): batch
// statistics with the biased variance in training mode, the ONNX momentum
// convention for the running statistics (and how it differs from PyTorch's),
// running statistics in inference mode, the single-value error, the updates
// reaching TrainingRun::initializer_updates, and gradients for X, scale, B.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::expect_near;
using testing::f64;
using testing::make_node;
using testing::pattern;
using testing::run_forward;

// numpy reference:
//   X = ((arange(24)*7) % 13 - 6) / 4 reshaped (3,2,2,2); scale [1.5, -0.5]; B [0.25, 1]
//   running mean [0.1, -0.2], running var [1, 2]; epsilon 1e-5; momentum 0.8
//   mu = X.mean((0,2,3)); var = X.var((0,2,3))  (biased, ddof=0)
//   Y = scale * (X - mu) / sqrt(var + eps) + B
//   new_mean = 0.8 * rm + 0.2 * mu; new_var = 0.8 * rv + 0.2 * var
std::vector<Tensor> bn_inputs(DType dt = DType::Float64) {
  return {pattern({3, 2, 2, 2}, 7, 13, 6, 4.0, dt), f64({2}, {1.5, -0.5}).cast(dt), f64({2}, {0.25, 1.0}).cast(dt),
          f64({2}, {0.1, -0.2}).cast(dt), f64({2}, {1.0, 2.0}).cast(dt)};
}

const std::vector<double> kTrainY{
    -2.0770084211511732, 0.7154016842302346,  -1.6780926918109722, 1.114317413570436,   1.5073890553180096,
    0.538737222438173,   1.3690102220494615,  0.40035838916962496, -0.4813455037903688, 2.311064601591039,
    -0.08242977445016758, 2.7099803309312405, 0.9538737222438173,  1.7841467218551061,  0.8154948889752692,
    1.6457678885865579,  1.114317413570436,   -1.279176962470771,  1.513233142910637,   -0.8802612331305699,
    0.40035838916962496, 1.2306313887809135,  0.2619795559010768,  1.0922525555123654};

TEST(LayerBatchNormalization, TrainingModeUsesBatchStatisticsAndOnnxMomentum) {
  auto node = make_node("BatchNormalization", {{"momentum", 0.8}});
  std::vector<Tensor> out(3);
  std::vector<Tensor> saved;
  std::vector<std::pair<std::size_t, Tensor>> updates;
  const std::vector<Tensor> in = bn_inputs();
  node->forward(ForwardContext{in, out, &saved, 0, &updates});
  expect_near(as_doubles(out[0]), kTrainY, 1e-14);
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].first, 3u);
  EXPECT_EQ(updates[1].first, 4u);
  expect_near(as_doubles(updates[0].second), {0.07166666666666668, -0.1766666666666667}, 1e-15);
  // Biased batch variance [0.88368..., 0.81597...]. PyTorch (momentum 0.2 =
  // 1 - 0.8) would use the unbiased variance and get [0.99280..., 1.77803...].
  expect_near(as_doubles(updates[1].second), {0.976736111111111, 1.7631944444444445}, 1e-15);
  EXPECT_GT(std::abs(as_doubles(updates[1].second)[0] - 0.9928030303030302), 1e-3);
  // The optional outputs carry the same new statistics; the inputs are untouched.
  EXPECT_EQ(as_doubles(out[1]), as_doubles(updates[0].second));
  EXPECT_EQ(as_doubles(out[2]), as_doubles(updates[1].second));
  EXPECT_EQ(as_doubles(in[3]), (std::vector<double>{0.1, -0.2}));
}

TEST(LayerBatchNormalization, DefaultMomentumIsZeroPointNine) {
  auto node = make_node("BatchNormalization", {});
  std::vector<Tensor> out(1);
  std::vector<Tensor> saved;
  std::vector<std::pair<std::size_t, Tensor>> updates;
  node->forward(ForwardContext{bn_inputs(), out, &saved, 0, &updates});
  // 0.9 * 0.1 + 0.1 * (-1/24) and 0.9 * 1 + 0.1 * 0.88368...
  expect_near(as_doubles(updates[0].second), {0.9 * 0.1 + 0.1 * (-1.0 / 24), 0.9 * -0.2 + 0.1 * (-1.0 / 12)}, 1e-15);
  expect_near(as_doubles(updates[1].second), {0.9 + 0.1 * 0.8836805555555554, 1.8 + 0.1 * 0.8159722222222223}, 1e-15);
}

TEST(LayerBatchNormalization, InferenceModeUsesRunningStatistics) {
  // numpy: Y = scale * (X - rm) / sqrt(rv + eps) + B
  const std::vector<double> want{
      -2.1499880000899996, 0.4749988750084374, -1.7749898750759372, 0.8499970000224999,  1.2828420053704894,
      0.6641251186225439,  1.1944538786922114, 0.5757369919442659,  -0.6499955000337496, 1.9749913750646868,
      -0.27499737501968724, 2.349989500078749, 0.9292894986573776,  1.4596182587270454,  0.8409013719790996,
      1.3712301320487674,  0.8499970000224999, -1.3999917500618746, 1.2249951250365623,  -1.024993625047812,
      0.5757369919442659,  1.1060657520139334, 0.48734886526598786, 1.0176776253356556};
  auto node = make_node("BatchNormalization", {{"momentum", 0.8}});
  const auto out = run_forward(*node, bn_inputs(), 3, false).outputs;
  expect_near(as_doubles(out[0]), want, 1e-14);
  EXPECT_EQ(as_doubles(out[1]), (std::vector<double>{0.1, -0.2}));  // unchanged
  // float32 and float16 inputs compute in float32.
  expect_near(as_doubles(run_forward(*node, bn_inputs(DType::Float32), 1, false).outputs[0]), want, 1e-6);
  expect_near(as_doubles(run_forward(*node, bn_inputs(DType::Float16), 1, false).outputs[0]), want, 4e-3);
}

TEST(LayerBatchNormalization, SingleValuePerChannelIsAnErrorInTrainingMode) {
  auto node = make_node("BatchNormalization", {});
  const std::vector<Tensor> in{pattern({1, 2, 1, 1}, 1, 9, 0, 1.0), f64({2}, {1, 1}), f64({2}, {0, 0}),
                               f64({2}, {0, 0}), f64({2}, {1, 1})};
  try {
    run_forward(*node, in, 1, true);
    FAIL();
  } catch (const RunError& e) {
    EXPECT_STREQ(e.what(),
                 "BatchNormalization in training mode needs more than one value per channel, got input shape [1, 2, 1, 1]");
  }
  EXPECT_NO_THROW(run_forward(*node, in, 1, false));  // inference is fine
  // N = 1 with spatial positions, or N x C without spatial axes, is fine.
  const std::vector<Tensor> nc{pattern({4, 2}, 3, 7, 3, 2.0), f64({2}, {1, 1}), f64({2}, {0, 0}), f64({2}, {0, 0}),
                               f64({2}, {1, 1})};
  EXPECT_NO_THROW(run_forward(*node, nc, 1, true));
}

TEST(LayerBatchNormalization, GradientsForXScaleAndBInTrainingMode) {
  std::mt19937_64 rng(8);
  auto random = [&](Shape s) { return testing::random_uniform(std::move(s), rng, 1.5); };
  for (const Shape& shape : {Shape{3, 2, 2, 2}, Shape{5, 3}, Shape{2, 2, 3}}) {
    const std::int64_t c = shape[1];
    Tensor var = random({c});
    for (double& v : var.values<double>()) v = std::abs(v) + 0.5;
    for (double lda : {1.0, 0.5}) {
      auto node = make_node("BatchNormalization", {{"epsilon", 1e-3}}, true, lda);
      const testing::GradCheckResult r = testing::check_gradient(
          *node, {random(shape), random({c}), random({c}), random({c}), var}, {.training = true});
      EXPECT_TRUE(r.ok) << to_string(shape) << " lda " << lda << "\n" << r.failures;
    }
  }
}

// The sums run over fixed blocks of images and the threads split the batch:
// Y and every gradient are the same bits for 1, 2 and 3 threads (a tensor
// large enough for three, N = 25 in blocks of 3 and 4 images, rows of 1517
// elements with a tail), and agree with the sums taken plainly in float64.
TEST(LayerBatchNormalization, ThreadCountsGiveTheSameBits) {
  std::mt19937_64 rng(21);
  const Shape shape{25, 3, 41, 37};
  const std::int64_t n = shape[0], c = shape[1], s = shape[2] * shape[3];
  std::vector<Tensor> in{testing::random_uniform(shape, rng, 2.0), testing::random_uniform({c}, rng),
                         testing::random_uniform({c}, rng), f64({c}, {0, 0, 0}), f64({c}, {1, 1, 1})};
  for (double& v : in[0].values<double>()) v += 3.0;  // a mean well away from 0
  const Tensor dy = testing::random_uniform(shape, rng);
  const Tensor prefill = testing::random_uniform(shape, rng);  // the += contract
  auto node = make_node("BatchNormalization", {{"epsilon", 1e-5}}, true);
  std::vector<std::vector<double>> first;
  for (const int threads : {1, 2, 3}) {
    const testing::RunSettings settings{threads};
    const testing::ForwardResult fwd = run_forward(*node, in, 1, true, settings);
    std::vector<Tensor> grads{prefill.clone(), Tensor(DType::Float64, {c}), Tensor(DType::Float64, {c}), Tensor{},
                              Tensor{}};
    run_backward(*node, in, fwd, {dy}, grads, settings);
    const std::vector<std::vector<double>> got{as_doubles(fwd.outputs[0]), as_doubles(grads[0]),
                                               as_doubles(grads[1]), as_doubles(grads[2])};
    if (first.empty()) {
      first = got;
      continue;
    }
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], first[k]) << "threads " << threads << " output " << k;
  }
  const std::vector<double> before = as_doubles(prefill);
  for (std::size_t i = 0; i < before.size(); ++i) first[1][i] -= before[i];
  // The plain float64 sums.
  const std::vector<double> x = as_doubles(in[0]), g = as_doubles(dy), scale = as_doubles(in[1]),
                            bias = as_doubles(in[2]);
  std::vector<double> want_y(x.size()), want_dx(x.size()), want_ds(c), want_db(c);
  const double m = static_cast<double>(n * s);
  for (std::int64_t ch = 0; ch < c; ++ch) {
    auto each = [&](auto f) {
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = (i * c + ch) * s; j < (i * c + ch + 1) * s; ++j) f(static_cast<std::size_t>(j));
    };
    double mu = 0, var = 0, sdy = 0, sdyh = 0;
    each([&](std::size_t j) { mu += x[j]; });
    mu /= m;
    each([&](std::size_t j) { var += (x[j] - mu) * (x[j] - mu); });
    const double is = 1 / std::sqrt(var / m + 1e-5);
    each([&](std::size_t j) {
      sdy += g[j];
      sdyh += g[j] * (x[j] - mu) * is;
    });
    each([&](std::size_t j) {
      const double h = (x[j] - mu) * is;
      want_y[j] = scale[ch] * h + bias[ch];
      want_dx[j] = scale[ch] * is / m * (m * g[j] - sdy - h * sdyh);
    });
    want_ds[ch] = sdyh;
    want_db[ch] = sdy;
  }
  expect_near(first[0], want_y, 1e-11);
  expect_near(first[1], want_dx, 1e-11);
  expect_near(first[2], want_ds, 1e-9);
  expect_near(first[3], want_db, 1e-9);
}

// ONNX BatchNormalization-14+: training_mode fixes the mode whatever the run.
TEST(LayerBatchNormalization, TrainingModeAttributeDecidesAsOnnxDefinesIt) {
  // training_mode 1 in an inference run: batch statistics (kTrainY), the new
  // running statistics as outputs, no update of the initializers.
  auto batch = make_node("BatchNormalization", {{"momentum", 0.8}, {"training_mode", std::int64_t{1}}});
  const auto inference = run_forward(*batch, bn_inputs(), 3, false).outputs;
  expect_near(as_doubles(inference[0]), kTrainY, 1e-14);
  expect_near(as_doubles(inference[1]), {0.07166666666666668, -0.1766666666666667}, 1e-15);
  expect_near(as_doubles(inference[2]), {0.976736111111111, 1.7631944444444445}, 1e-15);
  // training_mode 0 in a training run: the running statistics, as in
  // inference, no updates; the saved state gives the gradient of a constant-
  // statistics normalization.
  auto running = make_node("BatchNormalization", {{"momentum", 0.8}, {"training_mode", std::int64_t{0}}});
  std::vector<Tensor> out(1), saved;
  std::vector<std::pair<std::size_t, Tensor>> updates;
  running->forward(ForwardContext{bn_inputs(), out, &saved, 0, &updates});
  expect_near(as_doubles(out[0]), as_doubles(run_forward(*running, bn_inputs(), 1, false).outputs[0]), 0.0);
  EXPECT_TRUE(updates.empty());
  std::mt19937_64 rng(3);
  auto random = [&](Shape s) { return testing::random_uniform(std::move(s), rng, 1.5); };
  Tensor var = random({2});
  for (double& v : var.values<double>()) v = std::abs(v) + 0.5;
  const testing::GradCheckResult r = testing::check_gradient(
      *running, {random({3, 2, 2}), random({2}), random({2}), random({2}), var}, {.training = true});
  EXPECT_TRUE(r.ok) << r.failures;
  // By hand: dX = scale * dY / sqrt(var + eps) for channel c.
  std::vector<Tensor> grads{Tensor(DType::Float64, {3, 2, 2, 2}), Tensor(DType::Float64, {2}),
                            Tensor(DType::Float64, {2}), Tensor{}, Tensor{}};
  Tensor dy(DType::Float64, {3, 2, 2, 2});
  for (double& v : dy.values<double>()) v = 1.0;
  std::vector<TensorInfo> infos;
  for (const Tensor& t : bn_inputs()) infos.push_back({t.dtype(), t.shape()});
  const std::vector<Tensor> dys{dy};
  BackwardContext back;
  back.inputs = infos;
  back.saved = saved;
  back.grad_outputs = dys;
  back.grad_inputs = grads;
  running->backward(back);
  EXPECT_NEAR(as_doubles(grads[0])[0], 1.5 / std::sqrt(1.0 + 1e-5), 1e-12);
  EXPECT_NEAR(as_doubles(grads[0])[4], -0.5 / std::sqrt(2.0 + 1e-5), 1e-12);
  EXPECT_EQ(as_doubles(grads[2]), (std::vector<double>{12.0, 12.0}));  // dB = sum dY
  EXPECT_THROW(make_node("BatchNormalization", {{"training_mode", std::int64_t{2}}}), InvalidAttribute);
  // ONNX ties the outputs to the mode.
  const std::vector<TensorInfo> infos5(5, TensorInfo{DType::Float32, {2}});
  std::vector<TensorInfo> x_and_stats = infos5;
  x_and_stats[0] = {DType::Float32, {3, 2}};
  EXPECT_NO_THROW(testing::infer(*batch, x_and_stats, {}, 3));
  EXPECT_THROW(testing::infer(*batch, x_and_stats, {}, 1), InvalidAttribute);
  EXPECT_NO_THROW(testing::infer(*running, x_and_stats, {}, 1));
  EXPECT_THROW(testing::infer(*running, x_and_stats, {}, 3), InvalidAttribute);
}

TEST(LayerBatchNormalization, RunningStatisticsReachTheTrainingRunOnlyInTrainingMode) {
  for (bool training : {true, false}) {
    GraphDef g;
    g.inputs.push_back({"x", {DType::Float64, {kDynamicDim, 2, 2, 2}}});
    const std::vector<Tensor> in = bn_inputs();
    g.initializers = {{"scale", in[1], true}, {"bias", in[2], true}, {"mean", in[3], false}, {"var", in[4], false}};
    NodeDef bn;
    bn.op_type = "BatchNormalization";
    bn.name = "bn";
    bn.inputs = {"x", "scale", "bias", "mean", "var"};
    bn.attributes["momentum"] = 0.8;
    bn.training = training;
    g.nodes = {bn};
    g.outputs = {"bn"};
    Graph graph(std::move(g));
    Executor ex(graph);
    TrainingRun run = ex.forward({{"x", in[0]}});
    if (training) {
      expect_near(as_doubles(run.outputs().at("bn")), kTrainY, 1e-14);
      ASSERT_EQ(run.initializer_updates().size(), 2u);
      expect_near(as_doubles(run.initializer_updates().at("mean")), {0.07166666666666668, -0.1766666666666667}, 1e-15);
      expect_near(as_doubles(run.initializer_updates().at("var")), {0.976736111111111, 1.7631944444444445}, 1e-15);
      // The gradient reaches X, scale and B.
      const TensorMap grads = ex.backward(run, {{"bn", pattern({3, 2, 2, 2}, 5, 11, 5, 4.0)}});
      EXPECT_EQ(grads.count("x") + grads.count("scale") + grads.count("bias"), 3u);
    } else {
      // training = false: inference mode even in a training run, nothing to update.
      EXPECT_TRUE(run.initializer_updates().empty());
      EXPECT_EQ(as_doubles(run.outputs().at("bn")), as_doubles(ex.run({{"x", in[0]}}).at("bn")));
    }
  }
}

TEST(LayerBatchNormalization, InfersShapesAndRefusesMismatches) {
  auto node = make_node("BatchNormalization", {});
  const TensorInfo c{DType::Float32, {3}};
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 3, kDynamicDim}}, c, c, c, c}, {}, 3);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 3, kDynamicDim}));
  EXPECT_EQ(out[2].shape, (Shape{3}));
  try {
    testing::infer(*node, {{DType::Float32, {2, 4, 5}}, c, c, c, c});
    FAIL();
  } catch (const ShapeMismatch& e) {
    EXPECT_STREQ(e.what(), "input 1 (scale) has shape [3]; it needs [C] = [4]");
  }
  EXPECT_THROW(make_node("BatchNormalization", {{"momentum", 1.5}}), InvalidAttribute);
}

}  // namespace
}  // namespace nodeflow
