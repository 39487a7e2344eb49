// op_bench: the ops beyond pooling at the sizes of real networks
// (bench/op_cases.json, which bench/op_torch.py times in PyTorch too), float32,
// 1 and 2 threads. Benchmarks are named CASE/DIRECTION/IMPL/threads:T with
// DIRECTION fwd (inference forward) or bwd (backward after a training-mode
// forward) and IMPL nodeflow or bound (memory-bound cases only).
//  - nodeflow: Node::forward / Node::backward of the registered node, as the
//    executor calls them for the first gradient of tensors read once:
//    forward allocates its output; backward writes into gradient buffers
//    allocated once, overwriting them where the node can
//    (Node::overwrites_gradients), else adding into them.
//  - bound: the bandwidth probe (bench/bandwidth_probe.hpp) moving the bytes
//    the direction must move: fwd reads the float inputs and writes the
//    output; bwd reads dY and the inputs named by the case's `bwd_reads`,
//    and writes every input gradient the node overwrites, reads and writes
//    the others.
// bench/op_compare.py puts these next to op_torch.py's figures and checks the
// targets (README "Performance").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/bandwidth_probe.hpp"
#include "bench/fastest_runs.hpp"
#include "bench/heap_tuning_flag.hpp"
#include "core/graph.hpp"
#include "serialization/json_reader.hpp"

namespace {

using nodeflow::Graph;
using nodeflow::Tensor;
using nodeflow::TensorInfo;
using nodeflow::bench::Probe;
using nodeflow::bench::Traffic;
using json = nlohmann::json;

const int kThreads[] = {1, 2};

const json& cases() {
  static const json all = [] {
    std::ifstream in(NODEFLOW_BENCH_DIR "/op_cases.json");
    return json::parse(in).at("cases");
  }();
  return all;
}

// The case as a one-node graph document: float inputs x0, x1, ... are graph
// inputs, int64 entries constant initializers c0, c1, ....
std::string graph_document(const json& c) {
  json doc{{"format", "nodeflow.graph"}, {"version", 1}, {"name", c.at("name")},
           {"inputs", json::array()}, {"outputs", {"op"}}, {"initializers", json::array()}};
  json node{{"op_type", c.at("op_type")}, {"name", "op"}, {"inputs", json::array()}};
  if (c.contains("attributes")) node["attributes"] = c.at("attributes");
  const json& inputs = c.at("inputs");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const json& in = inputs[k];
    if (in.contains("int64")) {
      const std::string name = std::string("c").append(std::to_string(k));
      doc["initializers"].push_back({{"name", name}, {"dtype", "int64"},
                                     {"shape", {in.at("int64").size()}}, {"data", in.at("int64")},
                                     {"trainable", false}});
      node["inputs"].push_back(name);
    } else {
      const std::string name = std::string("x").append(std::to_string(k));
      doc["inputs"].push_back({{"name", name}, {"dtype", "float32"}, {"shape", in.at("shape")}});
      node["inputs"].push_back(name);
    }
  }
  doc["nodes"] = json::array({node});
  return doc.dump();
}

Tensor uniform(const nodeflow::Shape& shape, unsigned seed) {
  Tensor t(nodeflow::DType::Float32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : t.values<float>()) v = u(gen);
  return t;
}

struct Prepared {
  std::unique_ptr<Graph> graph;
  const nodeflow::Node* node = nullptr;
  std::vector<Tensor> inputs;
  std::vector<TensorInfo> infos;
  std::vector<Tensor> saved;
  Tensor dy;
  std::vector<Tensor> grads;  // empty for constant inputs
  std::vector<std::uint8_t> overwrite;  // BackwardContext::overwrite_inputs
  std::map<std::string, Probe> probes;
};

Prepared& prepared(std::size_t i) {
  static std::map<std::size_t, std::unique_ptr<Prepared>> all;
  auto& slot = all[i];
  if (slot) return *slot;
  const json& c = cases()[i];
  auto p = std::make_unique<Prepared>();
  p->graph = std::make_unique<Graph>(nodeflow::load_graph(graph_document(c)));
  const auto& step = p->graph->steps().at(0);
  p->node = step.node.get();
  Traffic fwd, bwd;
  for (std::size_t k = 0; k < step.inputs.size(); ++k) {
    const std::string& name = step.inputs[k];
    const bool constant = p->graph->initializer(name) != nullptr;
    Tensor t = constant ? p->graph->initializer(name)->value
                        : uniform(p->graph->info(name).shape, static_cast<unsigned>(k + 1));
    p->infos.push_back(TensorInfo{t.dtype(), t.shape()});
    p->grads.push_back(constant ? Tensor() : Tensor(t.dtype(), t.shape()));
    p->overwrite.push_back(!constant && p->node->overwrites_gradients());
    if (!constant) {
      fwd.reads.push_back(static_cast<std::size_t>(t.numel()));
      (p->overwrite.back() ? bwd.writes : bwd.updates).push_back(static_cast<std::size_t>(t.numel()));
    }
    p->inputs.push_back(std::move(t));
  }
  for (const auto& k : c.at("bwd_reads"))
    bwd.reads.push_back(static_cast<std::size_t>(p->inputs.at(k.get<std::size_t>()).numel()));
  // A training-mode forward gives backward its saved state and dY's shape.
  std::vector<Tensor> outputs(1);
  nodeflow::ForwardContext ctx;
  ctx.inputs = p->inputs;
  ctx.outputs = outputs;
  ctx.saved = &p->saved;
  p->node->forward(ctx);
  p->dy = uniform(outputs[0].shape(), 99);
  fwd.writes.push_back(static_cast<std::size_t>(outputs[0].numel()));
  bwd.reads.push_back(static_cast<std::size_t>(outputs[0].numel()));
  if (c.at("bound").get<bool>()) {
    p->probes["fwd"] = nodeflow::bench::make_probe(fwd);
    p->probes["bwd"] = nodeflow::bench::make_probe(bwd);
  }
  slot = std::move(p);
  return *slot;
}

void run_nodeflow(benchmark::State& state, Prepared& p, const std::string& dir, int threads) {
  std::vector<Tensor> outputs(1);
  if (dir == "fwd") {
    nodeflow::ForwardContext ctx;
    ctx.inputs = p.inputs;
    ctx.outputs = outputs;
    ctx.threads = threads;
    for (auto _ : state) {
      // The last call's output is freed first, as the executor frees a step's
      // activations before the next step and as op_torch.py's timed call
      // drops its result: the allocator then hands the same block back.
      // Held, two outputs took turns, one more array for the caches: medians
      // of 5 runs here, Transpose 3.56 -> 3.14 ms (1 thread), Concat 1.17
      // -> 1.02 ms and LayerNormalization 0.64 -> 0.55 ms (2 threads).
      outputs[0] = Tensor();
      p.node->forward(ctx);
      benchmark::DoNotOptimize(outputs[0].raw());
    }
    return;
  }
  const std::vector<Tensor> grad_outputs{p.dy};
  nodeflow::BackwardContext ctx;
  ctx.inputs = p.infos;
  ctx.saved = p.saved;
  ctx.grad_outputs = grad_outputs;
  ctx.grad_inputs = p.grads;
  ctx.overwrite_inputs = p.overwrite;
  ctx.threads = threads;
  for (auto _ : state) {
    p.node->backward(ctx);
    benchmark::ClobberMemory();
  }
}

}  // namespace

int main(int argc, char** argv) {
  argc = nodeflow::bench::apply_heap_tuning_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (std::size_t i = 0; i < cases().size(); ++i)
    for (const char* dir : {"fwd", "bwd"})
      for (const char* impl : {"nodeflow", "bound"})
        for (int t : kThreads) {
          const std::string which = impl, d = dir;
          if (which == "bound" && !cases()[i].at("bound").get<bool>()) continue;
          const std::string name = cases()[i].at("name").get<std::string>() + "/" + dir + "/" +
                                   impl + "/threads:" + std::to_string(t);
          benchmark::RegisterBenchmark(name.c_str(),
                                       [i, d, which, t](benchmark::State& state) {
                                         Prepared& p = prepared(i);
                                         if (which == "nodeflow")
                                           run_nodeflow(state, p, d, t);
                                         else
                                           for (auto _ : state) run_probe(p.probes.at(d), t);
                                       })
              ->Unit(benchmark::kMillisecond)
              ->ComputeStatistics("min", nodeflow::bench::fastest);
        }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
