// check_graph and locate_error (serialization/graph_check.hpp): what `nodeflow
// check` and the server's /api/check report.
#include <gtest/gtest.h>

#include "serialization/graph_check.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow {
namespace {

void expect_location(const std::string& message, const std::string& path, const std::string& node,
                     const std::string& attribute) {
  const ErrorLocation where = locate_error(message);
  EXPECT_EQ(where.path, path) << message;
  EXPECT_EQ(where.node, node) << message;
  EXPECT_EQ(where.attribute, attribute) << message;
}

TEST(LocateError, PathNodeAndAttributeOfTheReadersMessages) {
  expect_location("nodes[3] (pool1).attributes.kernel_shape: expected a list of positive integers, got [2, 0]",
                  "nodes[3].attributes.kernel_shape", "pool1", "kernel_shape");
  expect_location("nodes[0] (a).inputs[1] (x): tensor 'x' is not produced", "nodes[0].inputs[1]", "a", "");
  expect_location("nodes[2].name: node name is empty", "nodes[2].name", "", "");
  expect_location("initializers[0] (w).shape: dimension -1 is negative", "initializers[0].shape", "", "");
  expect_location("inputs[1] (x): duplicate", "inputs[1]", "", "");
  expect_location("format: expected 'nodeflow.graph', got 'x'", "format", "", "");
  expect_location("nodes: the graph has a cycle through a, b", "nodes", "", "");
  // A name holding ")" is cut at the ")" that a path goes on after.
  expect_location("nodes[1] (f(x)).attributes.axis: out of range", "nodes[1].attributes.axis", "f(x)", "axis");
  expect_location("nodes[1] (pool 1): Conv takes 2 inputs", "nodes[1]", "pool 1", "");
}

TEST(LocateError, FreeTextHasNoLocation) {
  for (const char* message : {"invalid JSON: parse error at line 1, column 2", "tensor 'x' is not in the graph",
                              "nodesx: y", "outputs and more", ""})
    expect_location(message, "", "", "");
}

TEST(CheckGraph, AValidGraphGivesItsTensorsAndParameterCounts) {
  const std::string doc = R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [null, 3]}], "outputs": ["y"],
    "initializers": [{"name": "w", "dtype": "float32", "shape": [3, 2], "data": [1, 2, 3, 4, 5, 6], "trainable": true},
                     {"name": "b", "dtype": "float32", "shape": [2], "data": [0, 0]}],
    "nodes": [{"op_type": "MatMul", "name": "mm", "inputs": ["x", "w"]},
              {"op_type": "Add", "name": "y", "inputs": ["mm", "b"]}]})";
  const CheckReport report = check_graph([&] { return load_graph(doc); });
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.parameters, 8);
  EXPECT_EQ(report.trainable_parameters, 6);
  // Every tensor, sorted by name as `nodeflow check` lists them.
  ASSERT_EQ(report.tensors.size(), 5u);
  EXPECT_EQ(report.tensors[1].first, "mm");
  EXPECT_EQ(report.tensors[1].second.shape, (Shape{kDynamicDim, 2}));
  EXPECT_EQ(report.tensors[4].first, "y");
}

TEST(CheckGraph, ARefusalIsTheReportsOneErrorAndCanBeRethrown) {
  const CheckReport report = check_graph([] { return load_graph("{}"); });
  ASSERT_FALSE(report.ok());
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0].message, "document: missing required key 'format'");
  EXPECT_THROW(std::rethrow_exception(report.failure), InvalidGraph);
  EXPECT_TRUE(report.tensors.empty());
}

}  // namespace
}  // namespace nodeflow
