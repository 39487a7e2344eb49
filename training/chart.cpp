#include "training/chart.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"

extern char** environ;

namespace nodeflow::training {
namespace {

// A gnuplot single-quoted string: quotes are doubled, nothing else is special.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string terminal_for(const std::filesystem::path& output) {
  check_chart_name(output);
  if (output.extension() == ".svg")
    return "svg size 1000,420 dynamic font 'sans,12' background rgb 'white'";
  return "pngcairo size 1000,420 font 'sans,10' background rgb 'white'";
}

std::filesystem::path sibling_temp(const std::filesystem::path& output, const std::string& tag) {
  static std::atomic<unsigned> counter{0};
  std::string name(".");
  name += output.filename().string();
  name += "." + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  return output.parent_path() / name;
}

// Runs `gnuplot script` and waits; throws IoError unless it exits with 0.
void run_gnuplot(const std::filesystem::path& script) {
  const std::string file = script.string();
  char program[] = "gnuplot";
  std::vector<char> arg(file.begin(), file.end());
  arg.push_back('\0');
  char* argv[] = {program, arg.data(), nullptr};
  pid_t pid = 0;
  if (const int err = posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ); err != 0)
    throw IoError(std::string("cannot run gnuplot (scripts/setup.sh installs gnuplot-nox): ") +
                  std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw IoError(std::string("waiting for gnuplot: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw IoError("cannot run gnuplot (not found; scripts/setup.sh installs gnuplot-nox)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw IoError("gnuplot failed drawing the chart (status " + std::to_string(status) + ")");
}

// The script drawing with the terminal of `output`'s extension into `drawn`.
std::string build_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output, const std::filesystem::path& drawn) {
  std::string s = "set terminal " + terminal_for(output) + "\n";
  s += "set output " + quoted(drawn.string()) + "\n";
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
  s += "unset multiplot\nset output\n";
  return s;
}

}  // namespace

void check_chart_name(const std::filesystem::path& output) {
  const std::filesystem::path ext = output.extension();
  if (ext != ".svg" && ext != ".png")
    throw InvalidAttribute("chart " + output.string() + ": the file name must end in .svg or .png");
}

std::string chart_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output) {
  return build_script(history, output, output);
}

void write_chart(const std::vector<EpochMetrics>& history, const std::filesystem::path& output) {
  // Renaming onto a link would replace the link, not the file it names.
  const std::filesystem::path target = final_target(output);
  const std::filesystem::path picture = sibling_temp(target, "tmp");
  const std::filesystem::path script = sibling_temp(target, "gp");
  const std::string text = build_script(history, output, picture);
  struct Cleanup {
    std::filesystem::path a, b;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove(a, ec);
      std::filesystem::remove(b, ec);
    }
  } cleanup{picture, script};
  {
    std::ofstream out(script, std::ios::binary);
    out << text;
    if (!out.flush()) throw IoError("cannot write the gnuplot script " + script.string());
  }
  run_gnuplot(script);
  std::error_code ec;
  std::filesystem::rename(picture, target, ec);
  if (ec) throw IoError("cannot move the chart into " + output.string() + ": " + ec.message());
}

}  // namespace nodeflow::training
