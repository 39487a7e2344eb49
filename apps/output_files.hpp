#pragma once
// Where the command line writes its results (graph-format.md, "Command line"):
// OUTDIR/<file name>.npy per graph output and OUTDIR/<file name>.grad.npy per
// gradient, with file names derived from tensor names.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/executor.hpp"

namespace nodeflow::cli {

/// The file-name form of a tensor name: every character outside
/// [A-Za-z0-9._-] becomes '_' ("pool:1" -> "pool_1").
std::string tensor_file_stem(std::string_view tensor_name);

/// The files one command will write, decided before anything runs so that a
/// name collision fails the command before a single file exists.
struct OutputPlan {
  std::filesystem::path outdir;  ///< made by write_planned_files, even with no file to write
  std::map<std::string, std::filesystem::path> outputs;  ///< tensor -> OUTDIR/<stem>.npy
  std::map<std::string, std::filesystem::path> grads;    ///< tensor -> OUTDIR/<stem>.grad.npy
};

/// Plans the files for `outputs` and the gradients `grads`. Throws
/// nodeflow::Error naming both tensors when two of them map to one file
/// (e.g. outputs "a:b" and "a_b", or output "x.grad" and the gradient of "x").
OutputPlan plan_output_files(const std::filesystem::path& outdir,
                             const std::vector<std::string>& outputs,
                             const std::vector<std::string>& grads);

/// Creates plan.outdir and writes every planned tensor of
/// `outputs` / `grads` (bfloat16 as float32, since .npy has no bfloat16).
/// Every file is complete (in a temporary file) before the first is renamed
/// into place, so a failure while writing leaves every file as it was. Throws
/// IoError when a directory or file cannot be written, Error when a planned
/// tensor is missing from the maps.
void write_planned_files(const OutputPlan& plan, const TensorMap& outputs, const TensorMap& grads);

}  // namespace nodeflow::cli
