// A chart's file name is data, never gnuplot code: a name holding a newline
// and `system "..."` runs nothing, and no file but the chart's own is opened
// by name, so links and FIFOs planted at the temporary names the chart used
// to take (`.m.chart.svg.tmp-PID-N`, `.m.chart.svg.gp-PID-N`) are left alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "serialization/atomic_file.hpp"
#include "support/cli_fixture.hpp"
#include "support/files.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"
#include "training/chart.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// A whole SVG of the chart: its title and closing tag.
void expect_chart(const fs::path& path) {
  ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << path;
  const std::string svg = read_bytes(path);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << path;
  EXPECT_NE(svg.find("nodeflow training"), std::string::npos) << path;
  EXPECT_NE(svg.find("</svg>"), std::string::npos) << path;
}

// The names under `dir` (recursively), sorted; run_process's captured streams aside.
std::vector<std::string> names_under(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().lexically_relative(dir).string();
    if (name.rfind("stdout.", 0) != 0 && name.rfind("stderr.", 0) != 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<training::EpochMetrics> two_epochs() {
  return {{.epoch = 1,
           .train_loss = 2.0,
           .train_accuracy = 0.5,
           .test_loss = 1.5,
           .test_accuracy = 0.5},
          {.epoch = 2,
           .train_loss = 1.0,
           .train_accuracy = 0.75,
           .test_loss = 1.25,
           .test_accuracy = 0.6}};
}

const std::string kInjection = "m\nsystem \"touch PWNED\"\n";

TEST(TrainChartSecurity, TheScriptHoldsNoFileName) {
  for (const char* ext : {".svg", ".png"}) {
    const std::string script =
        training::chart_script(two_epochs(), "out/" + kInjection + "'" + ext);
    EXPECT_EQ(script.find("PWNED"), std::string::npos) << script;
    EXPECT_EQ(script.find("system"), std::string::npos) << script;
    EXPECT_EQ(script.find("out/"), std::string::npos) << script;
    // Every `set output` sends the picture to standard output.
    for (std::size_t at = script.find("set output"); at != std::string::npos;
         at = script.find("set output", at + 1))
      EXPECT_EQ(script.substr(at, 11), "set output\n") << script;
  }
}

TEST(TrainChartSecurity, AnyFileNameGetsItsChartAndNothingElseIsWritten) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (scripts/setup.sh: gnuplot-nox)";
  ScratchDir scratch("nodeflow-chart-names");
  const std::vector<std::string> names{"it's.svg",          "say \"hi\".svg",   "back\\slash.svg",
                                       "new\nline.svg",     "cr\rand\ttab.svg", "$(touch x).svg",
                                       "`touch y`.svg",     "esc\x1b[2J.svg",   "bell\a.svg",
                                       kInjection + ".svg", "set output.svg",   "semi;colon.png"};
  for (const std::string& name : names) {
    EXPECT_NO_THROW(training::write_chart(two_epochs(), scratch.path() / name)) << name;
    const fs::path path = scratch.path() / name;
    ASSERT_TRUE(fs::is_regular_file(path)) << name;
    if (path.extension() == ".svg") {
      expect_chart(path);
    } else {
      EXPECT_EQ(read_bytes(path).substr(1, 3), "PNG") << name;
    }
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(names_under(scratch.path()), sorted);
}

// `nodeflow train` in a directory of its own, the digits of write_blank_digits.
class TrainChartCommand : public CliTest {
 protected:
  TrainChartCommand() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-chart-cli") {}

  void SetUp() override {
    if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (scripts/setup.sh: gnuplot-nox)";
    write_blank_digits(dir() / "digits");
    std::ofstream(dir() / "g.json") << linear_classifier_json(R"("init": {"rule": "zeros"})");
    std::ofstream(dir() / "c.json")
        << R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 2, "log_every": 0})";
  }

  // `prefix` (a wrapper such as /bin/sh -c ...), then the train command with `-o output`.
  ProcessResult train(const std::vector<std::string>& prefix, const std::string& output) const {
    std::vector<std::string> argv = prefix;
    for (const std::string& arg :
         {binary(), std::string("train"), std::string("g.json"),
          std::string("--config"), std::string("c.json"), std::string("--data"),
          std::string("mnist:digits"),
          std::string("-o"), output})
      argv.push_back(arg);
    return run(argv);
  }

  void expect_planted_names_left_alone(const std::string& kind) const;

  // What every run leaves besides its outputs.
  static std::vector<std::string> inputs() {
    return {"c.json",
            "digits",
            "digits/t10k-images-idx3-ubyte",
            "digits/t10k-labels-idx1-ubyte",
            "digits/train-images-idx3-ubyte",
            "digits/train-labels-idx1-ubyte",
            "g.json"};
  }
};

TEST_F(TrainChartCommand, ANewlineInTheOutputNameRunsNothingAndTheChartIsWritten) {
  const std::string out = kInjection + ".json";
  const ProcessResult r = train({}, out);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err.find("no chart"), std::string::npos) << r.describe();
  for (const fs::path& where : {dir(), fs::current_path(), fs::temp_directory_path()})
    EXPECT_FALSE(fs::exists(where / "PWNED")) << where;
  expect_chart(dir() / (kInjection + ".chart.svg"));
  std::vector<std::string> want = inputs();
  for (const char* suffix : {".json", ".metrics.csv", ".chart.svg", ".checkpoint.json"})
    want.push_back(kInjection + suffix);
  want.emplace_back(kOutputsManifestName);  // of the final set
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names_under(dir()), want);
}

// The shell plants, for its own PID (which `exec` hands to nodeflow) and the
// first counters, symbolic links to `victim` or FIFOs at the names the chart's
// picture and script used to take, then runs the command.
const char* kPlant = R"(kind=$1; shift
for n in 0 1 2 3 4 5 6 7; do
  for tag in tmp gp; do
    name=".m.chart.svg.$tag-$$-$n"
    if [ "$kind" = link ]; then ln -s victim "$name"; else mkfifo "$name"; fi
    echo "$name" >> planted
  done
done
exec "$@")";

// Plants `kind` ("link" or "fifo") with kPlant, trains into m.json and checks
// that the planted names are as they were, `victim` unchanged, the chart
// written, and nothing else created.
void TrainChartCommand::expect_planted_names_left_alone(const std::string& kind) const {
  std::ofstream(dir() / "victim") << "precious";
  const ProcessResult r = train({"/bin/sh", "-c", kPlant, "sh", kind}, "m.json");
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err.find("no chart"), std::string::npos) << r.describe();
  EXPECT_EQ(read_bytes(dir() / "victim"), "precious");
  expect_chart(dir() / "m.chart.svg");

  std::vector<std::string> want = inputs();
  std::ifstream planted(dir() / "planted");
  for (std::string name; std::getline(planted, name);) {
    want.push_back(name);
    const fs::file_status st = fs::symlink_status(dir() / name);
    if (kind == "link") {
      EXPECT_TRUE(fs::is_symlink(st)) << name;
      if (fs::is_symlink(st)) {
        EXPECT_EQ(fs::read_symlink(dir() / name), "victim") << name;
      }
    } else {
      EXPECT_TRUE(fs::is_fifo(st)) << name;
    }
  }
  EXPECT_EQ(want.size(), inputs().size() + 16);
  for (const char* name :
       {"victim", "planted", "m.json", "m.metrics.csv", "m.chart.svg", "m.checkpoint.json"})
    want.push_back(name);
  want.emplace_back(kOutputsManifestName);  // of the final set
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names_under(dir()), want);
}

// Links there used to be followed: the script and then the picture were
// written into `victim`, and the link to it was renamed into place as the chart.
TEST_F(TrainChartCommand, LinksAtTheOldTemporaryNamesAreLeftAlone) {
  expect_planted_names_left_alone("link");
}

// A FIFO there used to take the script (nodeflow waited for a reader, and
// gnuplot would run whatever the planter wrote into it).
TEST_F(TrainChartCommand, FifosAtTheOldTemporaryNamesAreLeftAlone) {
  expect_planted_names_left_alone("fifo");
}

}  // namespace
}  // namespace nodeflow::testing
