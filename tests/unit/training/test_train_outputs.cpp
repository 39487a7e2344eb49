// Where `nodeflow train` writes and what it refuses before training: outputs
// that name one file (which would silently replace each other), destinations
// that could only fail an epoch later, chart links kept as links, and the
// messages of a diverged loss, of bindings to the wrong tensors and of the
// time left for the largest epoch count.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_fixture.hpp"
#include "support/error_of.hpp"
#include "support/graph_parts.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"
#include "training/chart.hpp"
#include "training/evaluation.hpp"
#include "training/trainer.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using training::Dataset;
using training::TrainConfig;
using training::Trainer;

// ---------------------------------------------------------------------------
// The library: the chart follows links; fit() checks the chart's name first;
// the step's messages.

TEST(TrainChart, ReplacesTheFileALinkPointsToAndKeepsTheLink) {
  ScratchDir scratch("nodeflow-chart-link");
  const fs::path dir = scratch.path();
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "old.svg") << "old";
  fs::create_symlink("real/old.svg", dir / "existing.svg");
  fs::create_symlink("real/new.svg", dir / "dangling.svg");  // the default o.chart.svg case
  std::vector<training::EpochMetrics> history(2);
  history[0] = {
      .epoch = 1, .train_loss = 2.0, .train_accuracy = 0.5, .test_loss = 1.5, .test_accuracy = 0.5};
  history[1] = {.epoch = 2,
                .train_loss = 1.0,
                .train_accuracy = 0.75,
                .test_loss = 1.25,
                .test_accuracy = 0.6};

  for (const char* link : {"existing.svg", "dangling.svg"}) {
    training::write_chart(history, dir / link);
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / link))) << link;
  }
  for (const char* target : {"real/old.svg", "real/new.svg"}) {
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(dir / target))) << target;
    std::ifstream in(dir / target);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("<svg"), std::string::npos) << target;
  }
  // Nothing else: no leftover temporary picture or script beside either name.
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.push_back(entry.path().lexically_relative(dir).string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"dangling.svg", "existing.svg", "real", "real/new.svg",
                                             "real/old.svg"}));
}

// x [N, 2] -> Gemm(2 -> 2) = logits -> mean cross-entropy with y = loss.
// `bias` lets a test make the loss NaN.
GraphDef two_class_graph(float bias = 0.0f) {
  GraphDef g;
  g.name = "two_class";
  g.inputs = {{"x", {DType::Float32, {kDynamicDim, 2}}}, {"y", {DType::Int64, {kDynamicDim}}}};
  g.initializers = {{"W", f32({2, 2}, {0.5f, -0.5f, 0.25f, 0.75f}), true},
                    {"B", f32({2}, {bias, 0.0f}), true}};
  NodeDef fc;
  fc.op_type = "Gemm";
  fc.name = "fc";
  fc.inputs = {"x", "W", "B"};
  fc.attributes = {{"transB", std::int64_t{1}}};
  fc.specified_outputs_name = std::vector<std::string>{"logits"};
  NodeDef xent;
  xent.op_type = "SoftmaxCrossEntropyLoss";
  xent.name = "xent";
  xent.inputs = {"logits", "y"};
  xent.specified_outputs_name = std::vector<std::string>{"loss"};
  g.nodes = {fc, xent};
  g.outputs = {"logits", "loss"};
  return g;
}

Dataset four_points() { return {f32({4, 2}, {0, 0, 0, 1, 1, 0, 1, 1}), {0, 1, 1, 0}, 2}; }

TrainConfig sgd_config() {
  TrainConfig c;
  c.optimizer.lr = 0.1;
  c.batch_size = 4;
  c.epochs = 1;
  c.log_every = 0;
  c.bindings = {"x", "y", "loss", "logits"};
  return c;
}

// The error of setting up a trainer and running its first step.
std::string step_error(const GraphDef& def, const TrainConfig& config) {
  Graph g(def);
  return error_of<Error>([&] {
    Trainer trainer(g, config);
    trainer.train_epoch(four_points(), 0);
  });
}

TEST(TrainMessages, ANanLossIsCalledNaNWhateverItsSign) {
  for (const float nan :
       {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
    const std::string what = step_error(two_class_graph(nan), sgd_config());
    EXPECT_EQ(what.rfind("training step 1: the loss is NaN (diverged", 0), 0u) << what;
    EXPECT_EQ(what.find("nan"), std::string::npos) << what;
  }
}

TEST(TrainMessages, AdamWithEps0IsNamedAsTheCauseOfNaN) {
  // x's first column is 0, so W's first column gets gradient 0: m = v = 0,
  // and with eps 0 Adam's step is 0/0. Lowering the learning rate cannot help.
  const Dataset zero_column{f32({4, 2}, {0, 0, 0, 1, 0, 0, 0, 1}), {0, 1, 0, 1}, 2};
  for (const double eps : {0.0, 1e-8}) {
    TrainConfig adam = sgd_config();
    adam.optimizer.kind = training::OptimizerKind::Adam;
    adam.optimizer.lr = 0.01;
    adam.optimizer.eps = eps;
    Graph g(two_class_graph());
    Trainer trainer(g, adam);
    std::string what = "(no error)";
    try {
      for (std::int64_t e = 0; e < 2; ++e) trainer.train_epoch(zero_column, e);
    } catch (const RunError& error) {
      what = error.what();
    }
    if (eps == 0.0)
      EXPECT_EQ(what,
                "training step 2: the loss is NaN (diverged; with optimizer.eps 0, a parameter "
                "whose gradient is 0 gets 0/0 = NaN: give eps > 0, 1e-8 by default)");
    else
      EXPECT_EQ(what, "(no error)");
  }
}

TEST(TrainMessages, AWrongBindingIsNamedWithItsKeyAndTensor) {
  TrainConfig loss_on_logits = sgd_config();
  loss_on_logits.bindings.loss = "logits";
  // Known from the graph's shapes: refused before the first step.
  EXPECT_EQ(step_error(two_class_graph(), loss_on_logits),
            "bindings.loss: output 'logits' has shape [?, 2], not one element");
  TrainConfig prediction_on_loss = sgd_config();
  prediction_on_loss.bindings.prediction = "loss";
  EXPECT_EQ(step_error(two_class_graph(), prediction_on_loss),
            "bindings.prediction ('loss'): predictions must be [N, classes], got []");
}

TEST(TrainMessages, EvaluationNamesAWrongBindingToo) {
  const Graph g(two_class_graph());
  training::Bindings loss_on_logits = sgd_config().bindings;
  loss_on_logits.loss = "logits";
  try {
    training::evaluate(g, four_points(), loss_on_logits, 4);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bindings.loss: output 'logits' has shape [?, 2], not one element");
  }
}

// What spdlog's default logger prints while it lives (info and above).
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(stream_)));
    spdlog::set_level(spdlog::level::info);
  }
  ~LogCapture() {
    spdlog::set_default_logger(previous_);
    spdlog::drop("capture");  // the registry keeps it too, and it writes into stream_
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream stream_;
};

TEST(TrainMessages, TrainingNothingIsWarnedOf) {
  GraphDef frozen = two_class_graph();
  for (Initializer& init : frozen.initializers) init.trainable = false;
  Graph g(frozen);
  Trainer trainer(g, sgd_config());
  LogCapture log;
  trainer.fit(four_points(), four_points(), {});
  EXPECT_NE(log.text().find("[warning] no trainable parameter of 'two_class' gets a gradient from "
                            "the loss 'loss'"),
            std::string::npos)
      << log.text();
}

// Any positive int64 is a valid epoch count: the progress estimate must not
// overflow (samples x epochs passes int64) nor print a negative time left.
TEST(TrainMessages, TheTimeLeftOfTheLargestEpochCountIsAPositiveNumberOfHours) {
  Graph g(two_class_graph());
  TrainConfig config = sgd_config();
  config.epochs = std::numeric_limits<std::int64_t>::max();
  // The first step's update makes the weights infinite: epoch 1 ends and is
  // logged, the first step of epoch 2 stops the run (a NaN loss).
  config.optimizer.lr = 1e300;
  Trainer trainer(g, config);
  LogCapture log;
  EXPECT_THROW(trainer.fit(four_points(), four_points(), {}), RunError);
  const std::string text = log.text();
  const auto done = text.find("epoch 1/9223372036854775807 done");
  ASSERT_NE(done, std::string::npos) << text;
  const std::string line = text.substr(done, text.find('\n', done) - done);
  // 4 x (2^63 - 1) samples at any rate below 1e7 samples/s: over 1e9 hours.
  std::smatch hours;
  ASSERT_TRUE(std::regex_search(line, hours, std::regex(R"(\| ([0-9]+)h[0-5][0-9]m left$)"))) << line;
  EXPECT_GE(hours[1].length(), 10) << line;
}

// A fixed batch dimension or class count that some batch does not have is
// refused before the first step: it used to fail at the last batch of an epoch.
TEST(TrainMessages, FixedShapesThatABatchDoesNotHaveAreRefusedBeforeTraining) {
  const auto fit_error = [](const GraphDef& def, const TrainConfig& config) -> std::string {
    Graph g(def);
    Trainer trainer(g, config);
    try {
      trainer.fit(four_points(), four_points(), {});
    } catch (const InvalidGraph& e) {
      EXPECT_EQ(trainer.steps(), 0);
      return e.what();
    }
    return "(no error)";
  };
  GraphDef batch4 = two_class_graph();
  batch4.inputs[0].info.shape[0] = 4;
  TrainConfig batches_of_3 = sgd_config();
  batches_of_3.batch_size = 3;  // 4 samples: batches of 3 and 1
  EXPECT_EQ(fit_error(batch4, batches_of_3),
            "bindings.input: graph input 'x' has the fixed batch dimension 4 ([4, 2]), but training "
            "(batch_size 3) feeds a batch of 3 (4 samples); make its first dimension null (any "
            "size)");
  TrainConfig eval_by_3 = sgd_config();  // training in one batch of 4 is fine
  eval_by_3.eval_batch_size = 3;
  GraphDef labels4 = two_class_graph();
  labels4.inputs[1].info.shape[0] = 4;
  EXPECT_EQ(fit_error(labels4, eval_by_3),
            "bindings.label: graph input 'y' has the fixed batch dimension 4 ([4]), but evaluation "
            "(eval_batch_size 3) feeds a batch of 3 (4 samples); make its first dimension null (any "
            "size)");
  TrainConfig one_batch = sgd_config();
  one_batch.eval_batch_size = 4;
  EXPECT_EQ(fit_error(batch4, one_batch), "(no error)");
  Dataset three_classes = four_points();
  three_classes.num_classes = 3;
  Graph g(two_class_graph());
  try {
    training::evaluate(g, three_classes, sgd_config().bindings, 4);
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    EXPECT_STREQ(e.what(), "bindings.prediction: output 'logits' has 2 classes ([?, 2]), the dataset 3");
  }
  // A label past the graph's classes is named (found trying to break issue
  // 22: one label 10 in an npy dataset for a 10-class graph said only "the
  // dataset 11").
  three_classes.labels[2] = 2;
  try {
    training::evaluate(g, three_classes, sgd_config().bindings, 4);
    ADD_FAILURE() << "no error";
  } catch (const InvalidGraph& e) {
    EXPECT_STREQ(e.what(), "bindings.prediction: output 'logits' has 2 classes ([?, 2]), the "
                           "dataset 3 (label 2 of sample 2 of the set fed to evaluation (batch "
                           "size 4))");
  }
}

TEST(TrainChart, FitRefusesAChartNameBeforeTheFirstStep) {
  ScratchDir scratch("nodeflow-chart-name");
  Graph g(two_class_graph());
  Trainer trainer(g, sgd_config());
  const training::TrainOutputs outputs{scratch.path() / "m.csv", scratch.path() / "chart.txt",
                                       scratch.path() / "ck.json"};
  EXPECT_THROW(trainer.fit(four_points(), four_points(), outputs), InvalidAttribute);
  EXPECT_EQ(trainer.steps(), 0);
  EXPECT_TRUE(fs::is_empty(scratch.path()));
}

// ---------------------------------------------------------------------------
// The command line.

const std::string kGraph = linear_classifier_json(R"("init": {"rule": "zeros"})");

class TrainCommandOutputs : public CliTest {
 protected:
  TrainCommandOutputs() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-train-outputs") {}

  void SetUp() override {
    write_text("g.json", kGraph);
    write_text("c.json",
               R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 1, "log_every": 0})");
    fs::create_directories(dir() / "no-digits");
  }

  // `nodeflow train g.json --config c.json --data mnist` plus `args`, in dir().
  // Without digits: every refusal must come before the data is needed.
  ProcessResult train(const std::vector<std::string>& args,
                      const std::string& mnist_dir = "no-digits") const {
    std::vector<std::string> argv{"train", "g.json", "--config", "c.json", "--data",
                                  "mnist:" + mnist_dir};
    argv.insert(argv.end(), args.begin(), args.end());
    return nodeflow(argv);
  }

  // The names under dir() (recursively), sorted; the run's captured streams aside.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir())) {
      const std::string name = entry.path().lexically_relative(dir()).string();
      if (name.rfind("stdout.", 0) != 0 && name.rfind("stderr.", 0) != 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  void expect_refused(const std::vector<std::string>& args, int exit_code,
                      const std::vector<std::string>& mentioned) const {
    const std::vector<std::string> before = files();
    const ProcessResult r = train(args);
    EXPECT_EQ(r.exit_code, exit_code) << r.describe();
    const std::string first_line = r.err.substr(0, r.err.find('\n'));
    for (const std::string& m : mentioned)
      EXPECT_NE(first_line.find(m), std::string::npos) << "expected '" << m << "' in\n"
                                                       << r.describe();
    EXPECT_EQ(files(), before) << "the refused run changed the directory\n" << r.describe();
  }
};

TEST_F(TrainCommandOutputs, OutputsNamingOneFileAreRefusedBeforeAnythingIsWritten) {
  expect_refused({"-o", "same/o.json", "--predictions", "same/o.json"}, kUsage,
                 {"-o and --predictions both name same/o.json"});
  expect_refused({"-o", "o.json", "--metrics", "o.json"}, kUsage,
                 {"-o and --metrics both name o.json"});
  expect_refused({"-o", "o.json", "--chart", "c.svg", "--checkpoint", "c.svg"}, kUsage,
                 {"--chart and --checkpoint both name c.svg"});
  expect_refused({"-o", "o.json", "--metrics", "m.csv", "--predictions", "m.csv"}, kUsage,
                 {"--metrics and --predictions both name m.csv"});
  // Spelled differently, one file.
  expect_refused({"-o", "o.json", "--checkpoint", "sub/../o.json"}, kUsage,
                 {"-o o.json and --checkpoint sub/../o.json are the same file"});
  expect_refused({"-o", "o.json", "--predictions", "./o.json"}, kUsage,
                 {"-o o.json", "--predictions ./o.json", "same file"});
}

TEST_F(TrainCommandOutputs, AnOutputNamingAnInputIsRefusedBeforeAnythingIsWritten) {
  expect_refused({"-o", "o.json", "--metrics", "g.json"}, kUsage,
                 {"--metrics g.json is the file of the graph (g.json)"});
  expect_refused({"-o", "o.json", "--checkpoint", "./g.json"}, kUsage,
                 {"--checkpoint ./g.json is the file of the graph (g.json)"});
  expect_refused({"-o", "c.json"}, kUsage, {"-o c.json is the file of --config (c.json)"});
  fs::create_symlink("c.json", dir() / "c-link.json");
  expect_refused({"-o", "o.json", "--predictions", "c-link.json"}, kUsage,
                 {"--predictions c-link.json is the file of --config (c.json)"});
}

TEST_F(TrainCommandOutputs, EvalRefusesPredictionsNamingItsGraph) {
  const std::vector<std::string> before = files();
  const ProcessResult r =
      run_process({NODEFLOW_BUILT_CLI, "eval", "g.json", "--data", "mnist:no-digits", "--predictions", "./g.json"},
                  dir());
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_NE(r.err.find("--predictions ./g.json is the file of the graph (g.json)"),
            std::string::npos)
      << r.describe();
  EXPECT_EQ(files(), before);
}

TEST_F(TrainCommandOutputs, EvalChecksItsPredictionsFileBeforeEvaluating) {
  // Refused before the data are read ("no-digits" does not exist), not after
  // a whole evaluation: a directory or a FIFO in the file's place.
  fs::create_directories(dir() / "adir.npy");
  ASSERT_EQ(::mkfifo((dir() / "pipe.npy").c_str(), 0600), 0);
  for (const char* target : {"adir.npy", "pipe.npy"}) {
    const ProcessResult r =
        run_process({NODEFLOW_BUILT_CLI, "eval", "g.json", "--data", "mnist:no-digits", "--predictions", target},
                    dir());
    EXPECT_EQ(r.exit_code, kFailure) << r.describe();
    EXPECT_NE(r.err.find(std::string("--predictions: cannot write ") + target + ": it is a"),
              std::string::npos)
        << r.describe();
    EXPECT_EQ(r.err.find("no-digits"), std::string::npos) << r.describe();
  }
  EXPECT_TRUE(fs::is_fifo(dir() / "pipe.npy"));
}

TEST_F(TrainCommandOutputs, TrainingInPlaceMayReplaceTheGraphItTrains) {
  const ProcessResult r = train({"-o", "g.json"});
  // The refusals above come before the data; this run gets as far as the
  // missing digits, past every check of the files.
  EXPECT_EQ(r.err.find("is the file of"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("no-digits"), std::string::npos) << r.describe();
}

TEST_F(TrainCommandOutputs, ADefaultNameDerivedFromOutputCollidesToo) {
  expect_refused({"-o", "o.json", "--predictions", "o.metrics.csv"}, kUsage,
                 {"the default --metrics and --predictions both name o.metrics.csv"});
  expect_refused({"-o", "o.json", "--metrics", "o.checkpoint.json"}, kUsage,
                 {"--metrics", "the default --checkpoint", "o.checkpoint.json"});
  expect_refused({"-o", "o.json", "--checkpoint", "o.chart.svg"}, kUsage,
                 {"the default --chart", "--checkpoint", "o.chart.svg"});
}

TEST_F(TrainCommandOutputs, TwoNamesOfOneFileCollide) {
  fs::create_directories(dir() / "real");
  fs::create_directory_symlink("real", dir() / "alias");
  fs::create_symlink("real/p.npy", dir() / "p-link.npy");  // dangling: p.npy does not exist
  write_text("real/a.json", "{}");
  fs::create_hard_link(dir() / "real" / "a.json", dir() / "hard.json");
  expect_refused({"-o", "real/o.json", "--predictions", "alias/o.json"}, kUsage,
                 {"-o real/o.json and --predictions alias/o.json are the same file"});
  expect_refused({"-o", "o.json", "--metrics", "real/p.npy", "--predictions", "p-link.npy"}, kUsage,
                 {"--metrics real/p.npy and --predictions p-link.npy are the same file"});
  expect_refused({"-o", "real/a.json", "--checkpoint", "hard.json"}, kUsage,
                 {"-o real/a.json and --checkpoint hard.json are the same file"});
  // The default chart of -o, a link to the file given as --metrics.
  fs::create_symlink("real/m.svg", dir() / "o.chart.svg");
  expect_refused({"-o", "o.json", "--metrics", "real/m.svg"}, kUsage,
                 {"--metrics real/m.svg", "the default --chart o.chart.svg", "same file"});
}

TEST_F(TrainCommandOutputs, UnusableDestinationsFailBeforeTraining) {
  fs::create_directories(dir() / "isdir.json");
  expect_refused({"-o", "isdir.json"}, kFailure, {"-o: cannot write isdir.json: it is a directory"});
  fs::create_directory_symlink("isdir.json", dir() / "dirlink.json");
  expect_refused({"-o", "o.json", "--checkpoint", "dirlink.json"}, kFailure,
                 {"--checkpoint: cannot write dirlink.json (a link to isdir.json): it is a directory"});
  // Renaming over a FIFO (or a device) would replace it with a regular file.
  ASSERT_EQ(::mkfifo((dir() / "pipe.csv").c_str(), 0600), 0);
  expect_refused({"-o", "o.json", "--metrics", "pipe.csv"}, kFailure,
                 {"--metrics: cannot write pipe.csv: it is a FIFO"});
  EXPECT_TRUE(fs::is_fifo(dir() / "pipe.csv"));
  write_text("plain.txt", "a file, not a directory");
  expect_refused({"-o", "o.json", "--metrics", "plain.txt/sub/m.csv"}, kFailure,
                 {"--metrics plain.txt/sub/m.csv: plain.txt is not a directory"});
  expect_refused({"-o", "plain.txt/o.json"}, kFailure,
                 {"-o plain.txt/o.json: plain.txt is not a directory"});
  expect_refused({"-o", "o.json", "--chart", "x.txt"}, kUsage,
                 {"--chart", "x.txt", "must end in .svg or .png"});
}

TEST_F(TrainCommandOutputs, ReadOnlyDirectoriesFailBeforeTraining) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write into a read-only directory";
  fs::create_directories(dir() / "ro");
  fs::permissions(dir() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused({"-o", "ro/o.json"}, kFailure, {"-o ro/o.json: cannot write in ro"});
  expect_refused({"-o", "o.json", "--metrics", "ro/new/m.csv"}, kFailure,
                 {"--metrics ro/new/m.csv: cannot write in ro"});
  fs::permissions(dir() / "ro", fs::perms::owner_all);
}

TEST_F(TrainCommandOutputs, LinkedOutputsKeepTheirLinksAndNewDirectoriesAreMade) {
  write_blank_digits(dir() / "digits");
  fs::create_directories(dir() / "out");
  // The default chart of out/model.json, a dangling link into a missing directory.
  fs::create_symlink("../charts/chart.svg", dir() / "out" / "model.chart.svg");

  const ProcessResult r = train({"-o", "out/model.json", "--predictions", "preds/p.npy"}, "digits");
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err.find("no chart"), std::string::npos) << r.describe();
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir() / "out" / "model.chart.svg")));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir() / "charts" / "chart.svg")));
  EXPECT_TRUE(fs::is_regular_file(dir() / "preds" / "p.npy"));
  for (const char* written : {"model.json", "model.metrics.csv", "model.checkpoint.json"})
    EXPECT_TRUE(fs::is_regular_file(dir() / "out" / written)) << written;
}

TEST_F(TrainCommandOutputs, EvalCreatesTheDirectoriesOfItsPredictionsAsTrainDoes) {
  write_blank_digits(dir() / "digits");
  ASSERT_EQ(train({"-o", "model.json"}, "digits").exit_code, 0);
  const ProcessResult r =
      run_process({NODEFLOW_BUILT_CLI, "eval", "model.json", "--config", "c.json", "--data",
                   "mnist:digits", "--predictions", "new/sub/p.npy"},
                  dir());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::is_regular_file(dir() / "new" / "sub" / "p.npy"));
}

}  // namespace
}  // namespace nodeflow::testing
