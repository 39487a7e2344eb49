// Names hold no control characters and are valid UTF-8 (docs/graph-format.md,
// "Names"): the reader refuses them naming the JSON path, Graph and
// GraphBuilder refuse them with the same words, and the other user strings a
// message quotes (an op_type, an attribute string, a path) come escaped.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/graph_builder.hpp"
#include "core/names.hpp"
#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using json_reader_test::doc;
using json_reader_test::error_of;
using json_reader_test::kInputs;
using json_reader_test::kNodes;
using Ints = std::vector<std::int64_t>;

/// True when `s` holds a byte below 0x20 or 0x7f: what must not reach a terminal.
bool has_control_byte(const std::string& s) {
  for (const char ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return true;
  return false;
}

TEST(Names, ProblemNamesTheCharacterAndItsByteOffset) {
  EXPECT_EQ(name_problem("pool1"), "");
  EXPECT_EQ(name_problem(""), "");
  EXPECT_EQ(name_problem("conv1.W:0 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "");  // é € 😀
  EXPECT_EQ(name_problem("abc\x1b[2J"),
            "a name must not contain control characters (U+001B at byte 3)");
  EXPECT_EQ(name_problem(std::string("a\0b", 3)),
            "a name must not contain control characters (U+0000 at byte 1)");
  EXPECT_EQ(name_problem("\x07"), "a name must not contain control characters (U+0007 at byte 0)");
  EXPECT_EQ(name_problem("x\r"), "a name must not contain control characters (U+000D at byte 1)");
  EXPECT_EQ(name_problem("x\n"), "a name must not contain control characters (U+000A at byte 1)");
  EXPECT_EQ(name_problem("\xc3\xa9\x7f"),
            "a name must not contain control characters (U+007F at byte 2)");
  EXPECT_EQ(name_problem("ab\xff"), "a name must be valid UTF-8 (byte 0xFF at byte 2)");
  EXPECT_EQ(name_problem("\xc0\xaf"), "a name must be valid UTF-8 (byte 0xC0 at byte 0)");  // overlong
  EXPECT_EQ(name_problem("\xed\xa0\x80"), "a name must be valid UTF-8 (byte 0xED at byte 0)");  // surrogate
  EXPECT_EQ(name_problem("x\xe2\x82"), "a name must be valid UTF-8 (byte 0xE2 at byte 1)");  // truncated
}

// The node list of a document: one MaxPool with the given name, inputs and
// specified_outputs_name (JSON text).
std::string node_with(const std::string& name, const std::string& inputs,
                      const std::string& outputs) {
  return R"([{"op_type": "MaxPool", "name": )" + name + R"(, "inputs": )" + inputs +
         R"(, "specified_outputs_name": )" + outputs + R"(, "attributes": {"kernel_shape": [2, 2]}}])";
}

TEST(Names, ReaderRefusesControlCharactersInEveryKindOfNameNamingTheJsonPath) {
  const std::string good_init = R"([{"name": "w", "dtype": "float32", "shape": [1], "data": [1]}])";
  struct Case {
    const char* what;
    std::string text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"graph name",
       R"({"format": "nodeflow.graph", "version": 1, "name": "g\u001b]0;pwned\u0007", "inputs": )" +
           kInputs + R"(, "outputs": ["y"], "nodes": )" + kNodes + "}",
       "name: a name must not contain control characters (U+001B at byte 1)"},
      {"graph input", doc(R"([{"name": "x\u0007", "dtype": "float32", "shape": [1, 1, 4, 4]}])"),
       "inputs[0].name: a name must not contain control characters (U+0007 at byte 1)"},
      {"graph output",
       R"({"format": "nodeflow.graph", "version": 1, "inputs": )" + kInputs +
           R"(, "outputs": ["y\r"], "nodes": )" + kNodes + "}",
       "outputs[0]: a name must not contain control characters (U+000D at byte 1)"},
      {"initializer", doc(kInputs, R"([{"name": "w\u0000", "dtype": "float32", "shape": [1], "data": [1]}])"),
       "initializers[0].name: a name must not contain control characters (U+0000 at byte 1)"},
      {"initializer, second", doc(kInputs, R"([{"name": "w", "dtype": "float32", "shape": [1], "data": [1]},
           {"name": "\u007fv", "dtype": "float32", "shape": [1], "data": [1]}])"),
       "initializers[1].name: a name must not contain control characters (U+007F at byte 0)"},
      {"node name", doc(kInputs, good_init, node_with(R"("po\u001bol1")", R"(["x"])", R"(["y"])")),
       "nodes[0].name: a name must not contain control characters (U+001B at byte 2)"},
      {"node name, raw DEL", doc(kInputs, good_init, node_with("\"pool\x7f\"", R"(["x"])", R"(["y"])")),
       "nodes[0].name: a name must not contain control characters (U+007F at byte 4)"},
      {"node input", doc(kInputs, good_init, node_with(R"("pool1")", R"(["x\u001b[2J"])", R"(["y"])")),
       "nodes[0] (pool1).inputs[0]: a name must not contain control characters (U+001B at byte 1)"},
      {"specified output",
       doc(kInputs, good_init, node_with(R"("pool1")", R"(["x"])", R"(["y", "i\u0000"])")),
       "nodes[0] (pool1).specified_outputs_name[1]: a name must not contain control characters "
       "(U+0000 at byte 1)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string message = error_of(c.text);
    EXPECT_EQ(message, c.message);
    EXPECT_FALSE(has_control_byte(message));
  }
}

TEST(Names, ReaderRefusesTheNameBeforeItsOtherFieldsAndNeverEchoesItRaw) {
  // The element's path leaves the bad name out, and a later error of the same
  // element does not come first.
  const std::string message = error_of(doc(
      kInputs, "[]",
      R"([{"op_type": "NoSuchOp", "name": "p\u001b", "inputs": ["x"], "specified_outputs_name": ["y"]}])"));
  EXPECT_EQ(message, "nodes[0].name: a name must not contain control characters (U+001B at byte 1)");
}

NodeDef max_pool_node(const std::string& name, std::vector<std::string> inputs) {
  NodeDef n;
  n.op_type = "MaxPool";
  n.name = name;
  n.inputs = std::move(inputs);
  n.attributes = {{"kernel_shape", Ints{2, 2}}};
  return n;
}

GraphDef pool_def() {
  GraphDef d;
  d.name = "g";
  d.inputs.push_back({"x", {DType::Float32, {1, 1, 4, 4}}});
  return d;
}

TEST(Names, GraphAndGraphBuilderRefuseThemInTheReadersWords) {
  struct Case {
    const char* what;
    std::function<void()> build;   // through GraphBuilder
    std::function<void(GraphDef&)> describe;  // the same mistake in a GraphDef
    const char* message;
  };
  const auto builder = [] {
    GraphBuilder b("g");
    b.add_input("x", DType::Float32, {1, 1, 4, 4});
    return b;
  };
  const std::vector<Case> cases = {
      {"graph name", [] { GraphBuilder b("g\x1b"); }, [](GraphDef& d) { d.name = "g\x1b"; },
       "name: a name must not contain control characters (U+001B at byte 1)"},
      {"graph input", [&] { builder().add_input("in\x07", DType::Float32, {1}); },
       [](GraphDef& d) { d.inputs.push_back({"in\x07", {DType::Float32, {1}}}); },
       "inputs[1].name: a name must not contain control characters (U+0007 at byte 2)"},
      {"initializer",
       [&] { builder().add_initializer(std::string("w\0", 2), Tensor::from<float>({1}, {1.0f})); },
       [](GraphDef& d) {
         d.initializers.push_back({std::string("w\0", 2), Tensor::from<float>({1}, {1.0f}), false});
       },
       "initializers[0].name: a name must not contain control characters (U+0000 at byte 1)"},
      {"node name", [&] { builder().add_node(max_pool_node("p\r", {"x"})); },
       [](GraphDef& d) { d.nodes.push_back(max_pool_node("p\r", {"x"})); },
       "nodes[0].name: a name must not contain control characters (U+000D at byte 1)"},
      {"node input", [&] { builder().add_node(max_pool_node("p", {"x\x7f"})); },
       [](GraphDef& d) { d.nodes.push_back(max_pool_node("p", {"x\x7f"})); },
       "nodes[0] (p).inputs[0]: a name must not contain control characters (U+007F at byte 1)"},
      {"specified output",
       [&] {
         NodeDef n = max_pool_node("p", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"y\x1b"};
         builder().add_node(n);
       },
       [](GraphDef& d) {
         NodeDef n = max_pool_node("p", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"y\x1b"};
         d.nodes.push_back(n);
       },
       "nodes[0] (p).specified_outputs_name[0]: a name must not contain control characters "
       "(U+001B at byte 1)"},
      {"graph output", [&] { builder().add_output("x\n"); },
       [](GraphDef& d) { d.outputs.push_back("x\n"); },
       "outputs[0]: a name must not contain control characters (U+000A at byte 1)"},
      {"not UTF-8", [&] { builder().add_input("\xc3(", DType::Float32, {1}); },
       [](GraphDef& d) { d.inputs.push_back({"\xc3(", {DType::Float32, {1}}}); },
       "inputs[1].name: a name must be valid UTF-8 (byte 0xC3 at byte 0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(error_of<InvalidGraph>(c.build), c.message);
    GraphDef d = pool_def();
    c.describe(d);
    EXPECT_EQ(error_of<InvalidGraph>([&] { Graph g(d); }), c.message);
  }
}

TEST(Names, UnknownOpTypeIsEchoedWithItsControlCharactersEscaped) {
  NodeDef n = max_pool_node("p", {"x"});
  n.op_type = "Max\x1b[2JPool";
  const std::string expected_start = "nodes[0] (p).op_type: unknown op_type 'Max\\x1b[2JPool' (known: ";
  const std::string from_builder = error_of<InvalidGraph>([&] {
    GraphBuilder b("g");
    b.add_input("x", DType::Float32, {1, 1, 4, 4});
    b.add_node(n);
  });
  EXPECT_EQ(from_builder.rfind(expected_start, 0), 0u) << from_builder;
  GraphDef d = pool_def();
  d.nodes.push_back(n);
  const std::string from_graph = error_of<InvalidGraph>([&] { Graph g(d); });
  EXPECT_EQ(from_graph, from_builder);
  const std::string from_reader = error_of(doc(
      kInputs, "[]", R"([{"op_type": "Max\u001b[2JPool", "name": "p", "inputs": ["x"]}])"));
  EXPECT_EQ(from_reader.rfind(expected_start, 0), 0u) << from_reader;
  for (const std::string& m : {from_builder, from_graph, from_reader}) EXPECT_FALSE(has_control_byte(m));
}

TEST(Names, AttributeStringValuesAndLookupsAreEchoedEscaped) {
  // Refused by Graph's attribute validation, after the reader.
  const std::string refused = error_of<InvalidAttribute>([] {
    load_graph(json_reader_test::with_attributes(
        R"({"kernel_shape": [2, 2], "auto_pad": "\u001b[2J\u0007"})"));
  });
  EXPECT_NE(refused.find("got \"\\x1b[2J\\x07\""), std::string::npos) << refused;
  EXPECT_FALSE(has_control_byte(refused));

  GraphBuilder b("g");
  b.add_input("x", DType::Float32, {1});
  const std::string lookup = error_of<InvalidGraph>([&] { b.info("a\x1b"); });
  EXPECT_EQ(lookup, "tensor 'a\\x1b' is not in the graph");
}

TEST(Names, UnknownKeyAndDtypeAreEchoedEscaped) {
  const std::string key = error_of(doc(
      R"([{"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4], "sh\u001bape": 1}])"));
  EXPECT_NE(key.find("unknown key 'sh\\x1bape'"), std::string::npos) << key;
  const std::string dtype =
      error_of(doc(R"([{"name": "x", "dtype": "float\u001b32", "shape": [1, 1, 4, 4]}])"));
  EXPECT_NE(dtype.find("got 'float\\x1b32'"), std::string::npos) << dtype;
  for (const std::string& m : {key, dtype}) EXPECT_FALSE(has_control_byte(m));
}

TEST(Names, AGraphPathIsEchoedEscaped) {
  try {
    load_graph_file("no such\x1b]0;title\x07.json");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("cannot read graph no such\\x1b]0;title\\x07.json: ", 0), 0u) << message;
    EXPECT_FALSE(has_control_byte(message));
  }
}

}  // namespace
}  // namespace nodeflow
