// The graph-document reader's memory budget (ReadOptions::max_initializer_bytes):
// a short document cannot make the loader allocate without bound.
#include <gtest/gtest.h>

#include <string>

#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using namespace json_reader_test;

/// The message of the InvalidGraph that parse_graph_def(text, options) throws.
std::string budget_error(const std::string& text, const ReadOptions& options) {
  SCOPED_TRACE("document: " + text);
  return error_of<InvalidGraph>([&] { parse_graph_def(text, OpRegistry::global(), options); });
}

/// Initializer "name" of float32 [4, 3] (48 bytes) given by `value` (JSON).
std::string init12(const std::string& name, const std::string& value) {
  return R"({"name": ")" + name + R"(", "dtype": "float32", "shape": [4, 3], )" + value + "}";
}

const std::string kZeros = R"("init": {"rule": "zeros"})";
const std::string kList = R"("data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])";
// 48 zero bytes in base64.
const std::string kBase64 = R"("data": {"base64": ")" + std::string(64, 'A') + R"("})";

TEST(JsonReaderLimits, ATinyInitRuleAskingFor40GigabytesIsRefused) {
  const std::string text =
      R"({"format": "nodeflow.graph", "version": 1, "inputs": [], "outputs": [], "nodes": [],
          "initializers": [{"name": "huge", "dtype": "float32", "shape": [200000, 50000],
                            "init": {"rule": "zeros"}}]})";
  ASSERT_LT(text.size(), 250u);
  EXPECT_EQ(error_of(text),
            "initializers[0] (huge).shape: [200000, 50000] float32 needs 40000000000 bytes, over "
            "the document's limit of 1073741824 bytes for initializers "
            "(ReadOptions::max_initializer_bytes; on the command line --max-initializer-bytes)");
  EXPECT_THROW(load_graph(text), InvalidGraph);
}

TEST(JsonReaderLimits, TheDefaultIsOneGibibyte) {
  EXPECT_EQ(ReadOptions{}.max_initializer_bytes, 1ull * 1024 * 1024 * 1024);
}

TEST(JsonReaderLimits, ADocumentUpToACustomLimitLoads) {
  // Three initializers of 48 bytes each, one of every form: 144 bytes.
  const std::string text = doc(kInputs, "[" + init12("a", kZeros) + ", " + init12("b", kList) +
                                            ", " + init12("c", kBase64) + "]");
  const GraphDef def = parse_graph_def(text, OpRegistry::global(), ReadOptions{144});
  ASSERT_EQ(def.initializers.size(), 3u);
  EXPECT_EQ(def.initializers[1].value.values<float>()[11], 12.0f);
  EXPECT_EQ(load_graph(text, ReadOptions{144}).def().initializers.size(), 3u);
}

TEST(JsonReaderLimits, TheTotalCountsAndTheErrorNamesTheInitializerThatCrossesIt) {
  for (const std::string& value : {kZeros, kList, kBase64}) {
    std::string initializers = "[";
    initializers += init12("first", kZeros);
    initializers += ", ";
    initializers += init12("second", value);
    initializers += "]";
    const std::string text = doc(kInputs, initializers);
    EXPECT_EQ(budget_error(text, ReadOptions{95}),
              "initializers[1] (second).shape: [4, 3] float32 needs 48 bytes, over the document's "
              "limit of 95 bytes for initializers (48 already taken by earlier ones) "
              "(ReadOptions::max_initializer_bytes; on the command line --max-initializer-bytes)")
        << value;
  }
}

TEST(JsonReaderLimits, TheWholeListIsCountedBeforeAnyInitializerIsBuilt) {
  // The first initializer (4 bytes) cannot be built: a value does not fit int8,
  // which only building it finds out. The second crosses the limit. Reporting
  // the second shows that the first was not built (allocated) before the whole
  // total was known: two 2.5 GiB "zeros" under the 4 GiB default in small.
  const std::string unbuildable[] = {
      R"({"name": "first", "dtype": "int8", "shape": [4], "init": {"rule": "constant", "value": 1000}})",
      R"({"name": "first", "dtype": "int8", "shape": [4], "data": [1, 2, 1000, 4]})"};
  for (const std::string& first : unbuildable) {
    const std::string text = doc(kInputs, "[" + first + ", " + init12("second", kZeros) + "]");
    EXPECT_EQ(budget_error(text, ReadOptions{51}),
              "initializers[1] (second).shape: [4, 3] float32 needs 48 bytes, over the document's "
              "limit of 51 bytes for initializers (4 already taken by earlier ones) "
              "(ReadOptions::max_initializer_bytes; on the command line --max-initializer-bytes)")
        << first;
    // Within the limit, the first one's own error is what the document gets.
    try {
      parse_graph_def(text, OpRegistry::global(), ReadOptions{52});
      ADD_FAILURE() << "parsed without error: " << first;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("initializers[0] (first).", 0), 0u) << e.what();
    }
  }
}

TEST(JsonReaderLimits, CountErrorsForAHugeShapeComeFirst) {
  // A list or base64 text too short for its shape says so, as before; neither
  // is allocated.
  EXPECT_EQ(budget_error(with_initializer("float64", "[1000000000000]", "[1]"), ReadOptions{8}),
            "initializers[0] (w).data: expected 1000000000000 values for shape [1000000000000], "
            "got 1");
  EXPECT_EQ(
      budget_error(with_initializer("uint8", "[5]", R"({"base64": "AAAA"})"), ReadOptions{4}),
      "initializers[0] (w).data.base64: expected 8 base64 characters (5 bytes: 5 uint8 values for "
      "shape [5]), got 4");
}

TEST(JsonReaderLimits, ZeroLimitStillAdmitsEmptyTensors) {
  const std::string text = doc(kInputs, R"([{"name": "e", "dtype": "float32", "shape": [0, 3],
                                              "init": {"rule": "zeros"}}])");
  EXPECT_EQ(parse_graph_def(text, OpRegistry::global(), ReadOptions{0}).initializers[0].value.numel(),
            0);
  EXPECT_NE(budget_error(with_initializer("uint8", "[1]", "[1]"), ReadOptions{0}).find("needs 1 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeflow
