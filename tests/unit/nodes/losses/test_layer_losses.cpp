// SoftmaxCrossEntropyLoss (ONNX SoftmaxCrossEntropyLoss-13) and
// NegativeLogLikelihoodLoss (NegativeLogLikelihoodLoss-22): reductions,
// weights, ignore_index (mean divides by the counted samples), N-D scores,
// the log_prob output, stability for logits of 1e8, errors, and
// finite-difference gradients for the scores / input and the weights.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::f64;
using testing::i64;
using testing::make_node;
using testing::pattern;
using testing::run_forward;

// The numpy reference (tests' own, following the ONNX definition):
//   logp = x - m - log(sum(exp(x - m), axis=1)), m = max over axis 1
//   mask = target != ignore_index; picked = logp[n, target[n, ...], ...]
//   w = weight[target] * mask (1 * mask without weights); loss = -picked * w
//   none: loss; sum: loss.sum(); mean: loss.sum() / w.sum()
// Scores S = ((arange(12)*5) % 7 - 3) / 2 reshaped (4,3); labels [2, 0, 1, 1];
// weights [0.5, 1, 2].
const Tensor kScores = pattern({4, 3}, 5, 7, 3, 2.0);
const Tensor kLabels = i64({4}, {2, 0, 1, 1});
const Tensor kWeights = f64({3}, {0.5, 1.0, 2.0});

Attributes attrs(const std::string& reduction, std::optional<std::int64_t> ignore = std::nullopt) {
  Attributes a{{"reduction", reduction}};
  if (ignore) a["ignore_index"] = *ignore;
  return a;
}

double loss_of(const char* op, const Attributes& a, std::vector<Tensor> in) {
  return as_doubles(run_forward(*make_node(op, a), in, 1, false).outputs[0])[0];
}

TEST(LayerLosses, SoftmaxCrossEntropyMatchesNumpyForEveryReduction) {
  const char* op = "SoftmaxCrossEntropyLoss";
  EXPECT_NEAR(loss_of(op, attrs("mean"), {kScores, kLabels}), 2.4439534658299085, 1e-15);
  EXPECT_NEAR(loss_of(op, attrs("sum"), {kScores, kLabels}), 9.775813863319634, 1e-14);
  const Tensor none = run_forward(*make_node(op, attrs("none")), {kScores, kLabels}, 1, false).outputs[0];
  EXPECT_EQ(none.shape(), (Shape{4}));
  const std::vector<double> want{1.371539031852683, 2.871539031852683, 2.7663678998071335, 2.7663678998071335};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(as_doubles(none)[i], want[i], 1e-15);
  // Weighted mean divides by the sum of the picked weights (0.5 * ... / 5.0).
  EXPECT_NEAR(loss_of(op, attrs("mean"), {kScores, kLabels, kWeights}), 2.1581296398324388, 1e-15);
  // Defaults: reduction mean.
  EXPECT_NEAR(loss_of(op, {}, {kScores, kLabels}), 2.4439534658299085, 1e-15);
}

TEST(LayerLosses, MeanDividesByTheCountedSamples) {
  const char* op = "SoftmaxCrossEntropyLoss";
  // Sample 2 ignored: (1.3715 + 2.8715 + 2.7664) / 3, not / 4.
  EXPECT_NEAR(loss_of(op, attrs("mean", -1), {kScores, i64({4}, {2, 0, -1, 1})}), 2.3364819878375, 1e-15);
  // Weighted with ignored class 1: weights of samples 0 and 1 only (2 + 0.5).
  EXPECT_NEAR(loss_of(op, attrs("mean", 1), {kScores, kLabels, kWeights}), 1.6715390318526828, 1e-15);
  // N-D scores (2,3,2), labels (2,2) with ignore_index 5 (outside [0, C): allowed when ignored).
  const Tensor s3 = pattern({2, 3, 2}, 3, 11, 5, 4.0);
  const Tensor l3 = i64({2, 2}, {0, 2, 1, 5});
  const Tensor none = run_forward(*make_node(op, attrs("none", 5)), {s3, l3}, 1, false).outputs[0];
  EXPECT_EQ(none.shape(), (Shape{2, 2}));
  const std::vector<double> want{1.9118678712750954, 1.6618678712750954, 2.194112186401914, 0.0};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(as_doubles(none)[i], want[i], 1e-15);
  EXPECT_NEAR(loss_of(op, attrs("mean", 5), {s3, l3}), 1.922615976317368, 1e-15);
  // Every sample ignored: 0 / 0, as in ONNX and PyTorch.
  EXPECT_TRUE(std::isnan(loss_of(op, attrs("mean", 1), {kScores, i64({4}, {1, 1, 1, 1})})));
}

TEST(LayerLosses, LogProbOutputIsTheLogSoftmax) {
  const auto out = run_forward(*make_node("SoftmaxCrossEntropyLoss", {}), {kScores, kLabels}, 2, false).outputs;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].shape(), (Shape{4, 3}));
  const std::vector<double> want{-2.871539031852683,  -0.3715390318526829, -1.371539031852683,
                                 -2.871539031852683,  -0.3715390318526829, -1.371539031852683,
                                 -1.7663678998071337, -2.7663678998071335, -0.26636789980713366,
                                 -1.7663678998071337, -2.7663678998071335, -0.26636789980713366};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(as_doubles(out[1])[i], want[i], 1e-15);
}

TEST(LayerLosses, HugeLogitsGiveFiniteLossesInFloat32) {
  // numpy: losses 1e8 and 0 (the label holds the maximum), mean 5e7.
  const Tensor s = Tensor::from<float>({2, 3}, {1e8f, 0.0f, -1e8f, 0.0f, 1e8f, 0.0f});
  const Tensor y = run_forward(*make_node("SoftmaxCrossEntropyLoss", attrs("none")), {s, i64({2}, {1, 1})}, 2, false)
                       .outputs[0];
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1e8, 0.0}));
  EXPECT_EQ(loss_of("SoftmaxCrossEntropyLoss", {}, {s, i64({2}, {1, 1})}), 5e7);
  // The gradient stays finite too: softmax - onehot.
  auto node = make_node("SoftmaxCrossEntropyLoss", {});
  const std::vector<Tensor> in{s, i64({2}, {1, 1})};
  const testing::ForwardResult f = run_forward(*node, in, 1, true);
  std::vector<Tensor> grads{Tensor(DType::Float32, {2, 3}), Tensor{}};
  testing::run_backward(*node, in, f, {Tensor::from<float>({}, {1.0f})}, grads);
  EXPECT_EQ(as_doubles(grads[0]), (std::vector<double>{0.5, -0.5, 0.0, 0.0, 0.0, 0.0}));
}

TEST(LayerLosses, NegativeLogLikelihoodMatchesNumpy) {
  const char* op = "NegativeLogLikelihoodLoss";
  // Rows of S: [-1.5, 1, 0], [-1, 1.5, 0.5], [-0.5, -1.5, 1], [0, -1, 1.5]; picked -S[n, t]:
  // [0, 1, 1.5, 1]; weighted sum 2*0 + 0.5*1 + 1*1.5 + 1*1 = 3.
  EXPECT_DOUBLE_EQ(loss_of(op, attrs("sum"), {kScores, kLabels, kWeights}), 3.0);
  // ignore_index 0: samples 0, 2, 3 counted.
  EXPECT_DOUBLE_EQ(loss_of(op, attrs("mean", 0), {kScores, kLabels}), 0.8333333333333334);
  const Tensor none = run_forward(*make_node(op, attrs("none")), {kScores, kLabels}, 1, false).outputs[0];
  EXPECT_EQ(as_doubles(none), (std::vector<double>{0.0, 1.0, 1.5, 1.0}));
}

TEST(LayerLosses, RefusesBadLabelsShapesAndDtypes) {
  EXPECT_EQ(error_of<RunError>([] { loss_of("SoftmaxCrossEntropyLoss", {}, {kScores, i64({4}, {2, 0, 3, 1})}); }),
            "input 1 (labels): label 3 at flat index 2 is outside [0, 3)");
  EXPECT_EQ(error_of<RunError>([] { loss_of("NegativeLogLikelihoodLoss", attrs("mean", -100), {kScores, i64({4}, {2, -1, 0, 1})}); }),
            "input 1 (target): label -1 at flat index 1 is outside [0, 3) and is not ignore_index -100");
  auto node = make_node("SoftmaxCrossEntropyLoss", attrs("none"));
  EXPECT_EQ(testing::infer(*node, {{DType::Float32, {kDynamicDim, 5, 7}}, {DType::Int64, {kDynamicDim, 7}}}, {}, 2)[0].shape,
            (Shape{kDynamicDim, 7}));
  EXPECT_EQ(testing::infer(*make_node("SoftmaxCrossEntropyLoss", {}), {{DType::Float32, {kDynamicDim, 5}},
                                                                      {DType::Int64, {kDynamicDim}}})[0].shape,
            (Shape{}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {4, 5, 7}}, {DType::Int64, {4, 5}}});
            }),
            "input 1 (labels) has shape [4, 5]; it needs the shape of input 0 [4, 5, 7] without axis 1: [4, 7]");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {4, 5}}, {DType::Int64, {4}}, {DType::Float32, {4}}});
            }),
            "input 2 (weights) has shape [4]; it needs [C] = [5]");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Float32, {4, 5}}, {DType::Float32, {4}}}); }),
            "SoftmaxCrossEntropyLoss needs dtype int64 for input 1 (labels), got float32");
}

TEST(LayerLosses, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(21);
  auto random = [&](Shape s) { return testing::random_uniform(std::move(s), rng, 2.0); };
  const Tensor labels2 = i64({5}, {0, 3, 1, 3, 2});
  const Tensor labels3 = i64({2, 3}, {1, -1, 0, 2, 2, -1});
  for (const char* op : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"})
    for (const char* reduction : {"mean", "sum", "none"})
      for (bool weighted : {false, true}) {
        const std::size_t outputs = std::string(op) == "SoftmaxCrossEntropyLoss" ? 2 : 1;
        Tensor w = random({4});
        for (double& v : w.values<double>()) v = std::abs(v) + 0.1;
        std::vector<Tensor> in2{random({5, 4}), labels2};
        if (weighted) in2.push_back(w);
        auto node = make_node(op, attrs(reduction, 3), true, 0.5);
        testing::GradCheckOptions options{.step = 1e-6, .rtol = 1e-6, .atol = 1e-8, .seed = 1, .num_outputs = outputs};
        testing::GradCheckResult r = testing::check_gradient(*node, in2, options);
        EXPECT_TRUE(r.ok) << op << " " << reduction << (weighted ? " weighted" : "") << "\n" << r.failures;
        std::vector<Tensor> in3{random({2, 4, 3}), labels3};
        if (weighted) in3.push_back(w);
        node = make_node(op, attrs(reduction, -1));
        options.seed = 2;
        r = testing::check_gradient(*node, in3, options);
        EXPECT_TRUE(r.ok) << op << " N-D " << reduction << (weighted ? " weighted" : "") << "\n" << r.failures;
      }
}

}  // namespace
}  // namespace nodeflow
