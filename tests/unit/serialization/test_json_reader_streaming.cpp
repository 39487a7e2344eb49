// The reader reads the document's lists element by element while parsing
// (json_detail::parse_json_streaming); the result and the errors must be those
// of reading the whole tree first, whatever the order of the keys in the text.
#include <gtest/gtest.h>

#include <string>

#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using namespace json_reader_test;

const std::string kGoodNode =
    R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "specified_outputs_name": ["y"],
        "attributes": {"kernel_shape": [2, 2]}})";
const std::string kBadNode = R"({"op_type": "MaxPool", "name": "bad", "inputs": "x"})";

TEST(JsonReaderStreaming, ListsBeforeTheFormatStillGiveTheFormatErrorFirst) {
  const std::string text = R"({"nodes": [)" + kBadNode + R"(], "inputs": [], "outputs": [],
                               "format": "nodeflow.grph", "version": 1})";
  EXPECT_EQ(error_of(text), "format: expected \"nodeflow.graph\", got 'nodeflow.grph'");
}

TEST(JsonReaderStreaming, ErrorsComeInListOrderNotTextOrder) {
  // The node error is met first in the text; the input error is reported.
  const std::string text = R"({"format": "nodeflow.graph", "version": 1, "nodes": [)" + kBadNode +
                           R"(], "outputs": [], "inputs": [{"name": "x", "dtype": "float32"}]})";
  EXPECT_EQ(error_of(text), "inputs[0] (x): missing required key 'shape'");
}

TEST(JsonReaderStreaming, TheFirstBadElementOfAListIsReported) {
  const std::string text =
      doc(kInputs, "[]", "[" + kGoodNode + ", " + kBadNode + ", {\"name\": 3}]");
  EXPECT_EQ(error_of(text), "nodes[1] (bad).inputs: expected a list of tensor names, got 'x'");
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "nodes": [],
                         "outputs": ["a", 2, 3]})"),
            "outputs[1]: expected a tensor name (a string), got 2");
}

TEST(JsonReaderStreaming, SyntaxErrorsAfterABadElementAreSyntaxErrors) {
  const std::string text = doc(kInputs, "[]", "[" + kBadNode + "]") + " trailing";
  EXPECT_EQ(error_of(text).rfind("invalid JSON: ", 0), 0u);
}

TEST(JsonReaderStreaming, ARepeatedListKeyIsRefused) {
  // nlohmann's own tree would keep the later list and drop the earlier one.
  const std::string text = R"({"format": "nodeflow.graph", "version": 1, "inputs": [],
      "nodes": [)" + kBadNode + R"(], "outputs": ["y"],
      "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4]}],
      "nodes": [)" + kGoodNode + "]}";
  EXPECT_EQ(error_of(text), "inputs: duplicate key 'inputs' (each key may appear once in an object)");
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "outputs": [],
                         "nodes": [], "nodes": 5})"),
            "nodes: duplicate key 'nodes' (each key may appear once in an object)");
}

TEST(JsonReaderStreaming, ARepeatedKeyInALaterElementNamesThatElement) {
  // Earlier elements of a streamed list are gone when the third is read: its
  // index must still be 2.
  const std::string node = R"({"op_type": "MaxPool", "name": "p3", "inputs": ["x"],
      "attributes": {"kernel_shape": [2, 2], "strides": [1, 1], "kernel_shape": [3, 3]}})";
  EXPECT_EQ(error_of(doc(kInputs, "[]", "[" + kGoodNode + ", " + kGoodNode + ", " + node + "]")),
            "nodes[2] (p3).attributes.kernel_shape: duplicate key 'kernel_shape' (each key may "
            "appear once in an object)");
}

TEST(JsonReaderStreaming, ListsInsideNodesAreNotStreamed) {
  // Only the root object's lists are read element by element: a node's own
  // "inputs" list stays whole.
  const GraphDef def = parse_graph_def(doc());
  ASSERT_EQ(def.nodes.size(), 1u);
  EXPECT_EQ(def.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(def.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(error_of(R"([{"inputs": []}])"), "document: expected a JSON object, got array");
}

}  // namespace
}  // namespace nodeflow
