#pragma once
// Where the command line writes its results (docs/cli.md):
// OUTDIR/<file name>.npy per graph output and OUTDIR/<file name>.grad.npy per
// gradient, with file names derived from tensor names, written as one set
// with a manifest (README, "The command line": what a reader may rely on).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "apps/arguments.hpp"
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

/// The manifest of the last complete set of files written into OUTDIR:
/// JSON {"format": "nodeflow.outputs", "version": 1, "files": [{"name":
/// "y.npy", "bytes": 128, "sha256": "<64 hex digits>"}, ...]}, files sorted
/// by name. Removed before the set's first file is replaced and written
/// after its last, so while it exists the files it lists are those of one
/// run.
inline constexpr std::string_view kManifestName = ".nodeflow-outputs.json";

/// Creates plan.outdir and writes every planned tensor of `outputs` / `grads`
/// (bfloat16 as float32, since .npy has no bfloat16) and the manifest, as one
/// set (AtomicFileGroup): every file is complete before the first is renamed
/// into place, so a failure while writing leaves every file as it was, and
/// concurrent commands writing into one OUTDIR leave the whole set of one of
/// them. Throws IoError when a directory or file cannot be written (e.g. a
/// file of the set that is a link out of OUTDIR), Error when a planned tensor
/// is missing from the maps.
void write_planned_files(const OutputPlan& plan, const TensorMap& outputs, const TensorMap& grads);

/// One file of a set written by write_file_set.
struct SetFile {
  std::filesystem::path path;  ///< in the set's directory (after links)
  std::string bytes;
};

/// Writes `files` and the manifest of kManifestName (in `directory`, "" for
/// the current one) listing them as one set (AtomicFileGroup), as
/// write_planned_files writes a run's: every file is complete before the
/// first is renamed into place, the manifest is removed before the first
/// rename and written after the last, and a commit killed half-way is
/// completed by the next save into `directory`. `train` writes its trained
/// graph, metrics and chart this way. Throws IoError (the staging failures
/// ending "; nothing was written") when a file cannot be written or is not in
/// `directory` (after links).
void write_file_set(const std::filesystem::path& directory, const std::vector<SetFile>& files);

/// True when `a` and `b` name one file: after symbolic links (the last
/// component too, even a dangling one), "." and ".." relative to the current
/// directory, or, for existing files, the same inode (hard links, bind
/// mounts). Neither file needs to exist.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

/// same_file for a file `written` and a file `read` that is only read, which
/// may be /dev/stdin, a <(...) or another /proc or /dev/fd path: fine to
/// read, so it is compared without the checks of a place to write.
bool writes_input(const std::filesystem::path& written, const std::filesystem::path& read);

/// Throws UsageError naming both when a planned file is one of `inputs` (the
/// files the command reads, given with `option`: "-i" or "-g", or "GRAPH"
/// with an empty name), which the command would otherwise replace; called
/// before anything runs.
void refuse_input_files(const OutputPlan& plan, const std::vector<NamedFile>& inputs,
                        std::string_view option);

}  // namespace nodeflow::cli
