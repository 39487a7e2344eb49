// The reductions in graphs: shape inference at load (constant axes, dynamic
// dimensions, rank 0), refusals at load naming the node, the input and the
// values, the schema fields editors read, and a run through the executor
// (forward and backward) down to a rank-0 loss.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "core/graph_builder.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::i64;

TEST(ReduceGraph, InfersShapesFromConstantAxes) {
  GraphBuilder b("g");
  b.add_input("x", DType::Float32, {kDynamicDim, 3, 4});
  b.add_initializer("axes", i64({2}, {1, -1}));
  b.add_initializer("none", Tensor(DType::Int64, {0}));
  b.add_node("ReduceSum", "keep", {"x", "axes"});
  b.add_node("ReduceMean", "drop", {"x", "axes"}, {{"keepdims", std::int64_t{0}}});
  b.add_node("ReduceMax", "all", {"x"}, {{"keepdims", std::int64_t{0}}});
  b.add_node("ReduceSumSquare", "noop", {"x", "none"}, {{"noop_with_empty_axes", std::int64_t{1}}});
  b.add_node("ArgMax", "am", {"x"}, {{"axis", std::int64_t{-2}}, {"keepdims", std::int64_t{0}}});
  EXPECT_EQ(b.info("keep").shape, (Shape{kDynamicDim, 1, 1}));
  EXPECT_EQ(b.info("drop").shape, (Shape{kDynamicDim}));
  EXPECT_EQ(b.info("all").shape, Shape{});
  EXPECT_EQ(b.info("noop").shape, (Shape{kDynamicDim, 3, 4}));
  EXPECT_EQ(b.info("am").shape, (Shape{kDynamicDim, 4}));
  EXPECT_EQ(b.info("am").dtype, DType::Int64);
}

TEST(ReduceGraph, RefusesBadAxesAtLoadNamingTheNode) {
  GraphBuilder b("g");
  b.add_input("x", DType::Float32, {2, 3});
  b.add_input("runtime_axes", DType::Int64, {1});
  b.add_initializer("far", i64({1}, {2}));
  b.add_initializer("twice", i64({2}, {0, -2}));
  b.add_initializer("matrix", i64({1, 1}, {0}));
  b.add_initializer("floats", Tensor::from<float>({1}, {0.0f}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] { b.add_node("ReduceSum", "r1", {"x", "far"}); }),
            "nodes[0] (r1): input 1 (axes): axes[0] = 2 is outside [-2, 1] for input rank 2 "
            "(inputs: 'x' float32 [2, 3], 'far' int64 [1])");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { b.add_node("ReduceL2", "r2", {"x", "twice"}); }),
            "nodes[0] (r2): input 1 (axes): axes[1] = -2 repeats axis 0 (axes[0] = 0) "
            "(inputs: 'x' float32 [2, 3], 'twice' int64 [2])");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { b.add_node("ReduceMin", "r3", {"x", "matrix"}); }),
            "nodes[0] (r3): input 1 (axes) has shape [1, 1]; ReduceMin needs a 1-D int64 tensor "
            "(inputs: 'x' float32 [2, 3], 'matrix' int64 [1, 1])");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { b.add_node("ReduceMin", "r4", {"x", "floats"}); }),
            "nodes[0] (r4): ReduceMin needs dtype int64 for input 1 (axes), got float32 "
            "(inputs: 'x' float32 [2, 3], 'floats' float32 [1])");
  const std::string runtime = error_of<InvalidGraph>([&] { b.add_node("ReduceSum", "r5", {"x", "runtime_axes"}); });
  EXPECT_NE(runtime.find("r5"), std::string::npos) << runtime;
  EXPECT_NE(runtime.find("runtime_axes"), std::string::npos) << runtime;
  EXPECT_EQ(error_of<InvalidAttribute>([&] { b.add_node("ArgMax", "a1", {"x"}, {{"axis", std::int64_t{2}}}); }),
            "nodes[0] (a1).attributes.axis: expected an integer in [-2, 1] for input rank 2, got 2");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { b.add_node("ReduceSum", "r6", {"x"}, {{"keepdims", std::int64_t{2}}}); }),
            "nodes[0] (r6).attributes.keepdims: expected an integer 0 or 1, got 2");
}

TEST(ReduceGraph, RefusesDtypesOnnxDoesNotAllow) {
  GraphBuilder b("g");
  b.add_input("x", DType::UInt8, {2, 3});
  EXPECT_EQ(error_of<UnsupportedDType>([&] { b.add_node("ReduceProd", "p", {"x"}); }),
            "nodes[0] (p): ReduceProd does not take dtype uint8 (input 0 (data); allowed: float32, float64, "
            "float16, bfloat16, int64) (inputs: 'x' uint8 [2, 3])");
  b.add_node("ReduceMax", "m", {"x"});
  b.add_node("ArgMax", "am", {"x"});
  EXPECT_EQ(b.info("m").dtype, DType::UInt8);
}

TEST(ReduceGraph, SchemasSayWhatEditorsNeed) {
  const OpRegistry& r = OpRegistry::global();
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSumExp"}) {
    const OpSchema* s = r.find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->min_inputs, 1u) << op;
    ASSERT_EQ(s->inputs.size(), 2u) << op;
    EXPECT_TRUE(s->inputs[1].constant) << op;
    EXPECT_TRUE(receives_gradient(s->inputs[0])) << op;
    ASSERT_NE(find_spec(s->attributes, "keepdims"), nullptr);
    EXPECT_EQ(std::get<std::int64_t>(*find_spec(s->attributes, "keepdims")->default_value), 1);
    EXPECT_EQ(std::get<std::int64_t>(*find_spec(s->attributes, "noop_with_empty_axes")->default_value), 0);
  }
  EXPECT_EQ(r.find("ReduceSum")->definition, "ONNX ReduceSum-13");
  EXPECT_EQ(r.find("ReduceMax")->definition, "ONNX ReduceMax-20");
  EXPECT_EQ(r.find("ReduceLogSumExp")->definition, "ONNX ReduceLogSumExp-18");
  const OpSchema* argmax = r.find("ArgMax");
  ASSERT_NE(argmax, nullptr);
  EXPECT_FALSE(receives_gradient(argmax->inputs[0]));
  EXPECT_EQ(argmax->outputs[0].dtypes, std::vector<DType>{DType::Int64});
}

TEST(ReduceGraph, TrainsThroughARankZeroLoss) {
  // loss = ReduceMean over every axis of ReduceSumSquare(w, axis 0), a
  // rank-0 tensor; d loss / dw = 2 w / 3.
  GraphBuilder b("g");
  b.add_initializer("w", testing::f64({2, 3}, {1, -2, 3, 0.5, 4, -1}), true);
  b.add_initializer("axes", i64({1}, {0}));
  b.add_node("ReduceSumSquare", "sq", {"w", "axes"});
  b.add_node("ReduceMean", "loss", {"sq"}, {{"keepdims", std::int64_t{0}}});
  b.add_output("loss");
  const Graph g = b.build();
  Executor ex(g);
  auto run = ex.forward({});
  ASSERT_EQ(run.outputs().at("loss").shape(), Shape{});
  EXPECT_DOUBLE_EQ(as_doubles(run.outputs().at("loss"))[0], (1 + 4 + 9 + 0.25 + 16 + 1) / 3.0);
  const auto grads = ex.backward(run, {{"loss", Tensor::from<double>({}, {1.0})}});
  const auto want = std::vector<double>{2 / 3.0, -4 / 3.0, 2.0, 1 / 3.0, 8 / 3.0, -2 / 3.0};
  const auto got = as_doubles(grads.at("w"));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]);
}

}  // namespace
}  // namespace nodeflow
