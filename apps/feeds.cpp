#include "apps/feeds.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "core/errors.hpp"
#include "serialization/npy.hpp"

namespace nodeflow::cli {
namespace {

// The names may be a user's -i/-g words, which no graph check has seen.
std::string quoted_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const auto& name : names)
    out += (out.empty() ? "'" : ", '") + printable(name, std::string::npos) + "'";
  return out;
}

std::vector<std::string> graph_input_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const auto& input : graph.def().inputs) names.push_back(input.name);
  return names;
}

// Reads one tensor whose dtype the graph fixes; `what` is "input 'x'" or
// "gradient of output 'y'".
Tensor read_declared(const NamedFile& arg, DType declared, const std::string& what) {
  // read_npy names the file; the user also needs to know which -i or -g it was.
  Tensor value = [&] {
    try {
      return read_npy(arg.file);
    } catch (const Error&) {
      rethrow_with_context(what + ": ");
    }
  }();
  if (value.dtype() == declared) return value;
  if (declared == DType::BFloat16 && value.dtype() == DType::Float32)
    return value.cast(DType::BFloat16);
  throw UnsupportedDType(what + ": '" + printable(arg.file.string(), std::string::npos) + "' holds " +
                         std::string(dtype_name(value.dtype())) + " but the graph declares " +
                         std::string(dtype_name(declared)) +
                         (declared == DType::BFloat16 ? " (give bfloat16 as float32)" : ""));
}

}  // namespace

void check_input_names(const Graph& graph, const std::vector<NamedFile>& inputs) {
  const std::vector<std::string> declared = graph_input_names(graph);
  std::vector<std::string> unknown;
  std::set<std::string> given;
  for (const auto& arg : inputs) {
    given.insert(arg.name);
    if (std::find(declared.begin(), declared.end(), arg.name) == declared.end())
      unknown.push_back(arg.name);
  }
  if (!unknown.empty())
    throw Error("-i names " + quoted_list(unknown) + ", which " +
                (unknown.size() == 1 ? "is" : "are") +
                " not a graph input (graph inputs: " + quoted_list(declared) + ")");
  for (const auto& name : declared)
    if (!given.count(name))
      throw Error("missing graph input '" + name + "' (give it with -i " + name + "=FILE.npy)");
}

void check_grad_output_names(const Graph& graph, const std::vector<NamedFile>& grad_outputs) {
  const auto& outputs = graph.def().outputs;
  std::vector<std::string> unknown;
  for (const auto& arg : grad_outputs)
    if (std::find(outputs.begin(), outputs.end(), arg.name) == outputs.end())
      unknown.push_back(arg.name);
  if (!unknown.empty())
    throw Error("-g names " + quoted_list(unknown) + ", which " +
                (unknown.size() == 1 ? "is" : "are") +
                " not a graph output (graph outputs: " + quoted_list(outputs) + ")");
  for (const auto& arg : grad_outputs) {
    const DType dtype = graph.info(arg.name).dtype;
    if (!is_float(dtype))
      throw UnsupportedDType("gradient given for output '" + arg.name + "' of dtype " +
                             std::string(dtype_name(dtype)) + " (not differentiable)");
  }
}

TensorMap read_inputs(const Graph& graph, const std::vector<NamedFile>& inputs) {
  TensorMap feeds;
  for (const auto& arg : inputs)
    feeds.emplace(arg.name,
                  read_declared(arg, graph.info(arg.name).dtype, "input '" + arg.name + "'"));
  return feeds;
}

TensorMap read_grad_outputs(const Graph& graph, const std::vector<NamedFile>& grad_outputs) {
  TensorMap seeds;
  for (const auto& arg : grad_outputs)
    seeds.emplace(arg.name, read_declared(arg, graph.info(arg.name).dtype,
                                          "gradient of output '" + arg.name + "'"));
  return seeds;
}

}  // namespace nodeflow::cli
