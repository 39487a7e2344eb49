// The layer ops together in a validated Graph run by the Executor: a small
// convolutional classifier (Conv, Relu, Reshape with a constant shape, Gemm,
// SoftmaxCrossEntropyLoss). Shape inference carries the dynamic batch through,
// and the executor's gradients for every parameter match finite differences
// of the loss computed by Executor::run.
#include <gtest/gtest.h>

#include <random>

#include "core/executor.hpp"
#include "support/graph_parts.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::i64;
using testing::node_def;
using testing::random_uniform;

GraphDef classifier(std::mt19937_64& rng) {
  GraphDef g;
  g.inputs = {{"image", {DType::Float64, {kDynamicDim, 1, 6, 6}}}, {"label", {DType::Int64, {kDynamicDim}}}};
  g.initializers = {{"conv.W", random_uniform({2, 1, 3, 3}, rng, 0.5), true},
                    {"conv.B", random_uniform({2}, rng, 0.1), true},
                    {"flat.shape", i64({2}, {0, -1}), false},
                    {"fc.W", random_uniform({3, 72}, rng, 0.2), true},
                    {"fc.B", random_uniform({3}, rng, 0.1), true}};
  g.nodes = {node_def("Conv", "conv", {"image", "conv.W", "conv.B"}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}),
             node_def("Relu", "relu", {"conv"}),
             node_def("Reshape", "flat", {"relu", "flat.shape"}),
             node_def("Gemm", "fc", {"flat", "fc.W", "fc.B"}, {{"transB", std::int64_t{1}}}),
             node_def("SoftmaxCrossEntropyLoss", "loss", {"fc", "label"})};
  g.outputs = {"loss"};
  return g;
}

TEST(LayerNetwork, InfersShapesThroughTheDynamicBatch) {
  std::mt19937_64 rng(1);
  const Graph g(classifier(rng));
  EXPECT_EQ(g.info("conv").shape, (Shape{kDynamicDim, 2, 6, 6}));
  EXPECT_EQ(g.info("flat").shape, (Shape{kDynamicDim, 72}));
  EXPECT_EQ(g.info("fc").shape, (Shape{kDynamicDim, 3}));
  EXPECT_EQ(g.info("loss").shape, (Shape{}));
}

TEST(LayerNetwork, ExecutorGradientsMatchFiniteDifferencesOfTheLoss) {
  std::mt19937_64 rng(2);
  GraphDef def = classifier(rng);
  const Tensor image = random_uniform({4, 1, 6, 6}, rng, 1.0);
  const Tensor label = i64({4}, {0, 2, 1, 2});
  const TensorMap feeds{{"image", image}, {"label", label}};

  Graph graph(def);
  Executor ex(graph);
  TrainingRun run = ex.forward(feeds);
  const TensorMap grads = ex.backward(run, {{"loss", Tensor::from<double>({}, {1.0})}});
  for (const char* p : {"image", "conv.W", "conv.B", "fc.W", "fc.B"}) ASSERT_TRUE(grads.count(p)) << p;
  EXPECT_FALSE(grads.count("flat.shape"));

  const double h = 1e-6;
  for (std::size_t i = 0; i < def.initializers.size(); ++i) {
    if (!def.initializers[i].trainable) continue;
    const std::string name = def.initializers[i].name;
    const auto analytic = grads.at(name).values<double>();
    for (std::size_t e = 0; e < analytic.size(); ++e) {
      auto loss_at = [&](double delta) {
        GraphDef shifted = def;
        shifted.initializers[i].value = def.initializers[i].value.clone();
        shifted.initializers[i].value.values<double>()[e] += delta;
        const Graph g(std::move(shifted));
        return Executor(g).run(feeds).at("loss").values<double>()[0];
      };
      const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
      EXPECT_NEAR(analytic[e], numeric, 1e-7 + 1e-6 * std::abs(numeric)) << name << "[" << e << "]";
    }
  }
}

}  // namespace
}  // namespace nodeflow
