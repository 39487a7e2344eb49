// The ONNX opset history (serialization/onnx/opset_history.hpp): old forms of
// each op upgrade to the node nodeflow registers, what cannot be mapped is
// refused naming node, op, opset and attribute, and lowest_opset picks the
// opset the writer states.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "serialization/onnx/opset_history.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using onnx_import::OnnxNode;
using testing::error_of;

/// Collects the constants a node's upgrade adds.
struct Constants {
  std::map<std::string, Tensor> added;
  onnx_import::AddConstant adder() {
    return [this](const std::string& hint, Tensor value) {
      std::string name = hint + "#" + std::to_string(added.size());
      added.emplace(name, std::move(value));
      return name;
    };
  }
};

OnnxNode node(std::string op, Attributes attrs, std::vector<std::string> inputs = {"x"},
              std::vector<std::string> outputs = {"y"}) {
  return {std::move(op), "n1", std::move(inputs), std::move(outputs), std::move(attrs)};
}

OnnxNode upgraded(OnnxNode n, int opset, Constants& c) {
  onnx_import::upgrade_node(n, opset, c.adder());
  return n;
}

std::vector<std::int64_t> ints_of(const Tensor& t) {
  auto v = t.values<std::int64_t>();
  return {v.begin(), v.end()};
}

using Ints = std::vector<std::int64_t>;

TEST(OpsetHistory, PoolingAttributesOutsideTheirOpsetAreRefused) {
  Constants c;
  const Attributes k = {{"kernel_shape", Ints{2, 2}}};
  auto refused = [&](const std::string& op, const std::string& attr, AttrValue v, int opset) {
    Attributes a = k;
    a[attr] = std::move(v);
    return error_of<InvalidAttribute>([&] { upgraded(node(op, a), opset, c); });
  };
  EXPECT_EQ(refused("AveragePool", "ceil_mode", std::int64_t{1}, 9),
            "node 'n1' (AveragePool, opset 9): attribute 'ceil_mode' exists from opset 10");
  EXPECT_EQ(refused("AveragePool", "count_include_pad", std::int64_t{1}, 6),
            "node 'n1' (AveragePool, opset 6): attribute 'count_include_pad' exists from opset 7");
  EXPECT_EQ(refused("AveragePool", "dilations", Ints{1, 1}, 18),
            "node 'n1' (AveragePool, opset 18): attribute 'dilations' exists from opset 19");
  EXPECT_EQ(refused("MaxPool", "storage_order", std::int64_t{0}, 7),
            "node 'n1' (MaxPool, opset 7): attribute 'storage_order' exists from opset 8");
  EXPECT_EQ(refused("MaxPool", "dilations", Ints{1, 1}, 9),
            "node 'n1' (MaxPool, opset 9): attribute 'dilations' exists from opset 10");
  EXPECT_EQ(refused("MaxPool", "ceil_mode", std::int64_t{1}, 8),
            "node 'n1' (MaxPool, opset 8): attribute 'ceil_mode' exists from opset 10");
  EXPECT_EQ(refused("LpPool", "ceil_mode", std::int64_t{1}, 17),
            "node 'n1' (LpPool, opset 17): attribute 'ceil_mode' exists from opset 18");
  EXPECT_EQ(refused("LpPool", "dilations", Ints{1, 1}, 11),
            "node 'n1' (LpPool, opset 11): attribute 'dilations' exists from opset 18");
  EXPECT_EQ(refused("AveragePool", "foo", std::int64_t{1}, 22),
            "node 'n1' (AveragePool, opset 22): unknown attribute 'foo' (known at opset 22: auto_pad, "
            "ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides)");
  // The attribute exists at the opset, with another kind.
  EXPECT_EQ(refused("LpPool", "p", 2.0, 2),
            "node 'n1' (LpPool, opset 2): attribute 'p' must be INT at opset 2, got FLOAT");
  EXPECT_EQ(refused("LpPool", "p", std::int64_t{2}, 1),
            "node 'n1' (LpPool, opset 1): attribute 'p' must be FLOAT at opset 1, got INT");
}

TEST(OpsetHistory, PoolingNodesWithinTheirOpsetPassUnchanged) {
  Constants c;
  const Attributes a = {{"kernel_shape", Ints{3}}, {"ceil_mode", std::int64_t{1}},
                        {"count_include_pad", std::int64_t{1}}, {"pads", Ints{1, 1}}};
  for (int opset : {10, 11, 19, 22}) {
    SCOPED_TRACE(opset);
    OnnxNode n = upgraded(node("AveragePool", a), opset, c);
    EXPECT_EQ(n.attributes, a);
    EXPECT_EQ(n.inputs, std::vector<std::string>{"x"});
  }
  OnnxNode m = upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", "i"}), 8, c);
  EXPECT_EQ(m.outputs, (std::vector<std::string>{"y", "i"}));
  EXPECT_TRUE(c.added.empty());
}

TEST(OpsetHistory, MaxPoolBeforeOpset8HasNoIndicesOutput) {
  Constants c;
  EXPECT_EQ(error_of<InvalidGraph>(
                [&] { upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", "i"}), 7, c); }),
            "node 'n1' (MaxPool, opset 7): has 2 outputs; MaxPool at opset 7 has at most 1");
  // An absent optional output ("") is not counted.
  EXPECT_NO_THROW(upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", ""}), 7, c));
}

TEST(OpsetHistory, LpPool1TakesAFloatP) {
  Constants c;
  OnnxNode n = upgraded(node("LpPool", {{"kernel_shape", Ints{2}}, {"p", 3.0}}), 1, c);
  EXPECT_EQ(n.attributes.at("p"), AttrValue(std::int64_t{3}));
  OnnxNode g = upgraded(node("GlobalLpPool", {{"p", 1.0}}), 1, c);
  EXPECT_EQ(g.attributes.at("p"), AttrValue(std::int64_t{1}));
  EXPECT_EQ(error_of<InvalidAttribute>([&] { upgraded(node("LpPool", {{"kernel_shape", Ints{2}}, {"p", 2.5}}), 1, c); }),
            "node 'n1' (LpPool, opset 1): attribute 'p' = 2.5 is not supported: p must be an integer "
            "(LpPool from opset 2 and the library take an INT p)");
  // Absent, LpPool-1's default p = 2.0 is the INT default 2.
  EXPECT_EQ(upgraded(node("LpPool", {{"kernel_shape", Ints{2}}}), 1, c).attributes.count("p"), 0u);
}

TEST(OpsetHistory, OpsThatDidNotExistOrThatTheLibraryLacksAreRefused) {
  Constants c;
  EXPECT_EQ(error_of<InvalidGraph>([&] { upgraded(node("ConvInteger", {}), 10, c); }),
            "node 'n1' (ConvInteger, opset 10): op not supported");
  EXPECT_EQ(error_of<InvalidGraph>([&] { upgraded(node("MaxUnpool", {{"kernel_shape", Ints{2}}}, {"x", "i"}), 8, c); }),
            "node 'n1' (MaxUnpool, opset 8): op not supported at opset 8 (MaxUnpool exists from opset 9)");
  EXPECT_EQ(error_of<InvalidGraph>([&] { upgraded(node("Relu", {}), 23, c); }),
            "node 'n1' (Relu, opset 23): opset 23 is not read (the default-domain opsets read are 1 to 22)");
  EXPECT_EQ(error_of<InvalidGraph>([&] { upgraded(node("Relu", {}), 0, c); }),
            "node 'n1' (Relu, opset 0): opset 0 is not read (the default-domain opsets read are 1 to 22)");
}

TEST(OpsetHistory, SqueezeAndUnsqueezeAxesMoveToAnInputBefore13) {
  for (const char* op : {"Squeeze", "Unsqueeze"}) {
    SCOPED_TRACE(op);
    for (int opset : {1, 11, 12}) {
      Constants c;
      OnnxNode n = upgraded(node(op, {{"axes", Ints{0, -1}}}), opset, c);
      EXPECT_TRUE(n.attributes.empty());
      ASSERT_EQ(n.inputs.size(), 2u);
      EXPECT_EQ(n.inputs[0], "x");
      ASSERT_EQ(c.added.count(n.inputs[1]), 1u);
      const Tensor& axes = c.added.at(n.inputs[1]);
      EXPECT_EQ(axes.dtype(), DType::Int64);
      EXPECT_EQ(axes.shape(), Shape{2});
      EXPECT_EQ(ints_of(axes), (Ints{0, -1}));
    }
    Constants c;
    EXPECT_EQ(error_of<InvalidAttribute>([&] { upgraded(node(op, {{"axes", Ints{0}}}, {"x", "a"}), 13, c); }),
              std::string("node 'n1' (") + op + ", opset 13): attribute 'axes' was removed in opset 13");
    EXPECT_EQ(upgraded(node(op, {}, {"x", "a"}), 13, c).inputs, (std::vector<std::string>{"x", "a"}));
    EXPECT_EQ(error_of<InvalidGraph>([&] { upgraded(node(op, {{"axes", Ints{0}}}, {"x", "a"}), 11, c); }),
              std::string("node 'n1' (") + op + ", opset 11): has 2 inputs; " + op +
                  " at opset 11 takes at most 1");
  }
  // Squeeze without axes squeezes every 1, as the opset-13 form without the input.
  Constants c;
  OnnxNode s = upgraded(node("Squeeze", {}), 11, c);
  EXPECT_EQ(s.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(error_of<InvalidAttribute>([&] { upgraded(node("Unsqueeze", {}), 11, c); }),
            "node 'n1' (Unsqueeze, opset 11): attribute 'axes' is required at opset 11");
}

TEST(OpsetHistory, LowestOpsetOfThePoolingOps) {
  auto lowest = [](std::string op, Attributes a, std::vector<DType> dtypes = {DType::Float32}) {
    NodeDef def;
    def.op_type = std::move(op);
    def.name = "n";
    def.inputs = {"x"};
    def.attributes = std::move(a);
    return onnx_import::lowest_opset(def, dtypes);
  };
  EXPECT_EQ(lowest("AveragePool", {{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}}), 19);
  EXPECT_EQ(lowest("AveragePool", {{"kernel_shape", Ints{2}}}, {DType::BFloat16}), 22);
  EXPECT_EQ(lowest("MaxPool", {{"kernel_shape", Ints{2}}}), 19);
  EXPECT_EQ(lowest("GlobalLpPool", {{"p", std::int64_t{2}}}, {DType::BFloat16}), 22);
  EXPECT_EQ(lowest("Squeeze", {}), 19);
}

TEST(OpsetHistory, VersionsAreAscendingAndEndAtTheRegisteredOne) {
  const OpRegistry& registry = OpRegistry::global();
  for (const std::string& op : onnx_import::history_ops()) {
    SCOPED_TRACE(op);
    const auto versions = onnx_import::op_versions(op);
    ASSERT_FALSE(versions.empty());
    for (std::size_t i = 1; i < versions.size(); ++i) EXPECT_LT(versions[i - 1].since, versions[i].since);
    const OpSchema* schema = registry.find(op);
    ASSERT_NE(schema, nullptr);
    // The newest version's attributes are the registered op's.
    std::vector<std::string> table, registered;
    for (const auto& a : versions.back().attributes) table.push_back(a.name);
    for (const auto& a : schema->attributes) registered.push_back(a.name);
    std::sort(registered.begin(), registered.end());
    EXPECT_EQ(table, registered);
  }
}

}  // namespace
}  // namespace nodeflow
