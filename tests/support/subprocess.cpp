#include "support/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

// posix_spawn file actions that close themselves.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  void open(int fd, const std::string& path, int flags) {
    if (int rc = posix_spawn_file_actions_addopen(&actions_, fd, path.c_str(), flags, 0644);
        rc != 0)
      throw std::runtime_error("posix_spawn_file_actions_addopen: " +
                               std::string(std::strerror(rc)));
  }
  void chdir(const std::filesystem::path& dir) {
    if (int rc = posix_spawn_file_actions_addchdir_np(&actions_, dir.c_str()); rc != 0)
      throw std::runtime_error("posix_spawn_file_actions_addchdir_np: " +
                               std::string(std::strerror(rc)));
  }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

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
                          const std::filesystem::path& scratch, std::chrono::seconds timeout) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  const auto out_file = scratch / ("stdout." + tag);
  const auto err_file = scratch / ("stderr." + tag);
  FileActions actions;
  actions.open(STDIN_FILENO, "/dev/null", O_RDONLY);
  actions.open(STDOUT_FILENO, out_file.string(), O_WRONLY | O_CREAT | O_TRUNC);
  actions.open(STDERR_FILENO, err_file.string(), O_WRONLY | O_CREAT | O_TRUNC);
  actions.chdir(scratch);

  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, args[0], actions.get(), nullptr, args.data(), environ); rc != 0)
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));

  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR)
      throw std::runtime_error("waitpid: " + std::string(std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline && !result.timed_out) {
      result.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = slurp(out_file);
  result.err = slurp(err_file);
  return result;
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
