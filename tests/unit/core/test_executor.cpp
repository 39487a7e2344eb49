// Executor: feeds checking, gradient flow through the graph (fan-out sums,
// lda_coeff, training=false), the TrainingRun contract and thread safety.
#include <gtest/gtest.h>

#include <thread>

#include "core/executor.hpp"
#include "support/test_ops.hpp"

namespace nodeflow {
namespace {

NodeDef op(const std::string& type, const std::string& name, std::vector<std::string> in,
           double alpha = 1.0) {
  NodeDef n;
  n.op_type = type;
  n.name = name;
  n.inputs = std::move(in);
  if (type == "TestScale") n.attributes["alpha"] = alpha;
  return n;
}

Tensor f32(Shape s, std::initializer_list<float> v) { return Tensor::from<float>(std::move(s), v); }

using Ints = std::vector<std::int64_t>;

std::vector<float> values(const Tensor& t) {
  auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// x -> s2 (x2) -> ya ; x -> s3 (x3) -> yb ; x * w -> yc (w trainable)
GraphDef fanout() {
  testing::register_test_ops();
  GraphDef g;
  g.inputs.push_back({"x", {DType::Float32, {kDynamicDim, 2}}});
  g.initializers.push_back({"w", f32({1, 2}, {10, 20}), true});
  g.nodes = {op("TestScale", "s2", {"x"}, 2.0), op("TestScale", "s3", {"x"}, 3.0),
             op("TestMul", "m", {"x", "w"})};
  g.outputs = {"s2", "s3", "m"};
  return g;
}

TEST(Executor, RunsAndChecksFeeds) {
  Graph g(fanout());
  Executor ex(g);
  TensorMap out = ex.run({{"x", f32({1, 2}, {1, 2})}});
  EXPECT_EQ(values(out["s2"]), (std::vector<float>{2, 4}));
  EXPECT_EQ(values(out["m"]), (std::vector<float>{10, 40}));
  EXPECT_THROW(ex.run({}), InvalidGraph);
  try {
    ex.run({{"x", f32({1, 3}, {1, 2, 3})}});
    FAIL();
  } catch (const ShapeMismatch& e) {
    EXPECT_STREQ(e.what(), "graph input 'x': expected shape [?, 2], got [1, 3]");
  }
  try {
    ex.run({{"x", Tensor(DType::Float64, {1, 2})}});
    FAIL();
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "graph input 'x': expected dtype float32, got float64");
  }
}

TEST(Executor, FanOutSumsGradientsAndSeedsDefaultToZero) {
  Graph g(fanout());
  Executor ex(g);
  TrainingRun run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  // d/dx (1*2x + 1*3x + 1*(x*w)) = 2 + 3 + w; no seed for... all three seeded here.
  TensorMap grads = ex.backward(run, {{"s2", f32({1, 2}, {1, 1})},
                                      {"s3", f32({1, 2}, {1, 1})},
                                      {"m", f32({1, 2}, {1, 1})}});
  EXPECT_EQ(values(grads["x"]), (std::vector<float>{15, 25}));
  EXPECT_EQ(values(grads["w"]), (std::vector<float>{1, 2}));
  // s3 has no seed: it contributes nothing.
  run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  grads = ex.backward(run, {{"s2", f32({1, 2}, {1, 1})}});
  EXPECT_EQ(values(grads["x"]), (std::vector<float>{2, 2}));
  EXPECT_EQ(values(grads["w"]), (std::vector<float>{0, 0}));
}

TEST(Executor, LdaCoeffScalesOnlyInputGradients) {
  GraphDef d = fanout();
  d.nodes[2].lda_coeff = 0.5;
  Graph g(std::move(d));
  Executor ex(g);
  TrainingRun run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  TensorMap grads = ex.backward(run, {{"m", f32({1, 2}, {1, 1})}});
  EXPECT_EQ(values(grads["x"]), (std::vector<float>{5, 10}));  // 0.5 * w
  // docs/graph-format.md, "training and lda_coeff": the node's own parameter gradients are not scaled.
  EXPECT_EQ(values(grads["w"]), (std::vector<float>{1, 2}));
}

TEST(Executor, TrainingFalseStopsGradientAndKeepsNoState) {
  GraphDef d = fanout();
  d.nodes[2].training = false;
  Graph g(std::move(d));
  Executor ex(g);
  TrainingRun run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  EXPECT_TRUE(run.saved("m").empty());
  TensorMap grads = ex.backward(run, {{"m", f32({1, 2}, {1, 1})}, {"s2", f32({1, 2}, {1, 1})}});
  EXPECT_EQ(values(grads["x"]), (std::vector<float>{2, 2}));
  EXPECT_EQ(values(grads["w"]), (std::vector<float>{0, 0}));
}

TEST(Executor, TrainingRunStateIsReleasedAfterBackward) {
  Graph g(fanout());
  Executor ex(g);
  TrainingRun run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  EXPECT_EQ(run.saved("m").size(), 2u);
  ex.backward(run, {});
  EXPECT_TRUE(run.saved("m").empty());
  EXPECT_THROW(ex.backward(run, {}), RunError);
  TrainingRun never_forwarded;
  EXPECT_THROW(ex.backward(never_forwarded, {}), RunError);
}

TEST(Executor, RefusesWrongSeeds) {
  Graph g(fanout());
  Executor ex(g);
  TrainingRun run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  EXPECT_THROW(ex.backward(run, {{"s2", f32({2, 1}, {1, 1})}}), ShapeMismatch);
  run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  EXPECT_THROW(ex.backward(run, {{"x", f32({1, 2}, {1, 1})}}), InvalidGraph);
  // A seed of another dtype is refused as a feed of another dtype is.
  run = ex.forward({{"x", f32({1, 2}, {1, 2})}});
  try {
    ex.backward(run, {{"s2", f32({1, 2}, {1, 1}).cast(DType::Float64)}});
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "gradient for output 's2': expected dtype float32, got float64");
  }
}

TEST(Executor, ConcurrentRunsMatchASingleThreadedRun) {
  Graph g(fanout());
  Executor ex(g);
  auto step = [&](float base) {
    Tensor x = f32({2, 2}, {base, base + 1, base + 2, base + 3});
    TrainingRun run = ex.forward({{"x", x}});
    TensorMap grads = ex.backward(run, {{"m", run.outputs().at("m")}});
    return std::make_pair(values(run.outputs().at("m")), values(grads.at("w")));
  };
  std::vector<std::pair<std::vector<float>, std::vector<float>>> expected, got(8);
  for (int t = 0; t < 8; ++t) expected.push_back(step(static_cast<float>(t)));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 200; ++rep) got[t] = step(static_cast<float>(t));
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[t], expected[t]) << "thread " << t;
}

}  // namespace
}  // namespace nodeflow

namespace nodeflow {
namespace {

// The pooling family through one graph, run by 8 threads at once: each thread's
// forward and backward must equal a single-threaded run bit for bit.
TEST(Executor, ConcurrentPoolingRunsMatchASingleThreadedRun) {
  GraphDef d;
  d.inputs.push_back({"x", {DType::Float32, {2, 3, 9, 9}}});
  auto pool = [](std::string type, std::string name, std::string in, Attributes a) {
    NodeDef n;
    n.op_type = std::move(type);
    n.name = std::move(name);
    n.inputs = {std::move(in)};
    n.attributes = std::move(a);
    return n;
  };
  d.nodes = {pool("MaxPool", "mp", "x", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}},
                                          {"pads", Ints{1, 1, 1, 1}}}),
             pool("AveragePool", "ap", "mp", {{"kernel_shape", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}}),
             pool("LpPool", "lp", "x", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{3, 3}}}),
             pool("GlobalAveragePool", "gap", "x", {})};
  d.outputs = {"ap", "lp", "gap", "mp"};
  Graph g(std::move(d));
  Executor ex(g);
  auto step = [&](int t) {
    Tensor x(DType::Float32, {2, 3, 9, 9});
    float* p = x.data<float>();
    for (std::int64_t i = 0; i < x.numel(); ++i)
      p[i] = static_cast<float>((i * 7919 + t * 104729) % 1000) * 0.01f - 5.0f;
    TrainingRun run = ex.forward({{"x", x}});
    TensorMap seeds;
    for (const char* out : {"ap", "lp", "gap"}) seeds[out] = run.outputs().at(out);
    TensorMap grads = ex.backward(run, seeds);
    std::vector<float> all = values(grads.at("x"));
    for (const char* out : {"ap", "lp", "gap", "mp"}) {
      auto v = values(run.outputs().at(out));
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  std::vector<std::vector<float>> expected, got(8);
  for (int t = 0; t < 8; ++t) expected.push_back(step(t));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) got[t] = step(t);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[t], expected[t]) << "thread " << t;
}

}  // namespace
}  // namespace nodeflow
