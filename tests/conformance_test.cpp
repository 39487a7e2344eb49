// The conformance corpora (tests/support/conformance_corpora.hpp), one test per
// corpus, case and route: Api/<Suite>.Case/<case> through the library and
// Cli/<Suite>.Case/<case> through the installed `nodeflow` binary, run exactly
// as tests/conformance/README.md describes. <Suite> is Conformance for
// tests/conformance/ (pooling) and OpsConformance for tests/conformance-ops/.
// Onnx/<Suite>.Case/<case> (forward and backward cases) converts the graph to
// ONNX and back with the installed binary, requires the JSON it gets back to be
// the JSON writer's document of the graph byte for byte and the model of that
// JSON to be the same model byte for byte, then runs the case from the .onnx.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "conformance_case.hpp"
#include "support/conformance_corpora.hpp"
#include "core/executor.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"
#include "support/npy_compare.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

enum class Route { Api, Cli, Onnx };

struct CaseParam {
  Route route;
  fs::path dir;
};

// What gtest prints for a failing case.
[[maybe_unused]] void PrintTo(const CaseParam& param, std::ostream* os) {
  *os << (param.route == Route::Api ? "Api " : param.route == Route::Cli ? "Cli " : "Onnx ")
      << param.dir.string();
}

std::vector<CaseParam> discover(Route route, std::string_view suite) {
  std::vector<CaseParam> params;
  for (const auto& dir : list_conformance_cases(conformance_run_dir(conformance_corpus(suite))))
    if (route != Route::Onnx || load_conformance_case(dir).kind != "error")
      params.push_back({route, dir});
  return params;
}

// Test names allow [A-Za-z0-9_] only; the corpus folder names already fit.
std::string case_test_name(const ::testing::TestParamInfo<CaseParam>& info) {
  std::string name = info.param.dir.filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The README's file-name rule, written out again here so that the harness does
// not trust the command line's own implementation of it.
std::string file_stem(const std::string& tensor) {
  std::string stem = tensor;
  for (char& c : stem)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return stem;
}

template <typename V>
std::set<std::string> keys(const std::map<std::string, V>& map) {
  std::set<std::string> out;
  for (const auto& [key, value] : map) out.insert(key);
  return out;
}

// The op that `message` refuses as unknown ("unknown op_type 'Split'"), or "".
std::string unknown_op_type(const std::string& message) {
  const std::string marker = "unknown op_type '";
  const std::size_t at = message.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t begin = at + marker.size();
  return message.substr(begin, message.find('\'', begin) - begin);
}

// Every word of error_contains, case-insensitively, in `message`. A refusal of
// an unregistered op only counts when the case is about that name (its words
// hold it exactly): otherwise a case such as error_split_sizes_do_not_add_up
// ("sp1", "split") would pass before Split exists.
void expect_error_words(const ConformanceCase& c, const std::string& verb,
                        const std::string& message) {
  const std::string op = unknown_op_type(message);
  if (!op.empty() &&
      std::find(c.error_contains.begin(), c.error_contains.end(), op) == c.error_contains.end()) {
    ADD_FAILURE() << verb << ": refused because op_type '" << op
                  << "' is not registered, not for what the case pins:\n"
                  << message;
    return;
  }
  const std::string haystack = lower(message);
  for (const auto& word : c.error_contains)
    EXPECT_NE(haystack.find(lower(word)), std::string::npos)
        << verb << ": the error message lacks '" << word << "':\n"
        << message;
}

void expect_match(const Tensor& got, const fs::path& want_file, Tolerance tolerance,
                  const std::string& what) {
  const Tensor want = read_npy(want_file);
  const std::string mismatch = tensor_mismatch(got, want, tolerance);
  std::ostringstream tol;
  tol << "rtol " << tolerance.rtol << ", atol " << tolerance.atol;
  EXPECT_TRUE(mismatch.empty()) << what << " differs from " << want_file.string() << " ("
                                << tol.str() << "):\n"
                                << mismatch;
}

// --- Route Api: the library ------------------------------------------------

// A .npy carries bfloat16 as float32; the graph's declared dtype decides.
Tensor as_declared(Tensor value, DType declared) {
  if (declared == DType::BFloat16 && value.dtype() == DType::Float32)
    return value.cast(DType::BFloat16);
  return value;
}

// A result as its .npy file holds it (bfloat16 widened to float32, exactly).
Tensor as_file(const Tensor& value) {
  return value.dtype() == DType::BFloat16 ? value.cast(DType::Float32) : value;
}

std::map<std::string, Tensor> read_raw(const std::map<std::string, fs::path>& files) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, file] : files) tensors.emplace(name, read_npy(file));
  return tensors;
}

TensorMap declared_feeds(const Graph& graph, const std::map<std::string, Tensor>& raw) {
  TensorMap feeds;
  for (const auto& [name, value] : raw)
    feeds.emplace(name, as_declared(value, graph.info(name).dtype));
  return feeds;
}

void compare_api_results(const ConformanceCase& c, const Graph& graph, const TensorMap& results,
                         const std::map<std::string, fs::path>& expected, bool grads) {
  ASSERT_EQ(keys(results), keys(expected))
      << (grads ? "gradients returned" : "outputs returned") << " vs the case's expected files";
  for (const auto& [name, file] : expected) {
    const Tensor& got = results.at(name);
    const DType declared = graph.info(name).dtype;
    EXPECT_EQ(got.dtype(), declared) << "'" << name << "' has dtype " << dtype_name(got.dtype())
                                     << ", the graph declares " << dtype_name(declared);
    expect_match(as_file(got), file, grads ? c.grad_tolerance : c.tolerance_for(name),
                 grads ? "gradient of '" + name + "'" : "output '" + name + "'");
  }
}

void run_api_forward(const ConformanceCase& c) {
  const Graph graph = load_graph_file(c.graph());
  const TensorMap outputs = Executor(graph).run(declared_feeds(graph, read_raw(c.inputs)));
  compare_api_results(c, graph, outputs, c.expected, false);
}

void run_api_backward(const ConformanceCase& c) {
  const Graph graph = load_graph_file(c.graph());
  const Executor executor(graph);
  TrainingRun run = executor.forward(declared_feeds(graph, read_raw(c.inputs)));
  compare_api_results(c, graph, run.outputs(), c.expected, false);
  const TensorMap grads = executor.backward(run, declared_feeds(graph, read_raw(c.grad_outputs)));
  compare_api_results(c, graph, grads, c.expected_grads, true);
}

// One verb of an error case through the library: `check` is loading; `run`
// and `backward` are the whole pipeline, except that a case whose only verb is
// `backward` must load and must fail in forward + backward.
void run_api_error_verb(const ConformanceCase& c, const std::string& verb) {
  const auto inputs = read_raw(c.inputs);
  const auto seeds = read_raw(c.grad_outputs);
  const bool backward_only = c.error_verbs == std::vector<std::string>{"backward"};
  std::string message;
  try {
    if (backward_only) {
      std::optional<Graph> graph;
      try {
        graph.emplace(load_graph_file(c.graph()));
      } catch (const std::exception& e) {
        ADD_FAILURE()
            << "backward: the error must arise in forward + backward, but loading failed: "
            << e.what();
        return;
      }
      const Executor executor(*graph);
      TrainingRun run = executor.forward(declared_feeds(*graph, inputs));
      executor.backward(run, declared_feeds(*graph, seeds));
    } else {
      const Graph graph = load_graph_file(c.graph());
      if (verb == "run") {
        Executor(graph).run(declared_feeds(graph, inputs));
      } else if (verb == "backward") {
        const Executor executor(graph);
        TrainingRun run = executor.forward(declared_feeds(graph, inputs));
        executor.backward(run, declared_feeds(graph, seeds));
      } else {
        ASSERT_EQ(verb, "check") << "unknown verb in error_verbs";
      }
    }
    ADD_FAILURE() << verb << ": no error was raised";
    return;
  } catch (const Error& e) {
    message = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << verb << ": threw a non-nodeflow exception: " << e.what();
    return;
  }
  expect_error_words(c, verb, message);
}

// --- Route Cli: the installed binary ---------------------------------------

std::vector<std::string> named_file_args(const char* flag,
                                         const std::map<std::string, fs::path>& files) {
  std::vector<std::string> args;
  for (const auto& [name, file] : files) {
    args.push_back(flag);
    args.push_back(name + "=" + file.string());
  }
  return args;
}

std::vector<std::string> cli_command(const ConformanceCase& c, const std::string& verb,
                                     const fs::path& outdir, const fs::path& graph = {}) {
  std::vector<std::string> argv = {NODEFLOW_INSTALLED_CLI, verb,
                                   graph.empty() ? c.graph().string() : graph.string()};
  if (verb == "check") return argv;
  for (const auto& arg : named_file_args("-i", c.inputs)) argv.push_back(arg);
  if (verb == "backward")
    for (const auto& arg : named_file_args("-g", c.grad_outputs)) argv.push_back(arg);
  argv.push_back("-o");
  argv.push_back(outdir.string());
  return argv;
}

// The set's manifest (README, "The command line") is not a tensor file.
std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename() != ".nodeflow-outputs.json")
      names.insert(entry.path().filename().string());
  return names;
}

void run_cli_case(const ConformanceCase& c, const fs::path& scratch, const fs::path& graph = {}) {
  const fs::path outdir = scratch / "out";
  const std::string verb = c.kind == "forward" ? "run" : "backward";
  const ProcessResult result = run_process(cli_command(c, verb, outdir, graph), scratch);
  EXPECT_FALSE(result.sanitizer_report()) << result.describe();
  ASSERT_EQ(result.exit_code, 0) << "nodeflow " << verb << ": " << result.describe();
  std::set<std::string> want_files;
  for (const auto& [name, file] : c.expected) want_files.insert(file_stem(name) + ".npy");
  for (const auto& [name, file] : c.expected_grads)
    want_files.insert(file_stem(name) + ".grad.npy");
  ASSERT_EQ(files_in(outdir), want_files) << "files written to OUTDIR";
  for (const auto& [name, file] : c.expected)
    expect_match(read_npy(outdir / (file_stem(name) + ".npy")), file, c.tolerance_for(name),
                 "output '" + name + "'");
  for (const auto& [name, file] : c.expected_grads)
    expect_match(read_npy(outdir / (file_stem(name) + ".grad.npy")), file, c.grad_tolerance,
                 "gradient of '" + name + "'");
}

void run_cli_error_verb(const ConformanceCase& c, const std::string& verb,
                        const fs::path& scratch) {
  const ProcessResult result =
      run_process(cli_command(c, verb, scratch / ("out-" + verb)), scratch);
  EXPECT_FALSE(result.sanitizer_report()) << result.describe();
  EXPECT_EQ(result.exit_code, 1) << "nodeflow " << verb << ": " << result.describe();
  const bool has_error_line =
      result.err.rfind("error:", 0) == 0 || result.err.find("\nerror:") != std::string::npos;
  EXPECT_TRUE(has_error_line) << "nodeflow " << verb
                              << ": no stderr line begins with 'error:': " << result.describe();
  expect_error_words(c, verb, result.err);
}

// --- Route Onnx: JSON -> ONNX -> JSON, then the case from the .onnx ----------

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `nodeflow convert IN OUT`, which must succeed; returns its stderr (warnings).
std::string convert(const fs::path& in, const fs::path& out, const fs::path& scratch) {
  const ProcessResult r =
      run_process({NODEFLOW_INSTALLED_CLI, "convert", in.string(), out.string()}, scratch);
  EXPECT_FALSE(r.sanitizer_report()) << r.describe();
  EXPECT_EQ(r.exit_code, 0) << "nodeflow convert " << in.string() << " " << out.string() << ": "
                            << r.describe();
  return r.err;
}

void run_onnx_case(const ConformanceCase& c, const fs::path& scratch) {
  const fs::path normal = scratch / "normal.json", model = scratch / "model.onnx",
                 back = scratch / "back.json", again = scratch / "again.onnx";
  convert(c.graph(), normal, scratch);
  convert(c.graph(), model, scratch);
  convert(model, back, scratch);
  convert(back, again, scratch);
  ASSERT_FALSE(::testing::Test::HasFailure());
  // ONNX keeps the nodes in execution order (docs/onnx.md): a document whose
  // nodes are in another order comes back in that one, as the JSON writer
  // writes the graph with its nodes in execution order.
  const Graph graph = load_graph_file(c.graph());
  GraphDef sorted = graph.def();
  sorted.nodes.clear();
  for (const Graph::Step& step : graph.steps()) sorted.nodes.push_back(graph.def().nodes[step.def_index]);
  const std::string expected = write_graph_json(sorted);
  if (expected == file_bytes(normal))
    EXPECT_EQ(file_bytes(back), file_bytes(normal))
        << "JSON -> ONNX -> JSON is not the JSON writer's document of the graph";
  else
    EXPECT_EQ(file_bytes(back), expected)
        << "JSON -> ONNX -> JSON is not the JSON writer's document of the graph with its nodes "
           "in execution order (the document's own order is another)";
  EXPECT_TRUE(file_bytes(again) == file_bytes(model))
      << "the ONNX model of the round-tripped JSON differs from the first model";
  run_cli_case(c, scratch, model);
}

// --- The parameterized suites ------------------------------------------------

void run_case(const CaseParam& param) {
  const ConformanceCase c = load_conformance_case(param.dir);
  SCOPED_TRACE("case " + c.dir.string());
  const ScratchDir scratch("nodeflow-conformance");
  const bool api = param.route == Route::Api;
  try {
    if (c.kind == "error") {
      for (const auto& verb : c.error_verbs) {
        SCOPED_TRACE("verb " + verb);
        if (api)
          run_api_error_verb(c, verb);
        else
          run_cli_error_verb(c, verb, scratch.path());
      }
    } else if (param.route == Route::Onnx) {
      run_onnx_case(c, scratch.path());
    } else if (!api) {
      run_cli_case(c, scratch.path());
    } else if (c.kind == "forward") {
      run_api_forward(c);
    } else {
      run_api_backward(c);
    }
  } catch (const std::exception& e) {
    FAIL() << "unexpected exception (" << c.kind << " case): " << e.what();
  }
}

// One suite per corpus, so that the test name says which corpus a case is of.
class Conformance : public ::testing::TestWithParam<CaseParam> {};
class OpsConformance : public ::testing::TestWithParam<CaseParam> {};

TEST_P(Conformance, Case) { run_case(GetParam()); }
TEST_P(OpsConformance, Case) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Api, Conformance, ::testing::ValuesIn(discover(Route::Api, "Conformance")),
                         case_test_name);
INSTANTIATE_TEST_SUITE_P(Cli, Conformance, ::testing::ValuesIn(discover(Route::Cli, "Conformance")),
                         case_test_name);
INSTANTIATE_TEST_SUITE_P(Onnx, Conformance,
                         ::testing::ValuesIn(discover(Route::Onnx, "Conformance")), case_test_name);
INSTANTIATE_TEST_SUITE_P(Api, OpsConformance,
                         ::testing::ValuesIn(discover(Route::Api, "OpsConformance")),
                         case_test_name);
INSTANTIATE_TEST_SUITE_P(Cli, OpsConformance,
                         ::testing::ValuesIn(discover(Route::Cli, "OpsConformance")),
                         case_test_name);

INSTANTIATE_TEST_SUITE_P(Onnx, OpsConformance,
                         ::testing::ValuesIn(discover(Route::Onnx, "OpsConformance")),
                         case_test_name);

}  // namespace
}  // namespace nodeflow::testing
