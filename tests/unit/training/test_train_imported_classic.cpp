// Training a classic network read from another tool's ONNX file
// (examples/classic/README.md): SqueezeNet 1.1 exported by PyTorch 1.13 at
// opset 9, its weights not trainable once imported (docs/onnx.md, "Training
// keys"), gets a label input, a loss and trainable weights, as
// examples/classic/prepare_training.py gives it, and the trainer's steps lower
// the loss on a small batch. (The full MNIST run is the example's; an epoch of
// 8,000 digits is too long for a unit test under the sanitizers.)
#include <gtest/gtest.h>

#include <random>

#include "core/graph.hpp"
#include "serialization/onnx.hpp"
#include "training/train_config.hpp"
#include "training/trainer.hpp"

namespace nodeflow::training {
namespace {

TEST(TrainImportedClassic, SqueezeNetFromPyTorchOpset9TrainsOnceItsWeightsAreMarkedTrainable) {
  const Graph imported = load_onnx_file(NODEFLOW_EXAMPLES_DIR "/classic/squeezenet_mnist.onnx");
  GraphDef def = imported.def();
  std::size_t weights = 0;
  for (Initializer& init : def.initializers) {
    EXPECT_FALSE(init.trainable) << init.name;  // another tool's model: nothing is trainable
    init.trainable = init.value.dtype() == DType::Float32;
    weights += init.trainable ? 1 : 0;
  }
  EXPECT_EQ(weights, 52u);  // 26 convolutions, W and B
  def.inputs.push_back({"label", TensorInfo{DType::Int64, {kDynamicDim}}});
  NodeDef loss;
  loss.op_type = "SoftmaxCrossEntropyLoss";
  loss.name = "xent";
  loss.inputs = {"logits", "label"};
  loss.specified_outputs_name = std::vector<std::string>{"loss"};
  def.nodes.push_back(loss);
  def.outputs = {"logits", "loss"};
  Graph graph(def);

  // Four stand-in digits: a bright square whose place depends on the label
  // (few and small: the test also runs unoptimized under the sanitizers).
  constexpr std::int64_t kBatch = 4;
  Dataset data;
  data.num_classes = 10;
  data.samples = Tensor(DType::Float32, {kBatch, 1, 28, 28});
  float* pixels = data.samples.data<float>();
  std::mt19937 rng(24);
  std::uniform_real_distribution<float> noise(0.0f, 0.1f);
  for (std::int64_t n = 0; n < kBatch; ++n) {
    const std::int64_t label = n % 10;
    data.labels.push_back(label);
    for (std::int64_t k = 0; k < 28 * 28; ++k) pixels[n * 784 + k] = noise(rng);
    const std::int64_t top = 2 + 2 * label, left = 20 - 2 * label;
    for (std::int64_t y = top; y < top + 6; ++y)
      for (std::int64_t x = left; x < left + 6; ++x) pixels[n * 784 + y * 28 + x] = 1.0f;
  }
  const Batch batch = slice(data, 0, static_cast<std::size_t>(kBatch));

  Trainer trainer(graph, parse_train_config(R"({"optimizer": {"type": "adam", "lr": 0.002}, "seed": 1})"));
  const double first = trainer.step(batch, 0.002).loss;
  double last = first;
  for (int k = 0; k < 7; ++k) last = trainer.step(batch, 0.002).loss;
  EXPECT_LT(last, first * 0.9) << "first " << first << ", last " << last;
}

}  // namespace
}  // namespace nodeflow::training
