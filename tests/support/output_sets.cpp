#include "support/output_sets.hpp"

#include <unistd.h>

#include <sstream>
#include <stdexcept>

#include "serialization/npy.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {

// Appended piece by piece: GCC 12's -Wrestrict misfires on chains of std::string +.
std::string relu_fanout_graph(std::size_t outputs, std::int64_t width) {
  std::string names, nodes;
  for (std::size_t i = 0; i < outputs; ++i) {
    const std::string n = std::to_string(i);
    if (i > 0) {
      names += ", ";
      nodes += ",\n";
    }
    names += "\"y";
    names += n;
    names += '"';
    nodes += "{\"op_type\": \"Relu\", \"name\": \"r";
    nodes += n;
    nodes += "\", \"inputs\": [\"x\"], \"specified_outputs_name\": [\"y";
    nodes += n;
    nodes += "\"]}";
  }
  std::string graph = "{\"format\": \"nodeflow.graph\", \"version\": 1, \"name\": \"fanout\",\n";
  graph += "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [1, ";
  graph += std::to_string(width);
  graph += "]}],\n\"outputs\": [";
  graph += names;
  graph += "],\n\"nodes\": [";
  graph += nodes;
  graph += "]}\n";
  return graph;
}

void write_ramp(const std::filesystem::path& file, std::int64_t width, float base) {
  std::vector<float> values(static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = base + static_cast<float>(i);
  write_npy(file, Tensor::from<float>({1, width}, values));
}

OutdirState inspect_outdir(const std::filesystem::path& outdir,
                           const std::filesystem::path& scratch) {
  const ProcessResult r = run_process(
      {"/usr/bin/python3", NODEFLOW_TEST_SUPPORT_DIR "/outputs_check.py", outdir.string()},
      scratch);
  if (r.exit_code != 0) throw std::runtime_error("outputs_check.py: " + r.describe());
  OutdirState state;
  state.report = r.out;
  std::istringstream lines(r.out);
  std::string key, value;
  while (lines >> key >> value) {
    if (key == "manifest") state.manifest = value == "present";
    if (key == "matches") state.matches = value == "yes";
    if (key == "listed") state.listed.push_back(value);
    if (key == "stale") state.stale.push_back(value);
    if (key == "file") lines >> state.files[value];
  }
  return state;
}

bool strace_works(const std::filesystem::path& scratch) {
  if (::access(kStrace, X_OK) != 0) return false;
  return run_process({kStrace, "-f", "-o", "/dev/null", "/bin/true"}, scratch).exit_code == 0;
}

ProcessResult run_traced(const std::vector<std::string>& strace_options, const std::string& program,
                         const std::vector<std::string>& args,
                         const std::filesystem::path& scratch) {
  // LeakSanitizer (sanitized builds) cannot run under ptrace and fails the exit.
  std::vector<std::string> argv{kStrace, "-f", "-EASAN_OPTIONS=detect_leaks=0", "-o", "/dev/null"};
  argv.insert(argv.end(), strace_options.begin(), strace_options.end());  // a later -o wins
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, scratch);
}

}  // namespace nodeflow::testing
