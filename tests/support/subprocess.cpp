#include "support/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace nodeflow::testing {
namespace {

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The child's side of run_process, between fork and exec: only
// async-signal-safe calls (another thread may hold any lock).
[[noreturn]] void exec_child(char* const* argv, const char* out_file, const char* err_file,
                             const char* dir, const std::optional<std::uint64_t>& file_size_limit,
                             int go, int go_write) {
  if (go >= 0) {
    ::close(go_write);  // else the read below never sees the end of the pipe
    char byte = 0;
    while (::read(go, &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(go);
  }
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0 || ::dup2(in, STDIN_FILENO) < 0 ||
      ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0 || ::chdir(dir) != 0)
    ::_exit(126);
  if (file_size_limit) {
    const rlimit limit{static_cast<rlim_t>(*file_size_limit),
                       static_cast<rlim_t>(*file_size_limit)};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(126);
  }
  ::execve(argv[0], argv, environ);
  ::_exit(127);
}

}  // namespace

std::string ProcessResult::describe() const {
  std::string status = timed_out     ? "timed out"
                       : signal != 0 ? "killed by signal " + std::to_string(signal)
                                     : "exit status " + std::to_string(exit_code);
  return status + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
}

bool ProcessResult::sanitizer_report() const {
  return err.find("Sanitizer") != std::string::npos ||
         err.find("runtime error:") != std::string::npos;
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& scratch, const ProcessOptions& options) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  const std::string out_file = (scratch / ("stdout." + tag)).string();
  const std::string err_file = (scratch / ("stderr." + tag)).string();
  const std::string dir = scratch.string();
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  if (::access(args[0], X_OK) != 0)
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(errno));

  int go[2] = {-1, -1};
  if (options.before_exec && ::pipe2(go, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0)
    exec_child(args.data(), out_file.c_str(), err_file.c_str(), dir.c_str(),
               options.file_size_limit, go[0], go[1]);
  const auto start = std::chrono::steady_clock::now();
  if (options.before_exec) {
    ::close(go[0]);
    try {
      options.before_exec(pid);
    } catch (...) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ::close(go[1]);
      throw;
    }
    ::close(go[1]);  // the child goes on
  }

  ProcessResult result;
  const auto deadline = start + options.timeout;
  bool killed = false;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR)
      throw std::runtime_error("waitpid: " + std::string(std::strerror(errno)));
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline && !result.timed_out) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (options.kill_after && !killed && now >= start + *options.kill_after) {
      killed = true;
      ::kill(pid, SIGKILL);
    }
    // Fine steps while a kill is due, so that it comes close to its time.
    const bool kill_due = options.kill_after && !killed;
    std::this_thread::sleep_for(kill_due ? std::chrono::microseconds(200)
                                         : std::chrono::microseconds(2000));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = slurp(out_file);
  result.err = slurp(err_file);
  return result;
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& scratch, std::chrono::seconds timeout) {
  ProcessOptions options;
  options.timeout = timeout;
  return run_process(argv, scratch, options);
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(templ.data()))
    throw std::runtime_error("mkdtemp " + templ + ": " + std::strerror(errno));
  path_ = templ;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace nodeflow::testing
