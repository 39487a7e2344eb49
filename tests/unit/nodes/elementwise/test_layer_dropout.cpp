// Dropout (ONNX Dropout-22; docs/graph-format.md, "training and lda_coeff"):
// masks from the run's seed (same seed same mask, another seed another mask),
// inverted scaling 1/(1-ratio), identity in inference mode, backward with the forward's mask, the ratio as
// attribute or input, and the training_mode input read as ONNX defines it.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::f64;
using testing::make_node;
using testing::pattern;
using testing::run_forward;

// All ones: y shows the mask times the scale.
Tensor ones(Shape s) { return pattern(std::move(s), 0, 1, -1, 1.0); }

struct Trained {
  Tensor y, mask;
  std::vector<Tensor> saved;
};

Trained train(const Node& node, std::vector<Tensor> in, std::uint64_t seed) {
  std::vector<Tensor> out(2);
  Trained t;
  node.forward(ForwardContext{in, out, &t.saved, seed, nullptr});
  t.y = out[0];
  t.mask = out[1];
  return t;
}

std::vector<double> mask_of(const Trained& t) { return as_doubles(t.mask.cast(DType::Float64)); }

TEST(LayerDropout, SameSeedSameMaskAnotherSeedAnotherMask) {
  auto node = make_node("Dropout", {{"ratio", 0.3}});
  const Tensor x = ones({1000});
  const Trained a = train(*node, {x}, 42);
  const Trained b = train(*node, {x}, 42);
  const Trained c = train(*node, {x}, 43);
  EXPECT_EQ(a.mask.dtype(), DType::UInt8);
  EXPECT_EQ(mask_of(a), mask_of(b));
  EXPECT_EQ(as_doubles(a.y), as_doubles(b.y));
  EXPECT_NE(mask_of(a), mask_of(c));
  // The ONNX seed attribute picks another stream for the same run seed.
  auto seeded = make_node("Dropout", {{"ratio", 0.3}, {"seed", std::int64_t{7}}});
  EXPECT_NE(mask_of(train(*seeded, {x}, 42)), mask_of(a));
}

TEST(LayerDropout, KeepsOneMinusRatioAndScalesThemInverted) {
  for (double ratio : {0.25, 0.5, 0.8}) {
    auto node = make_node("Dropout", {{"ratio", ratio}});
    const Tensor x = pattern({20000}, 1, 97, 48, 8.0);
    const Trained t = train(*node, {x}, 5);
    const auto y = as_doubles(t.y);
    const auto m = mask_of(t);
    const auto xv = as_doubles(x);
    double kept = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      kept += m[i];
      EXPECT_DOUBLE_EQ(y[i], m[i] != 0 ? xv[i] / (1 - ratio) : 0.0) << i;
    }
    // Binomial(20000, 1 - ratio): 5 standard deviations are < 0.018 of n.
    EXPECT_NEAR(kept / 20000, 1 - ratio, 0.018) << ratio;
  }
}

TEST(LayerDropout, InferenceModeIsTheIdentity) {
  auto node = make_node("Dropout", {{"ratio", 0.5}});
  const Tensor x = pattern({3, 4}, 5, 7, 3, 2.0);
  const auto out = run_forward(*node, {x}, 2, false).outputs;
  EXPECT_TRUE(out[0].shares_buffer(x));
  EXPECT_EQ(as_doubles(out[1].cast(DType::Float64)), std::vector<double>(12, 1.0));
  // ratio 0 in training mode: also the identity, all kept.
  auto none = make_node("Dropout", {{"ratio", 0.0}});
  const Trained t = train(*none, {x}, 9);
  EXPECT_EQ(as_doubles(t.y), as_doubles(x));
  EXPECT_EQ(mask_of(t), std::vector<double>(12, 1.0));
}

TEST(LayerDropout, BackwardUsesTheForwardMask) {
  auto node = make_node("Dropout", {{"ratio", 0.4}}, true, 0.5);
  const std::vector<Tensor> in{ones({200})};
  const Trained t = train(*node, in, 77);
  std::vector<TensorInfo> infos{{DType::Float64, {200}}};
  const Tensor dy = pattern({200}, 3, 11, 5, 4.0);
  std::vector<Tensor> dx{ones({200})};  // pre-filled: backward adds
  const std::vector<Tensor> dys{dy, Tensor{}};
  node->backward(BackwardContext{infos, t.saved, dys, dx, 0.5, {}});
  const auto m = mask_of(t);
  const auto g = as_doubles(dy);
  const auto got = as_doubles(dx[0]);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], 1.0 + 0.5 * g[i] * m[i] / 0.6) << i;
  // And the finite differences over training forwards with the same seed agree.
  const testing::GradCheckResult r =
      testing::check_gradient(*node, {pattern({4, 5}, 5, 7, 3, 2.0)}, {.training = true});
  EXPECT_TRUE(r.ok) << r.failures;
}

TEST(LayerDropout, RatioAsInputOrAttributeWithDefaultHalf) {
  const Tensor x = ones({4000});
  // Input form (ONNX-12+), here a float32 scalar for float64 data.
  auto node = make_node("Dropout", {});
  const Tensor ratio = Tensor::from<float>({}, {0.75f});
  const Trained t = train(*node, {x, ratio}, 3);
  double kept = 0;
  for (double v : mask_of(t)) kept += v;
  EXPECT_NEAR(kept / 4000, 0.25, 0.035);
  EXPECT_DOUBLE_EQ(as_doubles(t.y)[0] + as_doubles(t.y)[1] + as_doubles(t.y)[2] + as_doubles(t.y)[3],
                   4.0 * (mask_of(t)[0] + mask_of(t)[1] + mask_of(t)[2] + mask_of(t)[3]));
  // Neither attribute nor input: 0.5.
  kept = 0;
  for (double v : mask_of(train(*node, {x}, 3))) kept += v;
  EXPECT_NEAR(kept / 4000, 0.5, 0.04);
  // A constant ratio input is checked at load time; a run-time one when it arrives.
  const Tensor one = Tensor::from<float>({1}, {1.0f});
  try {
    testing::infer(*node, {{DType::Float32, {2}}, {DType::Float32, {1}}}, {nullptr, &one});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "input 1 (ratio): expected a ratio in [0, 1), got 1");
  }
  EXPECT_THROW(train(*node, {x, one}, 1), InvalidAttribute);
  EXPECT_THROW(make_node("Dropout", {{"ratio", -0.1}}), InvalidAttribute);
}

TEST(LayerDropout, RefusesRatioTwiceAndTheTrainingModeInput) {
  auto node = make_node("Dropout", {{"ratio", 0.2}});
  try {
    testing::infer(*node, {{DType::Float32, {2}}, {DType::Float32, {}}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "attributes.ratio: ratio is given both as attribute and as input 1; give one");
  }
  auto plain = make_node("Dropout", {});
  const TensorInfo x{DType::Float32, {kDynamicDim, 3}};
  const TensorInfo r{DType::Float32, {}};
  EXPECT_NO_THROW(testing::infer(*plain, {x, r, {DType::UInt8, {}}}));
  try {
    testing::infer(*plain, {x, r, {DType::Float32, {}}});
    FAIL();
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "input 2 (training_mode) is float32; Dropout needs a uint8 (nodeflow's bool) scalar");
  }
  const auto out = testing::infer(*plain, {x, r}, {}, 2);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 3}));
  EXPECT_EQ(out[1].dtype, DType::UInt8);
}

TEST(LayerDropout, TrainingModeInputDecidesAsOnnxDefinesIt) {
  // ONNX Dropout-12+: training_mode true drops in any run, false is the
  // identity in any run; a node that keeps no state saves nothing.
  auto node = make_node("Dropout", {});
  const Tensor x = ones({4, 16});
  const Tensor ratio = Tensor::from<float>({}, {0.5f});
  const Tensor yes = Tensor::from<std::uint8_t>({}, {1}), no = Tensor::from<std::uint8_t>({}, {0});
  // Inference (no saved state) with training_mode true: a mask of 0 and 2.
  {
    std::vector<Tensor> in{x, ratio, yes}, out(2);
    node->forward(ForwardContext{in, out, nullptr, 9, nullptr});
    const std::vector<double> y = as_doubles(out[0].cast(DType::Float64));
    int kept = 0;
    for (double v : y) {
      EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
      kept += v == 2.0;
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, 64);
  }
  // A training run with training_mode false: the identity, the mask all ones.
  {
    const Trained t = train(*node, {x, ratio, no}, 9);
    EXPECT_EQ(as_doubles(t.y.cast(DType::Float64)), as_doubles(x.cast(DType::Float64)));
    for (double m : mask_of(t)) EXPECT_EQ(m, 1.0);
    EXPECT_TRUE(t.saved.empty());
  }
  // A training run with training_mode true is the run's own training mode: same mask.
  EXPECT_EQ(mask_of(train(*node, {x, ratio, yes}, 9)), mask_of(train(*node, {x, ratio}, 9)));
}

TEST(LayerDropout, TheExecutorsRunSeedAdvancesTheMask) {
  for (bool training : {true, false}) {
    GraphDef g;
    g.inputs.push_back({"x", {DType::Float32, {kDynamicDim, 64}}});
    NodeDef d;
    d.op_type = "Dropout";
    d.name = "drop";
    d.inputs = {"x"};
    d.training = training;
    g.nodes = {d};
    g.outputs = {"drop", "drop:1"};
    Graph graph(std::move(g));
    Executor ex(graph);
    const Tensor x = ones({2, 64}).cast(DType::Float32);
    const auto mask = [&](std::uint64_t seed) { return as_doubles(ex.forward({{"x", x}}, seed).outputs().at("drop:1")); };
    if (training) {
      EXPECT_EQ(mask(1), mask(1));
      EXPECT_NE(mask(1), mask(2));
    } else {
      EXPECT_EQ(mask(1), std::vector<double>(128, 1.0));  // training = false: inference mode
    }
  }
}

}  // namespace
}  // namespace nodeflow
