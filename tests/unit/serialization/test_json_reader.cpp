// The graph-document reader (serialization/json_reader.hpp): syntax, document
// structure, JSON paths in messages, attribute kinds, loading into a Graph and
// the conformance documents. Initializer data is in test_json_reader_data.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using namespace json_reader_test;
namespace fs = std::filesystem;

// ------------------------------------------------------------ valid documents

TEST(JsonReader, ReadsEveryField) {
  const std::string text = R"({
    "format": "nodeflow.graph", "version": 1, "name": "net",
    "inputs": [{"name": "x", "dtype": "float32", "shape": [null, 1, 4, 4]},
               {"name": "i", "dtype": "int64", "shape": []}],
    "outputs": ["y", "z"],
    "initializers": [{"name": "w", "dtype": "float64", "shape": [2], "data": [0.5, -2], "trainable": true},
                     {"name": "b", "dtype": "uint8", "shape": [0], "data": []}],
    "nodes": [
      {"op_type": "MaxPool", "name": "pool1", "inputs": ["x", ""], "specified_outputs_name": ["y"],
       "attributes": {"kernel_shape": [2, 2], "ceil_mode": true, "auto_pad": "VALID", "storage_order": false},
       "training": false, "lda_coeff": 0.25},
      {"op_type": "LpPool", "name": "lp", "inputs": ["y"], "attributes": {"kernel_shape": [1, 1], "p": 3}}
    ]})";
  const GraphDef def = parse_graph_def(text);
  EXPECT_EQ(def.name, "net");
  ASSERT_EQ(def.inputs.size(), 2u);
  EXPECT_EQ(def.inputs[0].name, "x");
  EXPECT_EQ(def.inputs[0].info.dtype, DType::Float32);
  EXPECT_EQ(def.inputs[0].info.shape, (Shape{kDynamicDim, 1, 4, 4}));
  EXPECT_EQ(def.inputs[1].info.dtype, DType::Int64);
  EXPECT_EQ(def.inputs[1].info.shape, Shape{});
  EXPECT_EQ(def.outputs, (std::vector<std::string>{"y", "z"}));

  ASSERT_EQ(def.initializers.size(), 2u);
  EXPECT_EQ(def.initializers[0].name, "w");
  EXPECT_TRUE(def.initializers[0].trainable);
  EXPECT_EQ(def.initializers[0].value.dtype(), DType::Float64);
  EXPECT_EQ(def.initializers[0].value.values<double>()[0], 0.5);
  EXPECT_EQ(def.initializers[0].value.values<double>()[1], -2.0);
  EXPECT_FALSE(def.initializers[1].trainable);
  EXPECT_EQ(def.initializers[1].value.shape(), Shape{0});

  ASSERT_EQ(def.nodes.size(), 2u);
  const NodeDef& pool = def.nodes[0];
  EXPECT_EQ(pool.op_type, "MaxPool");
  EXPECT_EQ(pool.name, "pool1");
  EXPECT_EQ(pool.inputs, (std::vector<std::string>{"x", ""}));
  ASSERT_TRUE(pool.specified_outputs_name.has_value());
  EXPECT_EQ(*pool.specified_outputs_name, std::vector<std::string>{"y"});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(pool.attributes.at("kernel_shape")),
            (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(std::get<std::int64_t>(pool.attributes.at("ceil_mode")), 1);
  EXPECT_EQ(std::get<std::int64_t>(pool.attributes.at("storage_order")), 0);
  EXPECT_EQ(std::get<std::string>(pool.attributes.at("auto_pad")), "VALID");
  EXPECT_FALSE(pool.training);
  EXPECT_EQ(pool.lda_coeff, 0.25);

  const NodeDef& lp = def.nodes[1];
  EXPECT_FALSE(lp.specified_outputs_name.has_value());
  EXPECT_TRUE(lp.training);
  EXPECT_EQ(lp.lda_coeff, 1.0);
  EXPECT_EQ(std::get<std::int64_t>(lp.attributes.at("p")), 3);
}

TEST(JsonReader, OptionalTopLevelKeysMayBeAbsent) {
  const GraphDef def = parse_graph_def(
      R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "outputs": [], "nodes": []})");
  EXPECT_EQ(def.name, "");
  EXPECT_TRUE(def.initializers.empty());
  EXPECT_TRUE(def.nodes.empty());
}

TEST(JsonReader, KeysMayComeInAnyOrder) {
  const GraphDef a = parse_graph_def(doc());
  const GraphDef b = parse_graph_def(R"({"nodes": [{"attributes": {"kernel_shape": [2, 2]},
      "specified_outputs_name": ["y"], "inputs": ["x"], "name": "pool1", "op_type": "MaxPool"}],
      "initializers": [], "outputs": ["y"],
      "inputs": [{"shape": [null, 1, 4, 4], "dtype": "float32", "name": "x"}],
      "name": "g", "version": 1, "format": "nodeflow.graph"})");
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.inputs[0].info.shape, a.inputs[0].info.shape);
  EXPECT_EQ(b.nodes[0].name, a.nodes[0].name);
  EXPECT_EQ(b.nodes[0].attributes, a.nodes[0].attributes);
  EXPECT_EQ(b.nodes[0].specified_outputs_name, a.nodes[0].specified_outputs_name);
}

// -------------------------------------------------------------- JSON syntax

TEST(JsonReaderSyntax, NotJsonIsRefusedWithThePosition) {
  EXPECT_EQ(error_of(""),
            "invalid JSON: parse error at line 1, column 1: syntax error while parsing value - "
            "unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(error_of("{").rfind("invalid JSON: parse error at line 1, column 2: ", 0), 0u);
  EXPECT_EQ(error_of(std::string("\0\x01", 2)).rfind("invalid JSON: parse error at line 1, column 1", 0), 0u);
  EXPECT_NE(error_of(doc() + " trailing").find("expected end of input"), std::string::npos);
  EXPECT_NE(error_of("{\"format\": \"nodeflow.graph\",\n \"version\": 1,\n \"inputs\": [}")
                .find("at line 3, column 13"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "\xff"})").find("invalid JSON"), std::string::npos);  // not UTF-8
  EXPECT_NE(error_of(R"({"a": 1e400})").find("invalid JSON: number overflow parsing '1e400'"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 01})").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({'a': 1})").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 1,})").find("invalid JSON"), std::string::npos);
}

TEST(JsonReaderSyntax, NanAndInfinityTokensAreNotJson) {
  for (const char* token : {"NaN", "-NaN", "Infinity", "-Infinity", "inf", "nan"}) {
    const std::string text = R"({"format": "nodeflow.graph", "lda_coeff": )" + std::string(token) + "}";
    const std::string msg = error_of(text);
    EXPECT_EQ(msg.rfind("invalid JSON: parse error at line 1, column ", 0), 0u) << msg;
    EXPECT_NE(msg.find("NaN is not a JSON number; NaN and infinities travel as base64"), std::string::npos)
        << msg;
  }
  // The hint is for those tokens only.
  EXPECT_EQ(error_of(R"({"a": nul})").find("base64"), std::string::npos);
}

TEST(JsonReaderSyntax, EveryPrefixOfADocumentIsAnErrorNotACrash) {
  const std::string text = with_initializer("float32", "[2]", R"({"base64": "AADAfwAAgH8="})");
  for (std::size_t n = 0; n < text.size(); ++n) {
    try {
      parse_graph_def(text.substr(0, n));
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    } catch (const InvalidGraph& e) {
      EXPECT_EQ(std::string(e.what()).rfind("invalid JSON: ", 0), 0u) << e.what();
    }
  }
  EXPECT_NO_THROW(parse_graph_def(text));
}

TEST(JsonReaderSyntax, RandomMutationsLoadOrFailCleanly) {
  // Byte flips, insertions and deletions of a valid document: each either loads
  // into a Graph or raises a nodeflow::Error (never another exception, a crash
  // or a half-loaded graph).
  const std::string base = doc(kInputs,
                               R"([{"name": "w", "dtype": "int8", "shape": [2], "data": [1, -2]},
                                   {"name": "v", "dtype": "float16", "shape": [1], "data": {"base64": "ADw="}}])");
  const std::string alphabet = "{}[]\",:0123456789-.eE ntfalsru\\\x01\xff";
  std::mt19937 rng(2024);
  int loaded = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: text.erase(at, 1);
      }
    }
    try {
      const Graph g = load_graph(text);
      EXPECT_FALSE(g.steps().empty());
      ++loaded;
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-nodeflow exception " << e.what() << " for: " << text;
    }
  }
  EXPECT_GT(loaded, 0);
}

TEST(JsonReaderSyntax, NestingDeeperThan100LevelsIsRefused) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(error_of(nested(100)), "document: expected a JSON object, got array");
  EXPECT_EQ(error_of(nested(101)), "invalid JSON: nesting deeper than 100 levels at line 1, column 101");
  // Far deeper than any recursion could survive, closed or not.
  EXPECT_EQ(error_of(std::string(1000000, '[')),
            "invalid JSON: nesting deeper than 100 levels at line 1, column 101");
  EXPECT_EQ(error_of(std::string(100000, '{')).rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(error_of(nested(200000)).rfind("invalid JSON: nesting", 0), 0u);
  // Brackets inside strings (escaped quotes included) are text, not nesting.
  const std::string deep_name = doc(R"([{"name": "x\"[)" + std::string(300, '[') +
                                    R"(", "dtype": "float32", "shape": [1]}])");
  EXPECT_EQ(parse_graph_def(deep_name).inputs[0].name, "x\"[" + std::string(300, '['));
}

TEST(JsonReaderSyntax, DeeplyNestedAttributeValue) {
  // As error_deep_nesting: kernel_shape is a 200-deep object.
  std::string value = "1";
  for (int i = 0; i < 200; ++i) value = R"({"a": )" + value + "}";
  EXPECT_EQ(error_of(with_attributes(R"({"kernel_shape": )" + value + "}")).rfind("invalid JSON: nesting", 0), 0u);
  // 90 levels parse, and the message shows a bounded rendering.
  value = "1";
  for (int i = 0; i < 90; ++i) value = R"({"a": )" + value + "}";
  const std::string msg = error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": )" + value + "}"));
  EXPECT_EQ(msg.rfind(R"(nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got {"a": {"a": )", 0), 0u) << msg;
  EXPECT_LT(msg.size(), 330u);
  EXPECT_EQ(msg.substr(msg.size() - 3), "...");
}

// ------------------------------------------------------------- document keys

TEST(JsonReaderDocument, TopLevelMustBeAnObject) {
  EXPECT_EQ(error_of("[1,2,3]"), "document: expected a JSON object, got array");
  EXPECT_EQ(error_of("\"graph\""), "document: expected a JSON object, got string");
  EXPECT_EQ(error_of("null"), "document: expected a JSON object, got null");
  EXPECT_EQ(error_of("3"), "document: expected a JSON object, got number");
}

TEST(JsonReaderDocument, FormatAndVersion) {
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  EXPECT_EQ(error_of(replace(doc(), "\"nodeflow.graph\"", "\"nodeflow.grph\"")),
            "format: expected \"nodeflow.graph\", got 'nodeflow.grph'");
  EXPECT_EQ(error_of(replace(doc(), "\"nodeflow.graph\"", "7")), "format: expected \"nodeflow.graph\", got 7");
  EXPECT_EQ(error_of(replace(doc(), "\"version\": 1", "\"version\": 2")), "version: expected 1, got 2");
  EXPECT_EQ(error_of(replace(doc(), "\"version\": 1", "\"version\": 1.0")), "version: expected 1, got 1.0");
  EXPECT_EQ(error_of(replace(doc(), "\"version\": 1", "\"version\": \"1\"")), "version: expected 1, got '1'");
  // A wrong version is reported before keys that version may have added.
  EXPECT_EQ(error_of(replace(doc(), "\"version\": 1", "\"version\": 2, \"new\": {}")), "version: expected 1, got 2");
}

TEST(JsonReaderDocument, RequiredAndUnknownKeys) {
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "outputs": []})"),
            "document: missing required key 'nodes'");
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "inputs": [], "outputs": [], "nodes": []})"),
            "document: missing required key 'version'");
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "outputs": [], "nodes": [],
                         "initialisers": []})"),
            "initialisers: unknown key 'initialisers' (known: format, version, inputs, outputs, nodes, "
            "name, initializers, training_state)");
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "name": 3, "inputs": [], "outputs": [], "nodes": []})"),
            "name: expected a string, got 3");
}

TEST(JsonReaderDocument, DuplicateKeysAreRefusedNamingKeyAndPlace) {
  const std::string once = " (each key may appear once in an object)";
  EXPECT_EQ(error_of(R"({"format": "nodeflow.graph", "version": 1, "name": "a", "name": "b",
                         "inputs": [], "outputs": [], "nodes": []})"),
            "name: duplicate key 'name'" + once);
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "dtype": "int8", "shape": [1]}])")),
            "inputs[0] (x).dtype: duplicate key 'dtype'" + once);
  // Before the node's name is read, the element has only its index.
  EXPECT_EQ(error_of(doc(kInputs, "[]", R"([{"op_type": "MaxPool", "op_type": "AveragePool",
                                            "name": "p", "inputs": ["x"]}])")),
            "nodes[0].op_type: duplicate key 'op_type'" + once);
  EXPECT_EQ(error_of(with_attributes(R"({"kernel_shape": [2, 2], "kernel_shape": [3, 3]})")),
            "nodes[0] (pool1).attributes.kernel_shape: duplicate key 'kernel_shape'" + once);
  EXPECT_EQ(error_of(with_initializer("float32", "[1]", R"({"base64": "AAAAAA==", "base64": "AACAPw=="})")),
            "initializers[0] (w).data.base64: duplicate key 'base64'" + once);
  // Inside lists of lists, and with the same key in sibling objects (allowed).
  EXPECT_EQ(error_of(with_attributes(R"({"kernel_shape": [2, 2], "x": [[{"a": 1}, {"a": 1, "a": 2}]]})")),
            "nodes[0] (pool1).attributes.x[0][1].a: duplicate key 'a'" + once);
}

TEST(JsonReaderDocument, ListsOfTheWrongType) {
  EXPECT_EQ(error_of(doc(kInputs, "[]", "null")), "nodes: expected a list of nodes, got null");
  EXPECT_EQ(error_of(doc("{}")), "inputs: expected a list of graph inputs, got {}");
  EXPECT_EQ(error_of(doc(kInputs, "{\"w\": 1}")), "initializers: expected a list of initializers, got {\"w\": 1}");
  std::string text = doc();
  text.replace(text.find(R"(["y"])"), 5, R"(["y", 3])");
  EXPECT_EQ(error_of(text), "outputs[1]: expected a tensor name (a string), got 3");
  text = doc();
  text.replace(text.find(R"(["y"])"), 5, R"("y")");
  EXPECT_EQ(error_of(text), "outputs: expected a list of tensor names, got 'y'");
}

// ------------------------------------------------------------- graph inputs

TEST(JsonReaderInputs, ErrorsNameTheInput) {
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float", "shape": [1]}])")),
            "inputs[0] (x).dtype: expected one of float32, float64, float16, bfloat16, int8, uint8, "
            "int64, got 'float'");
  // int32 is a dtype of the library's own state, not of graph documents.
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "int32", "shape": [1]}])")),
            "inputs[0] (x).dtype: expected one of float32, float64, float16, bfloat16, int8, uint8, "
            "int64, got 'int32'");
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "shape": [1, -2]}])")),
            "inputs[0] (x).shape: expected a list of non-negative integers or null, got [1, -2]");
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "shape": [1.0]}])")),
            "inputs[0] (x).shape: expected a list of non-negative integers or null, got [1.0]");
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "shape": "1x4"}])")),
            "inputs[0] (x).shape: expected a list of non-negative integers or null, got '1x4'");
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32"}])")), "inputs[0] (x): missing required key 'shape'");
  EXPECT_EQ(error_of(doc(R"([{"dtype": "float32", "shape": [1]}])")), "inputs[0]: missing required key 'name'");
  EXPECT_EQ(error_of(doc(R"([{"name": 5, "dtype": "float32", "shape": [1]}])")),
            "inputs[0].name: expected a tensor name (a string), got 5");
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "shape": [1], "layout": "NCHW"}])")),
            "inputs[0] (x).layout: unknown key 'layout' (known: name, dtype, shape)");
  EXPECT_EQ(error_of(doc(R"([3])")), "inputs[0]: expected an object with name, dtype and shape, got 3");
}

TEST(JsonReaderInputs, ElementCountOverflowIsAShapeError) {
  EXPECT_EQ(error_of<ShapeMismatch>(doc(R"([{"name": "x", "dtype": "float32",
                                             "shape": [3037000500, 3037000500, 2, 2]}])")),
            "inputs[0] (x).shape: element count of [3037000500, 3037000500, 2, 2] overflows int64");
  EXPECT_EQ(error_of<ShapeMismatch>(doc(R"([{"name": "x", "dtype": "float32",
                                             "shape": [null, 3037000500, 3037000500, 2]}])")),
            "inputs[0] (x).shape: element count of the known dimensions of [?, 3037000500, "
            "3037000500, 2] overflows int64");
  // Dynamic dimensions are not counted; a dimension past int64 is not an integer here.
  EXPECT_NO_THROW(parse_graph_def(doc(R"([{"name": "x", "dtype": "float32",
                                          "shape": [null, 3037000499, 3037000499]}])")));
  EXPECT_EQ(error_of(doc(R"([{"name": "x", "dtype": "float32", "shape": [9223372036854775808]}])")),
            "inputs[0] (x).shape: expected a list of non-negative integers or null, got [9223372036854775808]");
}

// -------------------------------------------------------------------- nodes

TEST(JsonReaderNodes, StructureErrorsNameTheNode) {
  const auto node = [](const std::string& body) { return error_of(doc(kInputs, "[]", "[" + body + "]")); };
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "inputs": ["x"]})"), "nodes[0]: missing required key 'name'");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1"})"), "nodes[0] (pool1): missing required key 'inputs'");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "atributes": {}})"),
            "nodes[0] (pool1).atributes: unknown key 'atributes' (known: op_type, name, inputs, attributes, "
            "specified_outputs_name, training, lda_coeff, position)");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": "x"})"),
            "nodes[0] (pool1).inputs: expected a list of tensor names, got 'x'");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x", null]})"),
            "nodes[0] (pool1).inputs[1]: expected a tensor name (a string), got null");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "specified_outputs_name": [1]})"),
            "nodes[0] (pool1).specified_outputs_name[0]: expected a tensor name (a string), got 1");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "training": 1})"),
            "nodes[0] (pool1).training: expected true or false, got 1");
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "lda_coeff": "1"})"),
            "nodes[0] (pool1).lda_coeff: expected a finite number, got '1'");
  EXPECT_EQ(node(R"({"op_type": 1, "name": "pool1", "inputs": ["x"]})"),
            "nodes[0] (pool1).op_type: expected an op_type (a string), got 1");
  EXPECT_EQ(node(R"([])"), "nodes[0]: expected an object with op_type, name and inputs, got []");
  // A name with a control character is refused first, and left out of the path.
  EXPECT_EQ(node(R"({"op_type": "MaxPool", "name": "p\n", "inputs": 0})"),
            "nodes[0].name: a name must not contain control characters (U+000A at byte 1)");
}

TEST(JsonReaderNodes, IntegerLdaCoeffIsANumber) {
  const GraphDef def = parse_graph_def(doc(kInputs, "[]",
      R"([{"op_type": "MaxPool", "name": "p", "inputs": ["x"], "lda_coeff": 2, "attributes": {"kernel_shape": [1]}}])"));
  EXPECT_EQ(def.nodes[0].lda_coeff, 2.0);
}

TEST(JsonReaderNodes, UnknownOpTypeListsTheKnownOnes) {
  std::string known;
  for (const auto& n : OpRegistry::global().names()) known += (known.empty() ? "" : ", ") + n;
  EXPECT_EQ(error_of(doc(kInputs, "[]", R"([{"op_type": "MaxPool2d", "name": "pool1", "inputs": ["x"]}])")),
            "nodes[0] (pool1).op_type: unknown op_type 'MaxPool2d' (known: " + known + ")");
  EXPECT_NE(known.find("AveragePool, "), std::string::npos);
  OpRegistry empty;
  EXPECT_EQ(error_of(doc(), empty), "nodes[0] (pool1).op_type: unknown op_type 'MaxPool' (known: none)");
}

// --------------------------------------------------------------- attributes

TEST(JsonReaderAttributes, KindMismatchesNameTheAttribute) {
  EXPECT_EQ(error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": [2.5, 2]})")),
            "nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got [2.5, 2]");
  EXPECT_EQ(error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": "2"})")),
            "nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got '2'");
  EXPECT_EQ(error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": [true, 2]})")),
            "nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got [true, 2]");
  EXPECT_EQ(error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": [2], "ceil_mode": 2.0})")),
            "nodes[0] (pool1).attributes.ceil_mode: expected an integer 0 or 1, got 2.0");
  EXPECT_EQ(error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": [2], "auto_pad": 0})")),
            "nodes[0] (pool1).attributes.auto_pad: expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID, got 0");
  EXPECT_EQ(error_of(doc(kInputs, "[]", R"([{"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "attributes": [1]}])")),
            "nodes[0] (pool1).attributes: expected an object of attributes, got [1]");
}

TEST(JsonReaderAttributes, UnknownAttributeUsesTheValidatorsWords) {
  const std::string msg = error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": [2], "padding": [1]})"));
  EXPECT_EQ(msg.rfind("nodes[0] (pool1).attributes.padding: unknown attribute 'padding' for MaxPool (known: ", 0), 0u)
      << msg;
  EXPECT_NE(msg.find("kernel_shape"), std::string::npos);
  EXPECT_NE(msg.find("storage_order"), std::string::npos);
}

TEST(JsonReaderAttributes, RangesAreLeftToTheGraph) {
  // parse_graph_def converts kinds only; Graph's validate_attributes refuses the value.
  const GraphDef def = parse_graph_def(with_attributes(R"({"kernel_shape": [2, 0]})"));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(def.nodes[0].attributes.at("kernel_shape")),
            (std::vector<std::int64_t>{2, 0}));
}

TEST(JsonReaderAttributes, LongValuesAreCutInMessages) {
  std::string list = "[0.5";
  for (int i = 0; i < 1000; ++i) list += ", 0.5";
  const std::string msg = error_of<InvalidAttribute>(with_attributes(R"({"kernel_shape": )" + list + "]}"));
  EXPECT_EQ(msg.rfind("nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got [0.5, 0.5, ", 0), 0u);
  EXPECT_LT(msg.size(), 330u);
  EXPECT_EQ(msg.substr(msg.size() - 3), "...");
}

/// An op with one attribute of every kind, to test conversions apart from the pooling schemas.
OpRegistry kinds_registry() {
  OpRegistry r;
  OpSchema s;
  s.op_type = "Kinds";
  const std::pair<const char*, AttrKind> specs[] = {{"i", AttrKind::Int},     {"f", AttrKind::Float},
                                                    {"s", AttrKind::String},  {"is", AttrKind::Ints},
                                                    {"fs", AttrKind::Floats}, {"ss", AttrKind::Strings}};
  for (const auto& [name, kind] : specs) {
    AttrSpec a;
    a.name = name;
    a.kind = kind;
    s.attributes.push_back(a);
  }
  r.add(std::move(s));
  return r;
}

std::string kinds_doc(const std::string& attributes) {
  return doc(kInputs, "[]", R"([{"op_type": "Kinds", "name": "k", "inputs": ["x"], "attributes": )" + attributes + "}]");
}

TEST(JsonReaderAttributes, EveryKindConverts) {
  const OpRegistry r = kinds_registry();
  const GraphDef def = parse_graph_def(
      kinds_doc(R"({"i": -5, "f": 3, "s": "SAME", "is": [1, -2, 9223372036854775807], "fs": [1, 2.5, -1e308],
                    "ss": ["a", ""]})"),
      r);
  const Attributes& a = def.nodes[0].attributes;
  EXPECT_EQ(std::get<std::int64_t>(a.at("i")), -5);
  EXPECT_EQ(std::get<double>(a.at("f")), 3.0);
  EXPECT_EQ(std::get<std::string>(a.at("s")), "SAME");
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(a.at("is")),
            (std::vector<std::int64_t>{1, -2, 9223372036854775807}));
  EXPECT_EQ(std::get<std::vector<double>>(a.at("fs")), (std::vector<double>{1.0, 2.5, -1e308}));
  EXPECT_EQ(std::get<std::vector<std::string>>(a.at("ss")), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(std::get<std::int64_t>(parse_graph_def(kinds_doc(R"({"i": true})"), r).nodes[0].attributes.at("i")), 1);
  EXPECT_EQ(std::get<std::int64_t>(parse_graph_def(kinds_doc(R"({"i": false})"), r).nodes[0].attributes.at("i")), 0);
}

TEST(JsonReaderAttributes, EveryKindRefusesOtherJsonTypes) {
  const OpRegistry r = kinds_registry();
  const std::pair<std::string, std::string> cases[] = {
      {R"({"i": 2.0})", "nodes[0] (k).attributes.i: expected an integer, got 2.0"},
      {R"({"i": 9223372036854775808})", "nodes[0] (k).attributes.i: expected an integer, got 9223372036854775808"},
      {R"({"i": "1"})", "nodes[0] (k).attributes.i: expected an integer, got '1'"},
      {R"({"i": [1]})", "nodes[0] (k).attributes.i: expected an integer, got [1]"},
      {R"({"f": "0.5"})", "nodes[0] (k).attributes.f: expected a number, got '0.5'"},
      {R"({"f": true})", "nodes[0] (k).attributes.f: expected a number, got true"},
      {R"({"s": null})", "nodes[0] (k).attributes.s: expected a string, got null"},
      {R"({"is": [1, 2.0]})", "nodes[0] (k).attributes.is: expected a list of integers, got [1, 2.0]"},
      {R"({"is": 1})", "nodes[0] (k).attributes.is: expected a list of integers, got 1"},
      {R"({"fs": [1, "2"]})", "nodes[0] (k).attributes.fs: expected a list of numbers, got [1, \"2\"]"},
      {R"({"ss": ["a", 1]})", "nodes[0] (k).attributes.ss: expected a list of strings, got [\"a\", 1]"},
  };
  for (const auto& [attrs, message] : cases) EXPECT_EQ(error_of<InvalidAttribute>(kinds_doc(attrs), r), message);
}

// ------------------------------------------------------------- load_graph

TEST(JsonReaderLoad, BuildsAValidatedGraph) {
  const Graph g = load_graph(doc());
  EXPECT_EQ(g.name(), "g");
  EXPECT_EQ(g.def().nodes.size(), 1u);
  EXPECT_EQ(g.info("y").shape, (Shape{kDynamicDim, 1, 3, 3}));  // strides default to 1
}

TEST(JsonReaderLoad, AttributeRangesAreRefusedByTheGraph) {
  try {
    load_graph(with_attributes(R"({"kernel_shape": [2, 0]})"));
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_EQ(std::string(e.what()),
              "nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got [2, 0]");
  }
}

class JsonReaderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nodeflow_json_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(JsonReaderFiles, ReadsAFileAndNamesUnreadablePaths) {
  std::ofstream(dir_ / "g.json") << doc();
  EXPECT_EQ(load_graph_file(dir_ / "g.json").def().nodes[0].name, "pool1");
  try {
    load_graph_file(dir_ / "absent.json");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json"), std::string::npos);
  }
  EXPECT_THROW(load_graph_file(dir_), IoError);
}

// ------------------------------------------------------ conformance documents

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST(JsonReaderConformance, EveryDocumentLoadsOrFailsAsItsCaseSays) {
  int loaded = 0;
  int refused = 0;
  for (const auto& entry : fs::directory_iterator(NODEFLOW_CONFORMANCE_DIR)) {
    if (!fs::exists(entry.path() / "case.json")) continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream case_file(entry.path() / "case.json");
    const auto c = nlohmann::json::parse(case_file);
    const bool check_fails = c.at("kind") == "error" &&
                             c.value("error_verbs", nlohmann::json::array({"check", "run"})).dump().find("check") !=
                                 std::string::npos;
    try {
      load_graph_file(entry.path() / "graph.json");
      EXPECT_FALSE(check_fails) << "loaded an invalid document";
      ++loaded;
    } catch (const Error& e) {
      EXPECT_TRUE(check_fails) << e.what();
      for (const auto& word : c.value("error_contains", nlohmann::json::array()))
        EXPECT_NE(lower(e.what()).find(lower(word.get<std::string>())), std::string::npos)
            << "'" << word.get<std::string>() << "' missing from: " << e.what();
      ++refused;
    }
  }
  EXPECT_GT(loaded, 60);
  EXPECT_GT(refused, 30);
}

TEST(JsonReaderConformance, Base64NonFiniteInitializerIsBitExact) {
  const Graph g = load_graph_file(fs::path(NODEFLOW_CONFORMANCE_DIR) /
                                  "initializer_base64_nonfinite_values_exact_f32" / "graph.json");
  const Tensor& w = g.initializer("w")->value;
  ASSERT_EQ(w.shape(), (Shape{1, 1, 4}));
  const std::uint32_t want[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x3fc00000u};  // NaN, inf, -inf, 1.5
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>(w.values<float>()[i]), want[i]) << i;
}

}  // namespace
}  // namespace nodeflow
