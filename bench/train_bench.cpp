// LeNet-5 (examples/lenet5.json) training and inference throughput:
//  - BM_LeNet5TrainStep: one optimizer step on a batch of 64 (training-mode
//    forward, backward from the loss, SGD with momentum), samples per second;
//  - BM_LeNet5Inference: inference on a batch of 256, images per second;
// each with 1 and 2 threads for the kernels (ExecutorOptions::threads).
// Inputs are seeded uniform pixels and labels i % 10, so no dataset is needed.
// For scale: PyTorch 1.13 takes about 10.4 ms per training step of 64 and
// 17 ms per inference batch of 256 with 2 threads.
// Like `nodeflow train` and `eval`, the benchmark keeps freed activation
// buffers in the heap (keep_freed_buffers_in_heap); run it with
// --no_heap_tuning to measure glibc's default behaviour.
#include <benchmark/benchmark.h>

#include <cstring>

#include "bench/heap_tuning_flag.hpp"
#include "core/executor.hpp"
#include "core/random.hpp"
#include "serialization/json_reader.hpp"
#include "training/trainer.hpp"

namespace {

using namespace nodeflow;
using namespace nodeflow::training;

Batch synthetic_batch(std::int64_t n) {
  Batch b{Tensor(DType::Float32, {n, 1, 28, 28}), Tensor(DType::Int64, {n})};
  Rng rng(n);
  for (float& x : b.samples.values<float>()) x = static_cast<float>(rng.uniform());
  for (std::int64_t i = 0; i < n; ++i) b.labels.data<std::int64_t>()[i] = i % 10;
  return b;
}

Graph lenet5() { return load_graph_file(NODEFLOW_EXAMPLES_DIR "/lenet5.json"); }

void BM_LeNet5TrainStep(benchmark::State& state) {
  Graph graph = lenet5();
  TrainConfig config;
  config.optimizer.lr = 0.01;
  config.optimizer.momentum = 0.9;
  config.threads = static_cast<int>(state.range(0));
  Trainer trainer(graph, config);
  const Batch batch = synthetic_batch(64);
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step(batch, 0.01).loss);
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_LeNet5TrainStep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LeNet5Inference(benchmark::State& state) {
  const Graph graph = lenet5();
  const Executor executor(graph, ExecutorOptions{static_cast<int>(state.range(0))});
  const Batch batch = synthetic_batch(256);
  const TensorMap feeds{{"image", batch.samples}, {"label", batch.labels}};
  for (auto _ : state) benchmark::DoNotOptimize(executor.run(feeds));
  state.SetItemsProcessed(state.iterations() * 256);
}
BENCHMARK(BM_LeNet5Inference)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  argc = nodeflow::bench::apply_heap_tuning_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
