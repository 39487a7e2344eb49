// The installed `nodeflow` binary beyond the corpus: usage errors (exit 2),
// the checks it makes before running (exit 1, nothing written), file naming,
// output directories, bfloat16 on disk, the `check` report and `ops`.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "serialization/npy.hpp"
#include "serialization/op_schema_json.hpp"
#include "support/cli_fixture.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// One MaxPool 2x2 / stride 2 over a 1x1x4x4 input of `dtype`, output "y".
std::string pool_graph(const std::string& dtype, const std::string& output = "y") {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "cli_pool",
  "inputs": [{"name": "x", "dtype": ")" +
         dtype + R"(", "shape": [1, 1, 4, 4]}],
  "outputs": [")" +
         output + R"("],
  "nodes": [{"op_type": "MaxPool", "name": "pool", "inputs": ["x"],
             "specified_outputs_name": [")" +
         output + R"("],
             "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]}}]})";
}

class Cli : public CliTest {
 protected:
  Cli() : CliTest(NODEFLOW_INSTALLED_CLI, "nodeflow-cli") {}

  // x = 0, 1, ..., 15 (MaxPool 2x2 / 2 gives 5, 7, 13, 15).
  fs::path write_ramp(const std::string& name) const {
    std::vector<float> values(16);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    const fs::path file = dir() / name;
    write_npy(file, Tensor::from<float>({1, 1, 4, 4}, std::span<const float>(values)));
    return file;
  }

  static void expect_usage(const ProcessResult& r) {
    EXPECT_EQ(r.exit_code, kUsage) << r.describe();
    EXPECT_NE(r.err.find("Usage"), std::string::npos) << r.describe();
  }

  static void expect_failure(const ProcessResult& r, const std::vector<std::string>& words) {
    EXPECT_EQ(r.exit_code, kFailure) << r.describe();
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
    for (const auto& word : words)
      EXPECT_NE(r.err.find(word), std::string::npos) << word << "\n" << r.describe();
  }
};

TEST_F(Cli, NoArgumentsIsUsage) { expect_usage(nodeflow({})); }

TEST_F(Cli, UnknownVerbIsUsage) { expect_usage(nodeflow({"frobnicate", "graph.json"})); }

TEST_F(Cli, MissingArgumentsAreUsage) {
  expect_usage(nodeflow({"run", "graph.json", "-i", "x=x.npy"}));  // no -o
  expect_usage(nodeflow({"run", "-o", "out"}));                    // no GRAPH
  expect_usage(nodeflow({"backward", "graph.json", "-o"}));        // -o without a value
  expect_usage(nodeflow({"check"}));
  // An empty -o would have put the files in the current directory unasked.
  for (const char* verb : {"run", "backward"}) {
    const ProcessResult r = nodeflow({verb, "graph.json", "-o", ""});
    expect_usage(r);
    EXPECT_NE(r.err.find("--outdir: an empty directory name"), std::string::npos) << r.describe();
  }
}

TEST_F(Cli, NamedFileWithoutEqualsIsUsage) {
  // Decided before the graph is read: the graph file need not exist.
  expect_usage(nodeflow({"run", "graph.json", "-i", "x.npy", "-o", "out"}));
  expect_usage(nodeflow({"run", "graph.json", "-i", "=x.npy", "-o", "out"}));
  expect_usage(nodeflow({"backward", "graph.json", "-i", "x=x.npy", "-g", "y", "-o", "out"}));
  expect_usage(nodeflow({"run", "graph.json", "-i", "x=a.npy", "-i", "x=b.npy", "-o", "out"}));
}

TEST_F(Cli, HelpExitsZero) {
  const ProcessResult r = nodeflow({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  for (const char* verb : {"run", "backward", "check"})
    EXPECT_NE(r.out.find(verb), std::string::npos) << r.out;
}

TEST_F(Cli, MissingGraphFileFails) {
  expect_failure(nodeflow({"check", (dir() / "absent.json").string()}), {"absent.json"});
}

TEST_F(Cli, RunWritesOutputsIntoNewNestedDirectory) {
  const fs::path graph = write_text("g.json", pool_graph("float32"));
  const fs::path outdir = dir() / "a" / "b";
  const ProcessResult r = nodeflow(
      {"run", graph.string(), "-i", "x=" + write_ramp("x.npy").string(), "-o", outdir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const Tensor y = read_npy(outdir / "y.npy");
  ASSERT_EQ(y.dtype(), DType::Float32);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  const auto v = y.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{5, 7, 13, 15}));
}

TEST_F(Cli, BFloat16OutputIsWrittenAsFloat32) {
  const fs::path graph = write_text("g.json", pool_graph("bfloat16"));
  const ProcessResult r =
      nodeflow({"run", graph.string(), "-i", "x=" + write_ramp("x.npy").string(), "-o",
                (dir() / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const Tensor y = read_npy(dir() / "out" / "y.npy");
  ASSERT_EQ(y.dtype(), DType::Float32);
  const auto v = y.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{5, 7, 13, 15}));
}

TEST_F(Cli, UnknownInputNameFailsNamingIt) {
  const fs::path graph = write_text("g.json", pool_graph("float32"));
  const fs::path x = write_ramp("x.npy");
  expect_failure(nodeflow({"run", graph.string(), "-i", "x=" + x.string(), "-i",
                           "ghost=" + x.string(), "-o", (dir() / "out").string()}),
                 {"'ghost'"});
  EXPECT_FALSE(fs::exists(dir() / "out"));
}

TEST_F(Cli, MissingInputFailsNamingIt) {
  const fs::path graph = write_text("g.json", pool_graph("float32"));
  expect_failure(nodeflow({"run", graph.string(), "-o", (dir() / "out").string()}),
                 {"missing", "'x'"});
}

TEST_F(Cli, InputFileOfWrongDtypeFailsNamingInput) {
  const fs::path graph = write_text("g.json", pool_graph("float64"));
  expect_failure(nodeflow({"run", graph.string(), "-i", "x=" + write_ramp("x.npy").string(), "-o",
                           (dir() / "out").string()}),
                 {"'x'", "float32", "float64"});
}

TEST_F(Cli, GradientForIntegerOutputFailsBeforeWriting) {
  const fs::path graph = write_text("g.json", pool_graph("int8"));
  const fs::path x = dir() / "x.npy";
  write_npy(x, Tensor(DType::Int8, {1, 1, 4, 4}));
  const fs::path g = dir() / "g.npy";
  write_npy(g, Tensor(DType::Int8, {1, 1, 2, 2}));
  expect_failure(nodeflow({"backward", graph.string(), "-i", "x=" + x.string(), "-g",
                           "y=" + g.string(), "-o", (dir() / "out").string()}),
                 {"gradient given for output 'y' of dtype int8 (not differentiable)"});
  EXPECT_FALSE(fs::exists(dir() / "out"));
}

TEST_F(Cli, GradientForUnknownOutputFailsNamingIt) {
  const fs::path graph = write_text("g.json", pool_graph("float32"));
  const fs::path x = write_ramp("x.npy");
  expect_failure(nodeflow({"backward", graph.string(), "-i", "x=" + x.string(), "-g",
                           "nope=" + x.string(), "-o", (dir() / "out").string()}),
                 {"'nope'"});
}

TEST_F(Cli, BackwardWritesOutputsAndInputGradient) {
  const fs::path graph = write_text("g.json", pool_graph("float32"));
  const fs::path g = dir() / "g.npy";
  write_npy(g, Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4}));
  const fs::path outdir = dir() / "out";
  const ProcessResult r =
      nodeflow({"backward", graph.string(), "-i", "x=" + write_ramp("x.npy").string(), "-g",
                "y=" + g.string(), "-o", outdir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::exists(outdir / "y.npy"));
  const Tensor dx = read_npy(outdir / "x.grad.npy");
  ASSERT_EQ(dx.shape(), (Shape{1, 1, 4, 4}));
  // The maximum of each 2x2 window of the ramp is its bottom-right element.
  std::vector<float> want(16, 0.0f);
  want[5] = 1;
  want[7] = 2;
  want[13] = 3;
  want[15] = 4;
  const auto v = dx.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), want);
}

TEST_F(Cli, OutputFileNameCollisionFailsBeforeWriting) {
  // "a:b" and "a_b" both become a_b.npy.
  const fs::path graph = write_text("g.json", R"({"format": "nodeflow.graph", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4]}],
    "outputs": ["a:b", "a_b"],
    "nodes": [
      {"op_type": "MaxPool", "name": "p1", "inputs": ["x"], "specified_outputs_name": ["a:b"],
       "attributes": {"kernel_shape": [2, 2]}},
      {"op_type": "AveragePool", "name": "p2", "inputs": ["x"], "specified_outputs_name": ["a_b"],
       "attributes": {"kernel_shape": [2, 2]}}]})");
  expect_failure(nodeflow({"run", graph.string(), "-i", "x=" + write_ramp("x.npy").string(), "-o",
                           (dir() / "out").string()}),
                 {"'a:b'", "'a_b'", "a_b.npy"});
  EXPECT_FALSE(fs::exists(dir() / "out"));
}

TEST_F(Cli, OutputCollidingWithGradientFileFailsInBackward) {
  // Output "x.grad" and the gradient of input "x" both want x.grad.npy.
  const fs::path graph = write_text("g.json", pool_graph("float32", "x.grad"));
  const fs::path outdir = dir() / "out";
  expect_failure(nodeflow({"backward", graph.string(), "-i", "x=" + write_ramp("x.npy").string(),
                           "-o", outdir.string()}),
                 {"x.grad.npy"});
  EXPECT_FALSE(fs::exists(outdir));
}

TEST_F(Cli, CheckPrintsNodesTensorsAndParameterCount) {
  const fs::path graph =
      write_text("g.json", R"({"format": "nodeflow.graph", "version": 1, "name": "demo",
    "inputs": [{"name": "x", "dtype": "float32", "shape": [null, 1, 4, 4]}],
    "outputs": ["y"],
    "initializers": [{"name": "w", "dtype": "float32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6],
                      "trainable": true}],
    "nodes": [{"op_type": "MaxPool", "name": "pool", "inputs": ["x"], "specified_outputs_name": ["y"],
               "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]}}]})");
  const ProcessResult r = nodeflow({"check", graph.string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (const char* line :
       {"pool (MaxPool): x -> y", "x: float32 [?, 1, 4, 4]", "y: float32 [?, 1, 2, 2]",
        "w: float32 [2, 3] (trainable)", "parameters: 6 (6 trainable)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(Cli, ConvertWritesTheNormalFormAndIsIdempotent) {
  const fs::path in = write_text("in.json", pool_graph("float32"));
  const ProcessResult r = nodeflow({"convert", in.string(), (dir() / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string normal = R"({
  "format": "nodeflow.graph",
  "version": 1,
  "name": "cli_pool",
  "inputs": [
    {"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4]}
  ],
  "outputs": ["y"],
  "initializers": [],
  "nodes": [
    {"op_type": "MaxPool", "name": "pool", "inputs": ["x"], "specified_outputs_name": ["y"], "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]}}
  ]
}
)";
  EXPECT_EQ(read_file(dir() / "out.json"), normal);
  // In place, and again: nothing changes.
  const std::string out = (dir() / "out.json").string();
  ASSERT_EQ(nodeflow({"convert", out, out}).exit_code, 0);
  EXPECT_EQ(read_file(dir() / "out.json"), normal);
}

TEST_F(Cli, ConvertRefusesAnInvalidGraphAndWritesNothing) {
  std::string text = pool_graph("float32");
  text.replace(text.find("MaxPool"), 7, "MaxPooll");
  const fs::path in = write_text("bad.json", text);
  expect_failure(nodeflow({"convert", in.string(), (dir() / "out.json").string()}), {"MaxPooll"});
  EXPECT_FALSE(fs::exists(dir() / "out.json"));
}

TEST_F(Cli, OpsPrintsOneLinePerOpWithItsDefinition) {
  const ProcessResult r = nodeflow({"ops"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(r.err.empty()) << r.err;
  const OpRegistry& registry = OpRegistry::global();
  std::vector<std::string> lines;
  std::string line;
  for (std::istringstream in(r.out); std::getline(in, line);) lines.push_back(line);
  const auto names = registry.names();
  ASSERT_EQ(lines.size(), names.size()) << r.out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(names[i] + " ", 0), 0u) << lines[i];
    EXPECT_NE(lines[i].find(registry.find(names[i])->definition), std::string::npos) << lines[i];
  }
  const std::size_t maxpool = r.out.find("\nMaxPool ");
  ASSERT_NE(maxpool, std::string::npos) << r.out;
  const std::string row = r.out.substr(maxpool + 1, r.out.find('\n', maxpool + 1) - maxpool - 1);
  EXPECT_NE(row.find(" ONNX MaxPool-22 "), std::string::npos) << row;
  EXPECT_EQ(row.substr(row.size() - 18), "X -> Y [, Indices]") << row;
}

TEST_F(Cli, OpsJsonIsTheRegistryDocument) {
  const ProcessResult r = nodeflow({"ops", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, op_schemas_json());
  EXPECT_NE(r.out.find("\"format\": \"nodeflow.ops\""), std::string::npos);
}

TEST_F(Cli, ConvertWithoutOutputIsUsage) { expect_usage(nodeflow({"convert", "in.json"})); }

}  // namespace
}  // namespace nodeflow::testing
