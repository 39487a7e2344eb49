#pragma once
// Runs a program as the command-line tests need it: no stdin, stdout and
// stderr captured, exit status or killing signal reported, bounded in time.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
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

/// What run_process can do to the program besides running it.
struct ProcessOptions {
  std::chrono::milliseconds timeout = std::chrono::seconds(120);  ///< then SIGKILL, timed_out
  /// SIGKILL the program this long after it was started (a kill at a chosen
  /// point of its work); `signal` is then SIGKILL unless it ended before.
  std::optional<std::chrono::microseconds> kill_after;
  /// RLIMIT_FSIZE of the program in bytes, as `ulimit -f` sets it.
  std::optional<std::uint64_t> file_size_limit;
  /// Called with the program's process id before it is executed (it waits):
  /// for preparing files whose names depend on that id.
  std::function<void(pid_t)> before_exec;
};

/// Runs argv[0] (a path, no PATH search) with the arguments argv[1..] in the
/// directory `scratch` (so relative paths in the arguments and anything the
/// program writes by accident stay there); the captured streams go through
/// files in `scratch` too. Safe to call from several threads at once. Throws
/// std::runtime_error when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& scratch, const ProcessOptions& options);

/// run_process, killed after `timeout`.
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
