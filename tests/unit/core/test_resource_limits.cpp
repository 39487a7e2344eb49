// Resource limits (issue 17, item 13): the reader's default budget for
// initializer data (ReadOptions::max_initializer_bytes, 1 GiB), the run-time
// cap on the bytes of any one node output (ExecutorOptions::max_tensor_bytes,
// 4 GiB) and of any work buffer a node allocates beyond its inputs' and
// outputs' sizes, refused before the memory is allocated, and the
// command-line flags that raise or lower them (--max-initializer-bytes,
// --max-tensor-bytes).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "nodes/pooling/fast/pool_fast_plan.hpp"
#include "nodes/pooling/pool_geometry.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/npy.hpp"
#include "support/cli_fixture.hpp"
#include "support/error_of.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

// A graph that only passes its input through, with one unused float32
// initializer `w` of `count` elements drawn by the `normal` rule.
std::string unused_initializer_graph(const std::string& count) {
  return R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1]}], "outputs": ["x"],
    "initializers": [{"name": "w", "dtype": "float32", "shape": [)" +
         count + R"(], "init": {"rule": "normal", "seed": 1}}], "nodes": []})";
}

const std::string kLimitNote =
    " (ReadOptions::max_initializer_bytes; on the command line --max-initializer-bytes)";

// Conv 3x3 padded by `pad` on every side of an 8x8 image: for pad 100000 the
// output is [N, 1, 200006, 200006], 160009600144 bytes of float32 for N = 1.
std::string padded_conv_graph(const std::string& batch, const std::string& pad = "100000") {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "pads",
    "inputs": [{"name": "x", "dtype": "float32", "shape": [)" +
         batch + R"(, 1, 8, 8]}], "outputs": ["y"],
    "initializers": [{"name": "w", "dtype": "float32", "shape": [1, 1, 3, 3], "init": {"rule": "ones"}}],
    "nodes": [{"op_type": "Conv", "name": "conv", "inputs": ["x", "w"], "specified_outputs_name": ["y"],
               "attributes": {"pads": [)" +
         pad + ", " + pad + ", " + pad + ", " + pad + R"(]}}]})";
}

const std::string kConvRefusal =
    "nodes[0] (conv): output 'y' of shape [1, 1, 200006, 200006] and dtype float32 would take "
    "160009600144 bytes, over the limit of 4294967296 bytes per tensor "
    "(ExecutorOptions::max_tensor_bytes; on the command line --max-tensor-bytes)";

TEST(ResourceLimits, DefaultsAreDocumented) {
  EXPECT_EQ(ReadOptions{}.max_initializer_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(kDefaultMaxInitializerBytes, std::uint64_t{1} << 30);
  EXPECT_EQ(ExecutorOptions{}.max_tensor_bytes, std::uint64_t{4} << 30);
  EXPECT_EQ(kDefaultMaxTensorBytes, std::uint64_t{4} << 30);
}

TEST(ResourceLimits, AHugeInitRuleIsRefusedByTheDefaultBudget) {
  // 4e9 bytes: within the former 4 GiB default, where `check` spent 65 s and 3.9 GB on it.
  try {
    parse_graph_def(unused_initializer_graph("1000000000"));
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    EXPECT_EQ(std::string(e.what()),
              "initializers[0] (w).shape: [1000000000] float32 needs 4000000000 bytes, over the "
              "document's limit of 1073741824 bytes for initializers" +
                  kLimitNote);
  }
}

TEST(ResourceLimits, ARaisedOrLoweredBudgetIsHonoured) {
  const std::string doc = unused_initializer_graph("1000");  // 4000 bytes
  EXPECT_THROW(load_graph(doc, ReadOptions{3999}), InvalidGraph);
  EXPECT_EQ(load_graph(doc, ReadOptions{4000}).def().initializers.at(0).value.numel(), 1000);
}

TEST(ResourceLimits, AHugeConvOutputIsRefusedBeforeTheRun) {
  // Batch dimension dynamic: the size is known only from the run's input.
  const Graph dynamic = load_graph(padded_conv_graph("null"));
  const Executor ex(dynamic);
  const TensorMap feeds{{"x", Tensor(DType::Float32, {1, 1, 8, 8})}};
  EXPECT_EQ(testing::error_of<RunError>([&] { ex.run(feeds); }), kConvRefusal);
  EXPECT_EQ(testing::error_of<RunError>([&] { ex.forward(feeds); }), kConvRefusal);
  // Every shape fixed by the graph: refused when the executor is made.
  const Graph fixed = load_graph(padded_conv_graph("1"));
  EXPECT_EQ(testing::error_of<RunError>([&] { (void)Executor(fixed); }), kConvRefusal);
  // A limit raised above the need lets the executor be made (it is not run).
  EXPECT_NO_THROW(Executor(fixed, ExecutorOptions{1, std::uint64_t{160009600144}}));
}

TEST(ResourceLimits, EveryNodeOutputIsCheckedAtItsBoundary) {
  // Relu of x [?, 4] float32: 48 bytes for a [3, 4] run.
  const Graph g = load_graph(R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [null, 4]}], "outputs": ["relu"],
    "nodes": [{"op_type": "Relu", "name": "relu", "inputs": ["x"]}]})");
  const TensorMap feeds{{"x", Tensor(DType::Float32, {3, 4})}};
  EXPECT_NO_THROW(Executor(g, ExecutorOptions{1, 48}).run(feeds));
  EXPECT_EQ(testing::error_of<RunError>([&] { Executor(g, ExecutorOptions{1, 47}).run(feeds); }),
            "nodes[0] (relu): output 'relu' of shape [3, 4] and dtype float32 would take 48 bytes, over "
            "the limit of 47 bytes per tensor (ExecutorOptions::max_tensor_bytes; on the command line "
            "--max-tensor-bytes)");
  // An empty tensor takes nothing.
  EXPECT_NO_THROW(Executor(g, ExecutorOptions{1, 0}).run({{"x", Tensor(DType::Float32, {0, 4})}}));
}

TEST(ResourceLimits, AnOutputShapeFedAtRunTimeIsCheckedBeforeAllocation) {
  // MaxUnpool's output_shape is a graph input: shape inference at load cannot
  // know the size, the run's values can (40 GB of float32 asked for here).
  const Graph g = load_graph(R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 1, 1]},
               {"name": "i", "dtype": "int64", "shape": [1, 1, 1, 1]},
               {"name": "s", "dtype": "int64", "shape": [4]}], "outputs": ["u"],
    "nodes": [{"op_type": "MaxUnpool", "name": "u", "inputs": ["x", "i", "s"],
               "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]}}]})");
  const TensorMap feeds{{"x", Tensor(DType::Float32, {1, 1, 1, 1})},
                        {"i", Tensor(DType::Int64, {1, 1, 1, 1})},
                        {"s", Tensor::from<std::int64_t>({4}, {1, 1, 100000, 100000})}};
  EXPECT_EQ(testing::error_of<RunError>([&] { Executor(g).run(feeds); }),
            "nodes[0] (u): output 'u' of shape [1, 1, 100000, 100000] and dtype float32 would take "
            "40000000000 bytes, over the limit of 4294967296 bytes per tensor "
            "(ExecutorOptions::max_tensor_bytes; on the command line --max-tensor-bytes)");
}

// Conv with a 1x1 kernel over x [1, C, 1, 1] padded by `pad` on every side:
// the output [1, 1, 2 pad + 1, 2 pad + 1] is small beside the im2col buffer
// [C, (2 pad + 1)^2].
std::string padded_channels_graph(int channels, int pad, bool trainable_w) {
  const std::string c = std::to_string(channels);
  const std::string p = std::to_string(pad);
  return R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1, )" + c + R"(, 1, 1]}], "outputs": ["y"],
    "initializers": [{"name": "w", "dtype": "float32", "shape": [1, )" + c +
         R"(, 1, 1], "init": {"rule": "ones"}, "trainable": )" + (trainable_w ? "true" : "false") + R"(}],
    "nodes": [{"op_type": "Conv", "name": "conv", "inputs": ["x", "w"], "specified_outputs_name": ["y"],
               "attributes": {"pads": [)" + p + ", " + p + ", " + p + ", " + p + R"(]}}]})";
}

std::string over_limit(const std::string& what, const std::string& shape, const std::string& dtype,
                       const std::string& bytes, const std::string& limit) {
  return "nodes[0] (conv): " + what + " of shape " + shape + " and dtype " + dtype + " would take " + bytes +
         " bytes, over the limit of " + limit +
         " bytes per tensor (ExecutorOptions::max_tensor_bytes; on the command line --max-tensor-bytes)";
}

TEST(ResourceLimits, ConvIm2colBuffersAreRefusedBeforeAllocation) {
  // x [1, 100, 1, 1], pads 1000: the output [1, 1, 2001, 2001] takes 16016004
  // bytes, the row table of im2col [1, 2001] of int64 16008, the columns
  // 100 x 4004001 x 4 = 1601600400 (1000 channels would want 16 GB under the
  // default limit).
  const Graph g = load_graph(padded_channels_graph(100, 1000, true));
  const TensorMap feeds{{"x", Tensor(DType::Float32, {1, 100, 1, 1})}};
  for (const std::uint64_t limit : {17000000, 40000000}) {
    const std::string columns =
        over_limit("im2col buffer", "[100, 4004001]", "float32", "1601600400", std::to_string(limit));
    const Executor fits_output(g, ExecutorOptions{1, limit});
    EXPECT_EQ(testing::error_of<RunError>([&] { fits_output.run(feeds); }), columns);
    EXPECT_EQ(testing::error_of<RunError>([&] { fits_output.forward(feeds); }), columns);
  }
}

Tensor ones(const Shape& shape) {
  const std::vector<float> values(static_cast<std::size_t>(element_count(shape)), 1.0f);
  return Tensor::from<float>(shape, values);
}

TEST(ResourceLimits, ConvBackwardBuffersAreRefusedBeforeAllocation) {
  // x [1, 10, 1, 1], pads 100: output [1, 1, 201, 201] (161604 bytes), tap
  // table [1, 40401] int64 (323208), columns [10, 40401] float32 (1616040).
  for (const bool trainable_w : {true, false}) {
    const Graph g = load_graph(padded_channels_graph(10, 100, trainable_w));
    const TensorMap feeds{{"x", ones({1, 10, 1, 1})}};
    TrainingRun run = Executor(g).forward(feeds);  // the default limit: every buffer fits
    const TensorMap seed{{"y", ones({1, 1, 201, 201})}};
    // Forward's limit does not matter: backward checks against its own executor's.
    const Executor small(g, ExecutorOptions{1, 1000000});
    // dW needs the columns of x; dX alone (w not trainable) needs their gradient.
    EXPECT_EQ(testing::error_of<RunError>([&] { small.backward(run, seed); }),
              over_limit(trainable_w ? "im2col buffer" : "im2col gradient buffer", "[10, 40401]", "float32",
                         "1616040", "1000000"))
        << trainable_w;
  }
  // Under a limit the columns fit, the gradients are those of y = sum_c x_c w_c
  // at the one position that reads x (all others read the padding): dx_c =
  // w_c = 1, dw_c = x_c = 1.
  const Graph g = load_graph(padded_channels_graph(10, 100, true));
  const Executor fits(g, ExecutorOptions{1, 1616040});
  TrainingRun run = fits.forward({{"x", ones({1, 10, 1, 1})}});
  const TensorMap grads =
      fits.backward(run, {{"y", ones({1, 1, 201, 201})}});
  for (const char* name : {"x", "w"})
    for (std::int64_t c = 0; c < 10; ++c) EXPECT_EQ(grads.at(name).data<float>()[c], 1.0f) << name << c;
}

TEST(ResourceLimits, MaxPoolSavedArgmaxIsRefusedInTrainingMode) {
  // float16 x [1, 1, 4, 4], kernel 1x1: Y takes 32 bytes, the argmax saved for
  // backward (int32 offsets) 64.
  const Graph g = load_graph(R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float16", "shape": [1, 1, 4, 4]}], "outputs": ["y"],
    "nodes": [{"op_type": "MaxPool", "name": "pool", "inputs": ["x"], "specified_outputs_name": ["y"],
               "attributes": {"kernel_shape": [1, 1]}}]})");
  const TensorMap feeds{{"x", Tensor(DType::Float16, {1, 1, 4, 4})}};
  const Executor small(g, ExecutorOptions{1, 32});
  EXPECT_NO_THROW(small.run(feeds));  // inference saves nothing
  EXPECT_EQ(testing::error_of<RunError>([&] { small.forward(feeds); }),
            "nodes[0] (pool): argmax saved for backward of shape [1, 1, 4, 4] and dtype int32 would take "
            "64 bytes, over the limit of 32 bytes per tensor (ExecutorOptions::max_tensor_bytes; on the "
            "command line --max-tensor-bytes)");
  EXPECT_NO_THROW(Executor(g, ExecutorOptions{1, 64}).forward(feeds));
}

TEST(ResourceLimits, PoolingScratchStaysWithinThePlanes) {
  // x [1, 1, 10000, 1], kernel [10000, 1000], pads 999 on axis 3: the output
  // is [1, 1, 1, 1000], but the fast kernels' stages after reducing axis 3
  // held the 10000 rows times 1000 outputs (10^7 values per thread; 10^9 with
  // a kernel of 100000). Such geometries go to the reference kernels.
  Attributes attrs;
  attrs["kernel_shape"] = std::vector<std::int64_t>{10000, 1000};
  attrs["pads"] = std::vector<std::int64_t>{0, 999, 0, 999};
  const PoolGeometry wide = pool_geometry(checked_pool_attributes(PoolKind::Max, attrs), {1, 1, 10000, 1});
  fast::Plan plan;
  for (const fast::Reduce reduce : {fast::Reduce::Max, fast::Reduce::Average})
    EXPECT_FALSE(fast::make_plan(wide, reduce, false, 0, 1, plan)) << plan.forward_scratch;
  // LeNet's 2x2 pooling keeps its fast plan.
  attrs["kernel_shape"] = std::vector<std::int64_t>{2, 2};
  attrs["strides"] = std::vector<std::int64_t>{2, 2};
  attrs["pads"] = std::vector<std::int64_t>{0, 0, 0, 0};
  const PoolGeometry lenet = pool_geometry(checked_pool_attributes(PoolKind::Max, attrs), {64, 6, 28, 28});
  EXPECT_TRUE(fast::make_plan(lenet, fast::Reduce::Max, false, 0, 2, plan));
  // The node gives the windows' values: every window holds the one column of
  // ones, so its maximum and its average over the valid elements are 1.
  for (const char* op : {"MaxPool", "AveragePool"}) {
    const Graph g = load_graph(std::string(R"({"format": "nodeflow.graph", "version": 1,
      "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 10000, 1]}], "outputs": ["y"],
      "nodes": [{"op_type": ")") + op + R"(", "name": "pool", "inputs": ["x"], "specified_outputs_name": ["y"],
                 "attributes": {"kernel_shape": [10000, 1000], "pads": [0, 999, 0, 999]}}]})");
    const Tensor y = Executor(g).run({{"x", ones({1, 1, 10000, 1})}}).at("y");
    ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 1000})) << op;
    for (const float v : y.values<float>()) ASSERT_EQ(v, 1.0f) << op;
  }
}

// Peak resident memory of this process so far, in KiB.
std::int64_t peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(ResourceLimits, ReferencePoolingHoldsOneWindowAtATime) {
  // MaxPool of x [1, 1, 10000] (40 KB), kernel 10000, pads 9999: 19999 windows
  // of up to 10000 taps. The fast plan refuses its 10^8 tap-table entries; the
  // reference kernels listed every window's input coordinates, 800 MB of
  // int64, and now keep a start and a count per window. (A peak reached by an
  // earlier test in this process can hide the growth, never invent it.)
  const Graph g = load_graph(R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 10000]}], "outputs": ["y"],
    "nodes": [{"op_type": "MaxPool", "name": "pool", "inputs": ["x"], "specified_outputs_name": ["y"],
               "attributes": {"kernel_shape": [10000], "pads": [9999, 9999]}}]})");
  const std::int64_t before = peak_rss_kib();
  const Tensor y = Executor(g).run({{"x", ones({1, 1, 10000})}}).at("y");
  EXPECT_LT(peak_rss_kib() - before, 100 * 1024);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 19999}));
  for (const float v : y.values<float>()) ASSERT_EQ(v, 1.0f);  // every window holds ones only
}

// ---------------------------------------------------------------------------
// The command line.

using testing::kFailure;
using testing::kUsage;

class ResourceLimitFlags : public testing::CliTest {
 protected:
  ResourceLimitFlags() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-limits") {}

  static void expect_error(const testing::ProcessResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, kFailure) << r.describe();
    EXPECT_EQ(r.err, "error: " + message + "\n") << r.describe();
  }
};

TEST_F(ResourceLimitFlags, MaxInitializerBytesOnEveryVerbThatReadsAGraph) {
  write_text("huge.json", unused_initializer_graph("1000000000"));
  write_text("small.json", unused_initializer_graph("1000"));
  write_npy(dir() / "x.npy", Tensor(DType::Float32, {1}));
  expect_error(nodeflow({"check", "huge.json"}),
               "initializers[0] (w).shape: [1000000000] float32 needs 4000000000 bytes, over the "
               "document's limit of 1073741824 bytes for initializers" +
                   kLimitNote);
  const std::string small_refused =
      "initializers[0] (w).shape: [1000] float32 needs 4000 bytes, over the document's limit of "
      "3999 bytes for initializers" +
      kLimitNote;
  const std::vector<std::vector<std::string>> verbs{
      {"check", "small.json"},
      {"convert", "small.json", "out.json"},
      {"run", "small.json", "-i", "x=x.npy", "-o", "out"},
      {"backward", "small.json", "-i", "x=x.npy", "-o", "out"}};
  for (std::vector<std::string> args : verbs) {
    args.insert(args.end(), {"--max-initializer-bytes", "3999"});
    expect_error(nodeflow(args), small_refused);
    args.back() = "4000";
    EXPECT_EQ(nodeflow(args).exit_code, 0) << args[0];
    args.back() = "4kb";  // units: kb = 1000, kib = 1024
    EXPECT_EQ(nodeflow(args).exit_code, 0) << args[0];
  }
  for (const char* bad : {"-1", "lots", "1.5.3", "1e3", ""}) {
    const testing::ProcessResult r = nodeflow({"check", "small.json", "--max-initializer-bytes", bad});
    EXPECT_EQ(r.exit_code, kUsage) << bad << "\n" << r.describe();
    EXPECT_NE(r.err.find("--max-initializer-bytes"), std::string::npos) << r.describe();
  }
}

TEST_F(ResourceLimitFlags, MaxTensorBytesOnRunAndBackward) {
  write_text("pads.json", padded_conv_graph("null"));
  // Pads 1: the output is 8x8 too, 256 bytes; the largest buffer is Conv's
  // im2col columns, 9 taps x 64 positions of float32, 2304 bytes.
  write_text("pad1.json", padded_conv_graph("null", "1"));
  write_npy(dir() / "x.npy", Tensor(DType::Float32, {1, 1, 8, 8}));
  for (const char* verb : {"run", "backward"}) {
    expect_error(nodeflow({verb, "pads.json", "-i", "x=x.npy", "-o", "out"}), kConvRefusal);
    for (const char* enough : {"2304", "3KiB"})
      EXPECT_EQ(nodeflow({verb, "pad1.json", "-i", "x=x.npy", "-o", "out", "--max-tensor-bytes", enough})
                    .exit_code,
                0)
          << verb << " " << enough;
    expect_error(nodeflow({verb, "pad1.json", "-i", "x=x.npy", "-o", "out2", "--max-tensor-bytes", "255"}),
                 "nodes[0] (conv): output 'y' of shape [1, 1, 8, 8] and dtype float32 would take 256 "
                 "bytes, over the limit of 255 bytes per tensor (ExecutorOptions::max_tensor_bytes; on "
                 "the command line --max-tensor-bytes)");
    expect_error(nodeflow({verb, "pad1.json", "-i", "x=x.npy", "-o", "out3", "--max-tensor-bytes", "2303"}),
                 "nodes[0] (conv): im2col buffer of shape [9, 64] and dtype float32 would take 2304 "
                 "bytes, over the limit of 2303 bytes per tensor (ExecutorOptions::max_tensor_bytes; on "
                 "the command line --max-tensor-bytes)");
  }
}

TEST_F(ResourceLimitFlags, TrainAndEvalTakeBothLimits) {
  testing::write_blank_digits(dir() / "digits");
  // Flatten -> Gemm: W float32 [10, 784] and B [10], 31400 bytes of initializers.
  write_text("g.json", testing::linear_classifier_json(R"("init": {"rule": "zeros"})"));
  write_text("c.json", R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 1, "log_every": 0,
                           "batch_size": 64, "eval_batch_size": 100})");
  const std::vector<std::string> train{"train", "g.json", "--config", "c.json", "--data", "mnist:digits", "-o", "out/m.json"};
  const std::vector<std::string> eval{"eval", "g.json", "--config", "c.json", "--data", "mnist:digits"};
  for (const std::vector<std::string>& verb : {train, eval}) {
    std::vector<std::string> args = verb;
    args.insert(args.end(), {"--max-initializer-bytes", "31399"});
    const testing::ProcessResult r = nodeflow(args);
    EXPECT_EQ(r.exit_code, kFailure) << r.describe();
    EXPECT_NE(r.err.find("over the document's limit of 31399 bytes for initializers"), std::string::npos)
        << r.describe();
    // The flattened batch: [64, 784] (train) or [100, 784] (eval) float32.
    args = verb;
    args.insert(args.end(), {"--max-initializer-bytes", "31400", "--max-tensor-bytes", "200000"});
    const testing::ProcessResult small = nodeflow(args);
    EXPECT_EQ(small.exit_code, kFailure) << small.describe();
    const std::string batch = verb[0] == "train" ? "[64, 784]" : "[100, 784]";
    const std::string bytes = verb[0] == "train" ? "200704" : "313600";
    EXPECT_NE(small.err.find("of shape " + batch + " and dtype float32 would take " + bytes +
                             " bytes, over the limit of 200000 bytes per tensor"),
              std::string::npos)
        << small.describe();
    if (verb[0] == "eval") {
      args.back() = "400000";
      const testing::ProcessResult enough = nodeflow(args);
      EXPECT_EQ(enough.exit_code, 0) << enough.describe();
    }
  }
}

}  // namespace
}  // namespace nodeflow
