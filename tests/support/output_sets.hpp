#pragma once
// What the tests of saves and output sets (test_output_sets.cpp,
// test_atomic_file_injection.cpp) build and inspect: graphs with many
// outputs, their inputs, and the state a reader finds in an OUTDIR.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace nodeflow::testing {

/// A graph document with input "x" (float32 [1, width]) and `outputs` graph
/// outputs y0, y1, ... each Relu(x): one file per output, all equal.
std::string relu_fanout_graph(std::size_t outputs, std::int64_t width);

/// Writes a float32 [1, width] .npy file of base, base + 1, ...
void write_ramp(const std::filesystem::path& file, std::int64_t width, float base);

/// What a reader finds in an OUTDIR, as tests/support/outputs_check.py reports
/// it (Python's json and hashlib, independent of the writer).
struct OutdirState {
  bool manifest = false;  ///< .nodeflow-outputs.json exists
  bool matches = false;   ///< ...and every file it lists has its size and SHA-256
  std::vector<std::string> listed;             ///< the files the manifest lists
  std::map<std::string, std::string> files;    ///< every *.npy -> its SHA-256
  std::vector<std::string> stale;              ///< staging dirs, commit records, temporaries
  std::string report;                          ///< the script's output, for messages
};

/// Runs the checker on `outdir` (its output files go to `scratch`).
OutdirState inspect_outdir(const std::filesystem::path& outdir,
                           const std::filesystem::path& scratch);

/// True when strace runs here (installed, and ptrace permitted).
bool strace_works(const std::filesystem::path& scratch);

inline constexpr const char* kStrace = "/usr/bin/strace";

/// Runs `program args` in `scratch` under strace with `strace_options` (e.g.
/// {"-e", "inject=renameat:signal=SIGKILL:when=2"}), its trace to /dev/null
/// unless they say otherwise.
ProcessResult run_traced(const std::vector<std::string>& strace_options, const std::string& program,
                         const std::vector<std::string>& args,
                         const std::filesystem::path& scratch);

}  // namespace nodeflow::testing
