// Round trips: read -> write -> read -> write gives byte-identical documents,
// the same description bit for bit and the same results, for every
// conformance graph and for a generated 5,000-node graph.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/executor.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"
#include "support/files.hpp"
#include "support/generated_graphs.hpp"
#include "support/graph_compare.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

/// Tensors named in `files` ({"name": "relative.npy"}), cast to the dtype the
/// graph declares for them (bfloat16 travels as float32).
TensorMap read_case_tensors(const fs::path& dir, const nlohmann::json& files, const Graph& g) {
  TensorMap out;
  for (const auto& [name, file] : files.items()) {
    Tensor t = read_npy(dir / file.get<std::string>());
    const DType want = g.info(name).dtype;
    out.emplace(name, t.dtype() == want ? t : t.cast(want));
  }
  return out;
}

/// Everything the graph computes from the case's files: outputs, and for
/// backward cases the gradients too.
TensorMap results(const Graph& g, const fs::path& dir, const nlohmann::json& c) {
  const TensorMap feeds = read_case_tensors(dir, c.at("inputs"), g);
  const Executor ex(g);
  if (c.at("kind") != "backward") return ex.run(feeds);
  TrainingRun run = ex.forward(feeds);
  TensorMap all = run.outputs();
  const TensorMap seeds =
      read_case_tensors(dir, c.value("grad_outputs", nlohmann::json::object()), g);
  for (auto& [name, grad] : ex.backward(run, seeds)) all.emplace(name + ".grad", grad);
  return all;
}

TEST(RoundTrip, EveryConformanceGraphRewritesIdenticallyAndComputesTheSame) {
  std::size_t checked = 0;
  for (const auto& entry : fs::directory_iterator(NODEFLOW_CONFORMANCE_DIR)) {
    const fs::path dir = entry.path();
    if (!fs::exists(dir / "case.json")) continue;
    const auto c = nlohmann::json::parse(testing::read_bytes(dir / "case.json"));
    if (c.at("kind") == "error") continue;
    SCOPED_TRACE(dir.filename().string());

    const GraphDef original = parse_graph_def(testing::read_bytes(dir / "graph.json"));
    const std::string first = write_graph_json(original);
    const GraphDef reread = parse_graph_def(first);
    const std::string second = write_graph_json(reread);
    EXPECT_EQ(first, second);
    EXPECT_TRUE(testing::same_graph_def(original, reread));
    EXPECT_TRUE(
        testing::same_tensors(results(Graph(original), dir, c), results(Graph(reread), dir, c)));
    ++checked;
  }
  EXPECT_GE(checked, 40u);  // the corpus has more; a broken directory walk must not pass
}

TEST(RoundTrip, GeneratedGraphOf5000NodesRewritesIdenticallyAndComputesTheSame) {
  const GraphDef built = testing::mixed_pooling_graph(5000, 42);
  ASSERT_EQ(built.nodes.size(), 5000u);
  const std::string first = write_graph_json(built);
  const GraphDef reread = parse_graph_def(first);
  EXPECT_EQ(write_graph_json(reread), first);
  EXPECT_TRUE(testing::same_graph_def(built, reread));

  // Both inline and base64 initializers, NaN included, are in the document.
  EXPECT_NE(first.find("{\"base64\": "), std::string::npos);
  EXPECT_NE(first.find("\"data\": [-0.0, 1e-45, 3.918315e-39, "), std::string::npos);
  EXPECT_NE(first.find("\"data\": [-0.0, 5e-324, 7.41691286169067e-309, "), std::string::npos);

  const Graph a(built);
  const Graph b(reread);
  const TensorMap feeds = testing::generated_feeds(built);
  EXPECT_TRUE(testing::same_tensors(Executor(a).run(feeds), Executor(b).run(feeds)));

  // Training mode too: gradients of inputs and trainable weights agree.
  TensorMap grads[2];
  for (int k = 0; k < 2; ++k) {
    const Executor ex(k == 0 ? a : b);
    TrainingRun run = ex.forward(feeds);
    TensorMap seeds;
    for (const auto& [name, value] : run.outputs()) {
      Tensor ones(value.dtype(), value.shape());
      visit_float_dtype(value.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (T& v : ones.values<T>()) v = T(1);
      });
      seeds.emplace(name, ones);
    }
    grads[k] = ex.backward(run, seeds);
  }
  EXPECT_FALSE(grads[0].empty());
  EXPECT_TRUE(testing::same_tensors(grads[0], grads[1]));
}

TEST(RoundTrip, SavedFileLoadsToTheSameGraph) {
  const GraphDef built = testing::mixed_pooling_graph(300, 7);
  const fs::path path = fs::path(::testing::TempDir()) / "nodeflow_roundtrip.json";
  save_graph_file(path, built);
  const Graph loaded = load_graph_file(path);
  EXPECT_TRUE(testing::same_graph_def(loaded.def(), built));
  EXPECT_EQ(testing::read_bytes(path), write_graph_json(built));
  fs::remove(path);
}

}  // namespace
}  // namespace nodeflow
