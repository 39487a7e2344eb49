// nf_graph_*: loading, saving, listing and describing tensors, initializers.
#include <filesystem>
#include <string>
#include <string_view>

#include "capi/api_guard.hpp"
#include "capi/handles.hpp"
#include "capi/tensor_io.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/onnx.hpp"

using namespace nodeflow;
using namespace nodeflow::capi;

namespace {

// True for ONNX, false for JSON; InvalidArgument for another code. Enum
// arguments are passed on by reference and read with raw_code only.
bool is_onnx(const nf_format& format) {
  const std::int64_t code = raw_code(format);
  if (code != NF_FORMAT_JSON && code != NF_FORMAT_ONNX)
    throw ApiError(NF_ERR_INVALID_ARGUMENT,
                   "format " + std::to_string(code) + " is not a graph format (0 JSON, 1 ONNX)");
  return code == NF_FORMAT_ONNX;
}

// A file name of the format, for the writer that picks by name.
GraphFormat format_of(const nf_format& format) { return is_onnx(format) ? GraphFormat::Onnx : GraphFormat::Json; }

const Graph& graph_of(const nf_graph* graph) { return *require(graph, "graph")->graph; }

// The names of `list`, for counting and indexing.
std::size_t list_size(const Graph& g, const nf_tensor_list& list) {
  switch (raw_code(list)) {
    case NF_LIST_INPUTS:
      return g.def().inputs.size();
    case NF_LIST_OUTPUTS:
      return g.def().outputs.size();
    case NF_LIST_INITIALIZERS:
      return g.def().initializers.size();
    case NF_LIST_ALL:
      return g.tensor_count();
  }
  throw ApiError(NF_ERR_INVALID_ARGUMENT,
                 "list " + std::to_string(raw_code(list)) +
                     " is not a tensor list (0 inputs, 1 outputs, 2 initializers, 3 all)");
}

const std::string& list_name(const Graph& g, const nf_tensor_list& list, std::size_t index) {
  const std::size_t n = list_size(g, list);
  if (index >= n)
    throw ApiError(NF_ERR_INVALID_ARGUMENT, "index " + std::to_string(index) + " is outside the " +
                                                std::to_string(n) + " tensors of the list");
  switch (raw_code(list)) {
    case NF_LIST_INPUTS:
      return g.def().inputs[index].name;
    case NF_LIST_OUTPUTS:
      return g.def().outputs[index];
    case NF_LIST_INITIALIZERS:
      return g.def().initializers[index].name;
  }
  return g.tensor_name(index);
}

const Initializer& initializer_of(const Graph& g, const std::string& name) {
  const Initializer* init = g.initializer(name);
  if (!init)
    throw InvalidGraph("'" + printable(name, 200) + "' is not an initializer of the graph");
  return *init;
}

}  // namespace

extern "C" {

NF_API nf_status nf_graph_load_file(const char* path, nf_graph** graph) {
  return guard([&] {
    require(graph, "graph");
    *graph = new nf_graph{std::make_shared<Graph>(load_graph_path(name_arg(path, "path")))};
  });
}

NF_API nf_status nf_graph_load_buffer(const void* data, size_t size, nf_format format,
                                      const char* model_dir, nf_graph** graph) {
  return guard([&] {
    require(graph, "graph");
    if (size > 0) require(data, "data");
    const std::string_view bytes(static_cast<const char*>(data), size);
    *graph = new nf_graph{
        std::make_shared<Graph>(load_graph_bytes(bytes, format_of(format), model_dir ? model_dir : "."))};
  });
}

NF_API void nf_graph_release(nf_graph* graph) { delete graph; }

NF_API nf_status nf_graph_save_file(const nf_graph* graph, const char* path) {
  return guard([&] { save_graph_path(name_arg(path, "path"), graph_of(graph)); });
}

NF_API nf_status nf_graph_save_buffer(const nf_graph* graph, nf_format format, void* buffer,
                                      size_t capacity, size_t* size) {
  return guard([&] {
    const Graph& g = graph_of(graph);
    copy_bytes_out("the saved graph", graph_bytes(g, format_of(format)), buffer, capacity,
                   size);
  });
}

NF_API nf_status nf_graph_tensor_count(const nf_graph* graph, nf_tensor_list list, size_t* count) {
  return guard([&] { *require(count, "count") = list_size(graph_of(graph), list); });
}

NF_API nf_status nf_graph_tensor_name(const nf_graph* graph, nf_tensor_list list, size_t index,
                                      char* buffer, size_t capacity, size_t* length) {
  return guard([&] {
    const std::string& name = list_name(graph_of(graph), list, index);
    copy_string_out("the name '" + printable(name, 200) + "'", name, buffer, capacity, length);
  });
}

NF_API nf_status nf_graph_tensor_info(const nf_graph* graph, const char* name, nf_dtype* dtype,
                                      int32_t* rank, int64_t* dims, size_t dims_capacity) {
  return guard([&] {
    const Graph& g = graph_of(graph);
    const std::string n = name_arg(name, "name");
    const std::size_t slot = g.slot(n);
    if (slot == Graph::kAbsent)
      throw InvalidGraph("'" + printable(n, 200) + "' is not a tensor of the graph");
    const TensorInfo& info = g.tensor_info(slot);
    describe("tensor '" + printable(n, 200) + "'", info.dtype, info.shape, dtype, rank, dims,
             dims_capacity);
  });
}

NF_API nf_status nf_graph_initializer_trainable(const nf_graph* graph, const char* name,
                                                int32_t* trainable) {
  return guard([&] {
    require(trainable, "trainable");
    *trainable = initializer_of(graph_of(graph), name_arg(name, "name")).trainable ? 1 : 0;
  });
}

NF_API nf_status nf_graph_get_initializer(const nf_graph* graph, const char* name, void* data,
                                          size_t capacity, size_t* size) {
  return guard([&] {
    const std::string n = name_arg(name, "name");
    const Tensor& value = initializer_of(graph_of(graph), n).value;
    copy_bytes_out("initializer '" + printable(n, 200) + "'",
                   {reinterpret_cast<const char*>(value.raw()), value.nbytes()}, data, capacity,
                   size);
  });
}

NF_API nf_status nf_graph_set_initializer(nf_graph* graph, const char* name, nf_dtype dtype,
                                          int32_t rank, const int64_t* dims, const void* data,
                                          size_t size) {
  return guard([&] {
    Graph& g = *require(graph, "graph")->graph;
    const std::string n = name_arg(name, "name");
    g.set_initializer(
        n, tensor_from_host("initializer '" + printable(n, 200) + "'", raw_code(dtype), rank, dims,
                            data, size, Ownership::Copy));
  });
}

}  // extern "C"
