#include "apps/commands.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "apps/feeds.hpp"
#include "apps/output_files.hpp"
#include "core/errors.hpp"
#include "core/executor.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/graph_check.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/op_schema_json.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow::cli {
namespace {

// Gradients backward returns: float graph inputs and trainable initializers.
std::vector<std::string> differentiable_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const auto& input : graph.def().inputs)
    if (is_float(input.info.dtype)) names.push_back(input.name);
  for (const auto& init : graph.def().initializers)
    if (init.trainable) names.push_back(init.name);
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + (name.empty() ? "\"\"" : name);
  return out;
}

// "X, W [, B]": the optional tensors in brackets, a variadic one followed by "...".
std::string signature(const std::vector<TensorSpec>& specs, std::size_t required) {
  std::string out;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (k == required) out += k ? " [" : "[";
    out += (k ? ", " : "") + specs[k].name + (specs[k].variadic ? "..." : "");
  }
  return specs.size() > required ? out + "]" : out;
}

std::string described(const TensorInfo& info) {
  return std::string(dtype_name(info.dtype)) + " " + to_string(info.shape);
}

}  // namespace

Graph load_graph_argument(const std::filesystem::path& graph, const ReadOptions& options) {
  if (graph == "-") return load_graph(read_standard_input("graph"), options);
  return load_graph_path(graph, options);
}

namespace {

void print_warnings(const std::vector<std::string>& lines, std::ostream& warnings) {
  for (const std::string& line : lines) warnings << "warning: " << printable(line, std::string::npos) << "\n";
}

}  // namespace

std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph, std::ostream& warnings) {
  std::vector<std::string> lines;
  std::string bytes = nodeflow::graph_file_bytes(path, graph, &lines);
  print_warnings(lines, warnings);
  return bytes;
}

void save_graph_argument(const std::filesystem::path& path, const Graph& graph,
                         std::ostream& warnings) {
  print_warnings(save_graph_path(path, graph), warnings);
}

namespace {

// Every file run/backward read (GRAPH, -i, -g) stays as it is: none may be an output.
void refuse_command_inputs(const OutputPlan& plan, const RunRequest& request) {
  if (request.graph != "-") refuse_input_files(plan, {NamedFile{"", request.graph}}, "GRAPH");
  refuse_input_files(plan, request.inputs, "-i");
  refuse_input_files(plan, request.grad_outputs, "-g");
}

}  // namespace

void run_inference(const RunRequest& request) {
  const Graph graph = load_graph_argument(request.graph, request.read);
  check_input_names(graph, request.inputs);
  const OutputPlan plan = plan_output_files(request.outdir, graph.def().outputs, {});
  refuse_command_inputs(plan, request);
  const TensorMap feeds = read_inputs(graph, request.inputs);
  const TensorMap outputs = Executor(graph, request.executor).run(feeds, request.seed);
  write_planned_files(plan, outputs, {});
}

void run_backward(const RunRequest& request) {
  const Graph graph = load_graph_argument(request.graph, request.read);
  check_input_names(graph, request.inputs);
  check_grad_output_names(graph, request.grad_outputs);
  const OutputPlan plan =
      plan_output_files(request.outdir, graph.def().outputs, differentiable_names(graph));
  refuse_command_inputs(plan, request);
  const TensorMap feeds = read_inputs(graph, request.inputs);
  const TensorMap seeds = read_grad_outputs(graph, request.grad_outputs);
  const Executor executor(graph, request.executor);
  TrainingRun run = executor.forward(feeds, request.seed);
  const TensorMap outputs = run.outputs();
  const TensorMap grads = executor.backward(run, seeds);
  write_planned_files(plan, outputs, grads);
}

void list_ops(std::ostream& out, bool json, const OpRegistry& registry) {
  if (json) {
    out << op_schemas_json(registry);
    return;
  }
  const std::vector<std::string> names = registry.names();
  std::size_t name_width = 0;
  std::size_t definition_width = 0;
  for (const auto& name : names) {
    name_width = std::max(name_width, name.size());
    definition_width = std::max(definition_width, registry.find(name)->definition.size());
  }
  for (const auto& name : names) {
    const OpSchema& s = *registry.find(name);
    out << name << std::string(name_width - name.size() + 2, ' ') << s.definition
        << std::string(definition_width - s.definition.size() + 2, ' ')
        << signature(s.inputs, s.min_inputs) << " -> " << signature(s.outputs, s.min_outputs)
        << "\n";
  }
}

void check_graph(const std::filesystem::path& path, std::ostream& out, const ReadOptions& read) {
  const CheckReport report = nodeflow::check_graph([&] { return load_graph_argument(path, read); });
  if (!report.ok()) std::rethrow_exception(report.failure);
  const Graph& graph = *report.graph;
  const GraphDef& def = graph.def();
  // Names hold no control characters (the reader refuses them); a path may.
  const std::string shown = !def.name.empty() ? def.name
                            : path == "-"     ? std::string("(standard input)")
                                              : printable(path.filename().string(), std::string::npos);
  out << "graph " << shown << ": valid\n";
  out << "inputs:\n";
  for (const auto& input : def.inputs)
    out << "  " << input.name << ": " << described(input.info) << "\n";
  if (!def.initializers.empty()) {
    out << "initializers:\n";
    for (const auto& init : def.initializers)
      out << "  " << init.name << ": " << dtype_name(init.value.dtype()) << " "
          << to_string(init.value.shape()) << (init.trainable ? " (trainable)" : "") << "\n";
  }
  out << "nodes (execution order):\n";
  for (const auto& step : graph.steps())
    out << "  " << step.node->name() << " (" << step.node->op_type() << "): " << joined(step.inputs)
        << " -> " << joined(step.outputs) << "\n";
  out << "tensors:\n";
  for (const auto& [name, info] : report.tensors) out << "  " << name << ": " << described(info) << "\n";
  out << "outputs: " << joined(def.outputs) << "\n";
  out << "parameters: " << report.parameters << " (" << report.trainable_parameters
      << " trainable)\n";
}

void convert_graph(const std::filesystem::path& in, const std::filesystem::path& out,
                   const ReadOptions& read, std::ostream& standard_output,
                   std::ostream& warnings) {
  if (out == "-") {
    const std::string text = write_graph_json(load_graph_argument(in, read).def());
    if (!standard_output.write(text.data(), static_cast<std::streamsize>(text.size())).flush())
      throw IoError("cannot write the converted document to standard output");
    return;
  }
  try {
    check_replaceable(out);
  } catch (const IoError& e) {
    // A pipe, FIFO or terminal cannot be replaced, but it can be written to;
    // nor can standard output by name (/dev/stdout redirected to a file).
    struct stat st {}, standard_output_st {};
    const bool stream = ::stat(out.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) &&
                        (!S_ISREG(st.st_mode) ||
                         (::fstat(STDOUT_FILENO, &standard_output_st) == 0 &&
                          st.st_dev == standard_output_st.st_dev &&
                          st.st_ino == standard_output_st.st_ino));
    if (stream)
      throw IoError(std::string(e.what()) + "; give - as OUT to write to standard output");
    throw;
  }
  const Graph graph = load_graph_argument(in, read);
  // A link to a file in a directory still to be made (dangling) is followed.
  if (const auto dir = final_target(out).parent_path(); !dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw IoError("cannot create output directory '" + dir.string() + "': " + ec.message());
  }
  save_graph_argument(out, graph, warnings);
}

}  // namespace nodeflow::cli
