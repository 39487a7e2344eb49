// Cost of large graphs, per node: load (parse + validate a document), parse
// alone, validate (Graph from a GraphDef), forward (inference) and write, for
// generated pooling chains and fan-outs of 500, 5,000 and 50,000 nodes. Every
// node does the same work, so nodes_per_second stays flat when the cost is
// linear in the node count (bench/linearity.py checks that).
#include <benchmark/benchmark.h>

#include "core/executor.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/generated_graphs.hpp"

namespace nodeflow {
namespace {

using testing::Topology;

Topology topology(const benchmark::State& state) {
  return state.range(1) ? Topology::FanOut : Topology::Chain;
}

void count_nodes(benchmark::State& state) {
  state.counters["nodes_per_second"] = benchmark::Counter(
      static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(state.range(1) ? "fanout" : "chain");
}

void BM_Load(benchmark::State& state) {
  const std::string text =
      write_graph_json(testing::pooling_graph(topology(state), state.range(0)));
  for (auto _ : state) {
    Graph g = load_graph(text);
    benchmark::DoNotOptimize(g);
  }
  count_nodes(state);
}

void BM_Parse(benchmark::State& state) {
  const std::string text =
      write_graph_json(testing::pooling_graph(topology(state), state.range(0)));
  for (auto _ : state) {
    GraphDef def = parse_graph_def(text);
    benchmark::DoNotOptimize(def);
  }
  count_nodes(state);
}

void BM_Validate(benchmark::State& state) {
  const GraphDef def = testing::pooling_graph(topology(state), state.range(0));
  for (auto _ : state) {
    Graph g(def);  // includes copying the description, itself linear
    benchmark::DoNotOptimize(g);
  }
  count_nodes(state);
}

void BM_Forward(benchmark::State& state) {
  const Graph g(testing::pooling_graph(topology(state), state.range(0)));
  const TensorMap feeds = testing::generated_feeds(g.def());
  const Executor executor(g);
  for (auto _ : state) {
    TensorMap out = executor.run(feeds);
    benchmark::DoNotOptimize(out);
  }
  count_nodes(state);
}

void BM_Write(benchmark::State& state) {
  const GraphDef def = testing::pooling_graph(topology(state), state.range(0));
  for (auto _ : state) {
    std::string text = write_graph_json(def);
    benchmark::DoNotOptimize(text);
  }
  count_nodes(state);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "fanout"})
      ->ArgsProduct({{500, 5000, 50000}, {0, 1}})
      ->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Load)->Apply(sizes);
BENCHMARK(BM_Parse)->Apply(sizes);
BENCHMARK(BM_Validate)->Apply(sizes);
BENCHMARK(BM_Forward)->Apply(sizes);
BENCHMARK(BM_Write)->Apply(sizes);

}  // namespace
}  // namespace nodeflow

BENCHMARK_MAIN();
