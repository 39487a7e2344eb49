#pragma once
// Runs a program as the command-line tests need it: no stdin, stdout and
// stderr captured, exit status or killing signal reported, bounded in time.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace nodeflow::testing {

struct ProcessResult {
  int exit_code = -1;  ///< exit status when the program exited, else -1
  int signal = 0;      ///< the signal that ended it (0 when it exited)
  bool timed_out = false;
  std::string out;  ///< everything written to stdout
  std::string err;  ///< everything written to stderr

  /// "exit 1", "signal 11", "timed out", plus stderr: for failure messages.
  std::string describe() const;
  /// True when stderr holds an AddressSanitizer/UBSan/LeakSanitizer report
  /// (sanitized builds), which must fail a test whatever the exit status.
  bool sanitizer_report() const;
};

/// Runs argv[0] (a path, no PATH search) with the arguments argv[1..] in the
/// directory `scratch` (so relative paths in the arguments and anything the
/// program writes by accident stay there); the captured streams go through
/// files in `scratch` too. The program is killed after
/// `timeout`. Throws std::runtime_error when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& scratch,
                          std::chrono::seconds timeout = std::chrono::seconds(120));

/// A fresh directory under the system temp directory, removed with its
/// contents on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nodeflow::testing
