#include "training/chart.hpp"

#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"

extern char** environ;

namespace nodeflow::training {
namespace {

std::string system_reason() { return std::strerror(errno); }

std::string terminal_for(const std::filesystem::path& output) {
  check_chart_name(output);
  if (output.extension() == ".svg")
    return "svg size 1000,420 dynamic font 'sans,12' background rgb 'white'";
  return "pngcairo size 1000,420 font 'sans,10' background rgb 'white'";
}

// An anonymous file in memory (memfd_create): it has no name in any
// directory, so nobody can plant a link or a FIFO where it will be, and
// gnuplot's stdin and stdout can be whole files rather than pipes that would
// need a reader and a writer running at once.
class MemoryFile {
 public:
  explicit MemoryFile(const char* label) : fd_(::memfd_create(label, MFD_CLOEXEC)) {
    if (fd_ < 0) fail("memfd_create");
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  int fd() const { return fd_; }

  /// Writes `bytes` and goes back to the start, where gnuplot begins to read.
  void write_and_rewind(std::string_view bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const ::ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write the gnuplot script");
      done += static_cast<std::size_t>(n);
    }
    if (::lseek(fd_, 0, SEEK_SET) != 0) fail("rewind the gnuplot script");
  }

  /// Everything the file holds, whatever its offset (gnuplot's writes moved it).
  std::string contents() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("read gnuplot's picture");
    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ::ssize_t n =
          ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("read gnuplot's picture");
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
    return bytes;
  }

 private:
  [[noreturn]] static void fail(const char* step) {
    throw IoError(std::string("cannot draw the chart: ") + step + ": " + system_reason());
  }
  int fd_;
};

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

// Runs `gnuplot` reading `script` as its standard input and drawing into
// `picture` as its standard output (its stderr is ours), and waits; throws
// IoError unless it exits with 0.
void run_gnuplot(const MemoryFile& script, const MemoryFile& picture) {
  posix_spawn_file_actions_t actions;
  if (const int err = posix_spawn_file_actions_init(&actions); err != 0)
    throw IoError(std::string("cannot run gnuplot: ") + std::strerror(err));
  struct Actions {
    posix_spawn_file_actions_t* a;
    ~Actions() { posix_spawn_file_actions_destroy(a); }
  } destroy{&actions};
  // dup2 clears close-on-exec on the copies at 0 and 1; the originals close.
  int err = posix_spawn_file_actions_adddup2(&actions, script.fd(), STDIN_FILENO);
  if (err == 0) err = posix_spawn_file_actions_adddup2(&actions, picture.fd(), STDOUT_FILENO);
  if (err != 0) throw IoError(std::string("cannot run gnuplot: ") + std::strerror(err));
  char program[] = "gnuplot";
  char* argv[] = {program, nullptr};
  pid_t pid = 0;
  if (err = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ); err != 0)
    throw IoError(std::string("cannot run gnuplot (scripts/setup.sh installs gnuplot-nox): ") +
                  std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw IoError("waiting for gnuplot: " + system_reason());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw IoError("cannot run gnuplot (not found; scripts/setup.sh installs gnuplot-nox)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw IoError("gnuplot failed drawing the chart (" + status_text(status) +
                  "; its messages, if any, are above)");
}

// gnuplot exits with 0 even when writing its output failed (a file-size limit
// reaches a memfd too), leaving a prefix of the picture: that is refused
// rather than saved. A complete SVG ends with its closing tag, a complete
// PNG with the IEND chunk (length 0, type, CRC).
void check_complete(const std::string& picture, const std::filesystem::path& output) {
  if (picture.empty()) throw IoError("gnuplot exited with 0 but drew no chart");
  bool complete = false;
  if (output.extension() == ".svg") {
    const std::size_t end = picture.find_last_not_of(" \t\r\n");
    constexpr std::string_view kClose = "</svg>";
    complete = end != std::string::npos && end + 1 >= kClose.size() &&
               std::string_view(picture).substr(end + 1 - kClose.size(), kClose.size()) == kClose;
  } else {
    constexpr std::string_view kIend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
    complete = picture.size() >= kIend.size() &&
               std::string_view(picture).substr(picture.size() - kIend.size()) == kIend;
  }
  if (!complete)
    throw IoError("gnuplot's chart is incomplete (" + std::to_string(picture.size()) +
                  " bytes): one of its writes failed, a file-size limit (ulimit -f) for one");
}

}  // namespace

void check_chart_name(const std::filesystem::path& output) {
  const std::filesystem::path ext = output.extension();
  if (ext != ".svg" && ext != ".png")
    throw InvalidAttribute("chart " + output.string() + ": the file name must end in .svg or .png");
}

std::string chart_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output) {
  std::string s = "set terminal " + terminal_for(output) + "\n";
  s += "set output\n";  // standard output: the picture never goes to a named file
  s += "$history << EOD\n";
  char line[256];
  for (const EpochMetrics& m : history) {
    std::snprintf(line, sizeof line, "%lld %.9g %.9g %.9g %.9g\n", static_cast<long long>(m.epoch),
                  m.train_loss, 100.0 * m.train_accuracy, m.test_loss, 100.0 * m.test_accuracy);
    s += line;
  }
  s += "EOD\n";
  const long long last = history.empty() ? 1 : static_cast<long long>(history.back().epoch);
  s += "set xrange [0.5:" + std::to_string(last) + ".5]\n";
  if (last <= 20) s += "set xtics 1\n";
  s += "set grid\nset xlabel 'epoch'\n";
  s += "set style line 1 lw 2 pt 7 lc rgb '#1f77b4'\nset style line 2 lw 2 pt 5 lc rgb '#d62728'\n";
  s += "set multiplot layout 1,2 title 'nodeflow training'\n";
  s += "set title 'loss'\nset ylabel 'loss'\nset key top right\n";
  s += "plot $history using 1:2 with linespoints ls 1 title 'train', "
       "$history using 1:4 with linespoints ls 2 title 'test'\n";
  s += "set title 'accuracy'\nset ylabel 'accuracy (%)'\nset key bottom right\n";
  s += "plot $history using 1:3 with linespoints ls 1 title 'train', "
       "$history using 1:5 with linespoints ls 2 title 'test'\n";
  s += "unset multiplot\nset output\n";  // closes the picture (SVG's final tag)
  return s;
}

std::string render_chart(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output) {
  const std::string text = chart_script(history, output);  // refuses a wrong extension first
  MemoryFile script("nodeflow-chart-script");
  script.write_and_rewind(text);
  MemoryFile picture("nodeflow-chart-picture");
  run_gnuplot(script, picture);
  std::string bytes = picture.contents();
  check_complete(bytes, output);
  return bytes;
}

void write_chart(const std::vector<EpochMetrics>& history, const std::filesystem::path& output) {
  write_file_atomically(output, render_chart(history, output));
}

}  // namespace nodeflow::training
