#pragma once
// The verbs of `nodeflow` (docs/cli.md). Each throws
// nodeflow::Error (or std::exception) on a failure in the input or the run;
// main turns that into exit status 1 and an `error:` line.
#include <filesystem>
#include <iostream>
#include <ostream>

#include "apps/arguments.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow::cli {

/// The GRAPH argument of every verb: load_graph_path(graph) (ONNX for a name
/// ending in ".onnx", else JSON; serialization/graph_file.hpp), or for "-" the
/// document on standard input (a file named "-" is given as ./-).
Graph load_graph_argument(const std::filesystem::path& graph, const ReadOptions& options = {});

/// save_graph_path, printing each ONNX writer warning to `warnings` as one
/// line "warning: ...".
void save_graph_argument(const std::filesystem::path& path, const Graph& graph,
                         std::ostream& warnings = std::cerr);

/// nodeflow::graph_file_bytes, printing its warnings as save_graph_argument
/// does. For saves that commit several files as one set (train's final outputs).
std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph,
                             std::ostream& warnings = std::cerr);

/// `nodeflow run`: inference with request.threads threads and request.seed
/// (Executor::run: Dropout is the identity there, so no output depends on it
/// today); writes
/// OUTDIR/<output>.npy for every graph output. Nothing is written unless the
/// whole run succeeds.
void run_inference(const RunRequest& request);

/// `nodeflow backward`: training-mode forward (Dropout masks drawn from
/// request.seed), then backward seeded with the -g gradients (zero for outputs
/// without one), with request.threads threads. Writes the outputs as `run`
/// does and OUTDIR/<name>.grad.npy for every float graph input and trainable
/// initializer.
void run_backward(const RunRequest& request);

/// `nodeflow check`: loads and validates the graph, then prints its inputs,
/// initializers, nodes in execution order (op_type, inputs -> outputs), every
/// tensor's dtype and shape, the outputs and the parameter count to `out`.
void check_graph(const std::filesystem::path& graph, std::ostream& out,
                 const ReadOptions& read = {});

/// `nodeflow ops`: one line per registered op (op_type, definition, inputs ->
/// outputs with optional ones in brackets and "..." after a variadic one);
/// with `json`, the document of op_schemas_json (docs/ops-json.md).
void list_ops(std::ostream& out, bool json, const OpRegistry& registry = OpRegistry::global());

/// `nodeflow convert IN OUT`: loads and validates IN (JSON or ONNX, as
/// load_graph_argument reads it), then writes it to OUT, an ONNX model when OUT
/// ends in ".onnx" (save_graph_argument; its warnings go to `warnings`), else a
/// JSON document in the writer's normal form (serialization/json_writer.hpp: fixed key order and
/// layout, shortest exact numbers, base64 above 64 elements; `init` rules
/// become the values they generate). OUT's directory is made when missing (as
/// run's OUTDIR is); OUT is replaced atomically and may be IN; nothing is
/// written, and no directory made, when IN is refused. OUT "-" writes the
/// JSON document to `standard_output` instead; an OUT that cannot be replaced (a
/// pipe such as /dev/stdout of a piped command, a FIFO, a terminal, a
/// directory) is refused before IN is read, with an IoError naming it and,
/// but for a directory, suggesting "-".
void convert_graph(const std::filesystem::path& in, const std::filesystem::path& out,
                   const ReadOptions& read = {}, std::ostream& standard_output = std::cout,
                   std::ostream& warnings = std::cerr);

}  // namespace nodeflow::cli
