// Training and inference throughput of the example networks, for the
// side-by-side comparison with PyTorch (bench/train_compare.py runs this and
// bench/train_torch.py in turn):
//  - BM_<Net>TrainStep: one optimizer step on a batch of 64 (training-mode
//    forward, backward from the loss, the optimizer of the example's
//    .train.json), samples per second;
//  - BM_<Net>Inference: inference on a batch of 256, images per second;
// for LeNet-5 (examples/lenet5.json) and the ResNet example
// (examples/resnet.json), each with 1 and 2 threads for the kernels
// (ExecutorOptions::threads). Inputs are seeded uniform pixels and labels
// i % 10, so no dataset is needed.
// Like `nodeflow train` and `eval`, the benchmark keeps freed activation
// buffers in the heap (keep_freed_buffers_in_heap); run it with
// --no_heap_tuning to measure glibc's default behaviour.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>

#include "bench/heap_tuning_flag.hpp"
#include "core/executor.hpp"
#include "core/random.hpp"
#include "serialization/json_reader.hpp"
#include "training/train_config.hpp"
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

std::string example(const std::string& name) { return std::string(NODEFLOW_EXAMPLES_DIR) + "/" + name; }

void train_step(benchmark::State& state, const std::string& net) {
  Graph graph = load_graph_file(example(net + ".json"));
  TrainConfig config = load_train_config(example(net + ".train.json"));
  config.threads = static_cast<int>(state.range(0));
  Trainer trainer(graph, config);
  const Batch batch = synthetic_batch(64);
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step(batch, config.optimizer.lr).loss);
  state.SetItemsProcessed(state.iterations() * 64);
}

void inference(benchmark::State& state, const std::string& net) {
  const Graph graph = load_graph_file(example(net + ".json"));
  const Executor executor(graph, ExecutorOptions{static_cast<int>(state.range(0))});
  const Batch batch = synthetic_batch(256);
  const TensorMap feeds{{"image", batch.samples}, {"label", batch.labels}};
  for (auto _ : state) benchmark::DoNotOptimize(executor.run(feeds));
  state.SetItemsProcessed(state.iterations() * 256);
}

void BM_LeNet5TrainStep(benchmark::State& state) { train_step(state, "lenet5"); }
void BM_LeNet5Inference(benchmark::State& state) { inference(state, "lenet5"); }
void BM_ResNetTrainStep(benchmark::State& state) { train_step(state, "resnet"); }
void BM_ResNetInference(benchmark::State& state) { inference(state, "resnet"); }
BENCHMARK(BM_LeNet5TrainStep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LeNet5Inference)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ResNetTrainStep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ResNetInference)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  argc = nodeflow::bench::apply_heap_tuning_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
