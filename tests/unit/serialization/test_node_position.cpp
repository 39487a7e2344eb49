// The node key "position" (docs/graph-format.md, "Node positions"): read,
// validated, written back unchanged, and ignored by everything else.
#include <gtest/gtest.h>

#include "serialization/graph_file.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {


std::string doc_with(const std::string& position) {
  return R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [2]}], "outputs": ["y"],
    "nodes": [{"op_type": "Relu", "name": "y", "inputs": ["x"], "position": )" + position + "}]}";
}

TEST(NodePosition, ReadAndWrittenBackByteForByte) {
  const GraphDef def = parse_graph_def(doc_with("[12.5, -3]"));
  ASSERT_TRUE(def.nodes[0].position);
  EXPECT_EQ((*def.nodes[0].position)[0], 12.5);
  EXPECT_EQ((*def.nodes[0].position)[1], -3.0);
  const std::string written = write_graph_json(def);
  EXPECT_NE(written.find(R"("inputs": ["x"], "position": [12.5, -3.0]})"), std::string::npos) << written;
  // The normal form goes through read and write unchanged (nodeflow convert).
  EXPECT_EQ(write_graph_json(load_graph(written).def()), written);
  for (const char* v : {"[0.1, 1e300]", "[-0.0, 123456789012]", "[3.0000000000000004, 2]"}) {
    const std::string once = write_graph_json(parse_graph_def(doc_with(v)));
    EXPECT_EQ(write_graph_json(parse_graph_def(once)), once) << v;
  }
}

TEST(NodePosition, AbsentStaysAbsent) {
  const std::string doc = R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [2]}], "outputs": ["y"],
    "nodes": [{"op_type": "Relu", "name": "y", "inputs": ["x"]}]})";
  EXPECT_FALSE(parse_graph_def(doc).nodes[0].position);
  EXPECT_EQ(write_graph_json(parse_graph_def(doc)).find("position"), std::string::npos);
}

TEST(NodePosition, AnythingButTwoNumbersIsRefusedNamingThePath) {
  for (const char* bad : {"[1]", "[1, 2, 3]", "[\"1\", 2]", "{\"x\": 1}", "null", "[1, null]", "[true, 1]"})
    EXPECT_EQ(testing::error_of<InvalidGraph>([&] { parse_graph_def(doc_with(bad)); }).rfind(
                  "nodes[0] (y).position: expected [x, y], two numbers, got ", 0),
              0u)
        << bad;
}

TEST(NodePosition, IgnoredByTheGraphAndLeftOutOfOnnx) {
  const Graph graph = load_graph(doc_with("[1, 2]"));
  EXPECT_EQ(graph.steps().size(), 1u);
  const Graph back = load_graph_bytes(graph_bytes(graph, GraphFormat::Onnx), GraphFormat::Onnx);
  EXPECT_FALSE(back.def().nodes[0].position);
}

TEST(NodePosition, ANonFiniteOneMadeInCodeIsNotWritten) {
  GraphDef def = parse_graph_def(doc_with("[1, 2]"));
  def.nodes[0].position = std::array<double, 2>{1.0, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(testing::error_of<InvalidAttribute>([&] { write_graph_json(def); }),
            "nodes[0] (y).position[1]: expected a finite number (JSON has no NaN or infinity)");
}

}  // namespace
}  // namespace nodeflow
