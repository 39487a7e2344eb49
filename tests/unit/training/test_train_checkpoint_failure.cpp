// A checkpoint that cannot be written (a full disk) must not end a training
// run, which would lose the weights in memory: it is a warning naming the
// reason and the last good checkpoint with its epoch, and training goes on. A
// final save that fails says where the last good weights are and exits 1.
// The full disk is simulated with RLIMIT_FSIZE, SIGXFSZ ignored, so that
// write() fails with EFBIG ("File too large") as it would with ENOSPC.
#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/checkpoint_text.hpp"
#include "support/files.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"
#include "training/trainer.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using training::Dataset;
using training::TrainConfig;
using training::Trainer;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The first line of `text` that holds `piece` ("" when none does).
std::string line_with(const std::string& text, const std::string& piece) {
  const std::size_t at = text.find(piece);
  if (at == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', at);
  const std::size_t start = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(start, text.find('\n', at) - start);
}

// This process's file-size limit, lowered to 0 bytes on fill() (every write
// to a regular file fails with EFBIG) and restored on free() and on
// destruction, with SIGXFSZ ignored meanwhile (it would kill the process).
class FullDisk {
 public:
  FullDisk() {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0) ADD_FAILURE() << "getrlimit";
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    if (::sigaction(SIGXFSZ, &ignore, &saved_action_) != 0) ADD_FAILURE() << "sigaction";
  }
  ~FullDisk() {
    free();
    ::sigaction(SIGXFSZ, &saved_action_, nullptr);
  }
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;

  void fill() {
    rlimit none = saved_;
    none.rlim_cur = 0;
    if (::setrlimit(RLIMIT_FSIZE, &none) != 0) ADD_FAILURE() << "setrlimit";
  }
  void free() {
    if (::setrlimit(RLIMIT_FSIZE, &saved_) != 0) ADD_FAILURE() << "setrlimit (restore)";
  }

 private:
  rlimit saved_{};
  struct sigaction saved_action_ {};
};

// spdlog's default logger while it lives: keeps the text and calls `on_line`
// with each message, the test's hook into the moments between an epoch's
// "done" line and its saves.
class LogHook {
 public:
  explicit LogHook(std::function<void(const std::string&)> on_line)
      : previous_(spdlog::default_logger()), sink_(std::make_shared<Sink>(std::move(on_line))) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("hook", sink_));
    spdlog::set_level(spdlog::level::info);
  }
  ~LogHook() {
    spdlog::set_default_logger(previous_);
    spdlog::drop("hook");
  }
  LogHook(const LogHook&) = delete;
  LogHook& operator=(const LogHook&) = delete;
  std::string text() const { return sink_->text; }

 private:
  struct Sink : spdlog::sinks::base_sink<spdlog::details::null_mutex> {
    explicit Sink(std::function<void(const std::string&)> f) : on_line(std::move(f)) {}
    void sink_it_(const spdlog::details::log_msg& msg) override {
      const std::string line(msg.payload.data(), msg.payload.size());
      text +=
          "[" + std::string(spdlog::level::to_string_view(msg.level).data()) + "] " + line + "\n";
      on_line(line);
    }
    void flush_() override {}
    std::function<void(const std::string&)> on_line;
    std::string text;
  };
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<Sink> sink_;
};

// Eight distinct images of the ten classes: enough for a few quick steps.
Dataset eight_digits() {
  Tensor samples(DType::Float32, {8, 1, 28, 28});
  float* p = samples.data<float>();
  for (std::int64_t i = 0; i < samples.numel(); ++i)
    p[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;
  return {std::move(samples), {0, 1, 2, 3, 4, 5, 6, 7}, 10};
}

const std::string kZeros = R"("init": {"rule": "zeros"})";

// SGD with lr 0.1 over batches of `batch_size` for `epochs` epochs, no step log.
TrainConfig sgd_config(std::int64_t batch_size, std::int64_t epochs) {
  TrainConfig config;
  config.optimizer.lr = 0.1;
  config.batch_size = batch_size;
  config.epochs = epochs;
  config.log_every = 0;
  return config;
}

// `nodeflow train` of the linear classifier on blank digits for `epochs`
// epochs, checkpointing to `checkpoint`, under a file-size limit smaller than
// the graph: no checkpoint and no final save can be written.
ProcessResult train_with_too_small_a_file_limit(const fs::path& dir, int epochs,
                                                const std::string& checkpoint) {
  write_blank_digits(dir / "digits");
  std::ofstream(dir / "g.json") << linear_classifier_json(kZeros);
  std::ofstream(dir / "c.json") << R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": )" +
                                       std::to_string(epochs) + R"(, "log_every": 0})";
  // 24 blocks: 12 KiB for dash's 512-byte blocks, 24 KiB for bash's 1024:
  // either holds the log and the CSV but not the 40 KiB graph (its W in base64).
  const char* kLimited = R"(trap '' XFSZ; ulimit -f 24 && exec "$@")";
  return run_process({"/bin/sh", "-c", kLimited, "sh", NODEFLOW_BUILT_CLI, "train", "g.json", "--config",
                      "c.json", "--data", "mnist:digits", "-o", "o.json", "--checkpoint",
                      checkpoint},
                     dir);
}

TEST(TrainCheckpointFailure, AFullDiskIsAWarningNamingTheLastGoodCheckpointAndTrainingGoesOn) {
  ScratchDir scratch("nodeflow-ck-full");
  const fs::path ck = scratch.path() / "ck.json";
  const fs::path csv = scratch.path() / "m.csv";
  Graph g = load_graph(linear_classifier_json(kZeros));
  Trainer trainer(g, sgd_config(4, 3));

  // The disk is full while epochs 1 and 3 save their files, free during epoch 2's.
  FullDisk disk;
  std::string epoch2_weights;
  LogHook log([&](const std::string& line) {
    if (line.rfind("epoch 1/3 done", 0) == 0 || line.rfind("epoch 3/3 done", 0) == 0) disk.fill();
    if (line.rfind("epoch 2/3 done", 0) == 0) {
      disk.free();
      epoch2_weights = write_graph_json(g.def());
    }
  });
  std::vector<training::EpochMetrics> history;
  EXPECT_NO_THROW(history = trainer.fit(eight_digits(), eight_digits(), {csv, {}, ck}));
  disk.free();
  const std::string text = log.text();
  EXPECT_EQ(history.size(), 3u) << text;
  EXPECT_EQ(trainer.steps(), 6) << text;

  // The reason is write_file_atomically's, whose wording is its own: the
  // path and the system's reason, then what fit() adds.
  const auto expect_warning = [&](const std::string& start, const fs::path& file,
                                  const std::string& end) {
    const std::string line = line_with(text, "[warning] " + start);
    EXPECT_NE(line.find(file.string()), std::string::npos) << line;
    EXPECT_NE(line.find("File too large"), std::string::npos) << line;
    EXPECT_TRUE(line.size() >= end.size() && line.substr(line.size() - end.size()) == end)
        << "expected '" << end << "' at the end of\n"
        << line << "\nin\n"
        << text;
  };
  expect_warning("epoch 1/3: the checkpoint was not saved: ", ck,
                 "; no checkpoint of this run has been saved; training goes on and saves it "
                 "again after the next epoch");
  // Epoch 3 is the last: nothing goes on, the last good checkpoint is epoch 2's.
  expect_warning("epoch 3/3: the checkpoint was not saved: ", ck,
                 "; the last good checkpoint is " + ck.string() + " (epoch 2 of 3)");
  expect_warning("epoch 1/3: the metrics were not saved: ", csv,
                 "; training goes on and writes the whole history after the next epoch");
  expect_warning("epoch 3/3: the metrics were not saved: ", csv, "File too large");
  EXPECT_EQ(count_of(text, "[warning]"), 4u) << text;

  ASSERT_EQ(trainer.checkpoint_epoch(), std::optional<std::int64_t>(2));
  EXPECT_EQ(trainer.checkpoint_status(),
            "the last good checkpoint is " + ck.string() + " (epoch 2 of 3)");
  EXPECT_EQ(graph_part(read_bytes(ck)), epoch2_weights);  // the weights of epoch 2, whole
  // The CSV of epoch 2 holds epochs 1 and 2; no temporary file is left.
  EXPECT_EQ(count_of(read_bytes(csv), "\n"), 3u);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(scratch.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ck.json", "m.csv"}));
}

TEST(TrainCheckpointFailure, TheStatusNamesTheTrainedWeightsWhenTheLastEpochWasSaved) {
  ScratchDir scratch("nodeflow-ck-last");
  const fs::path ck = scratch.path() / "ck.json";
  Graph g = load_graph(linear_classifier_json(kZeros));
  Trainer trainer(g, sgd_config(8, 2));
  EXPECT_EQ(trainer.checkpoint_status(), "no checkpoint of this run has been saved");
  LogHook log([](const std::string&) {});
  trainer.fit(eight_digits(), eight_digits(), {{}, {}, ck});
  EXPECT_EQ(trainer.checkpoint_status(),
            "the last good checkpoint is " + ck.string() + " (epoch 2 of 2, the trained weights)");
  EXPECT_EQ(graph_part(read_bytes(ck)), write_graph_json(g.def()));
}

// The command line under a file-size limit smaller than the graph: no
// checkpoint and no final save can be written. Every epoch runs, each warns,
// and the failed final save says that no weights survive, with exit status 1.
TEST(TrainCheckpointFailure, AFinalSaveThatFailsSaysWhereTheWeightsAreAndExits1) {
  ScratchDir scratch("nodeflow-ck-cli");
  const fs::path dir = scratch.path();
  const ProcessResult r = train_with_too_small_a_file_limit(dir, 2, "ck.json");
  EXPECT_FALSE(r.sanitizer_report()) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("epoch 2/2 done"), std::string::npos) << r.describe();
  for (const char* epoch : {"1/2", "2/2"}) {
    const std::string line = line_with(
        r.err, std::string("[warning] epoch ") + epoch + ": the checkpoint was not saved: ");
    EXPECT_NE(line.find("ck.json"), std::string::npos) << r.describe();
    EXPECT_NE(line.find("File too large; no checkpoint of this run has been saved"),
              std::string::npos)
        << r.describe();
  }
  const std::string last = line_with(r.err, "error: the trained graph was not saved: ");
  EXPECT_NE(last.find("o.json"), std::string::npos) << r.describe();
  // The final set (OUT.json, the metrics, the chart) is staged whole first: none is replaced.
  EXPECT_NE(last.find("File too large; nothing was written; no checkpoint of this run has been "
                      "saved: the trained weights are lost; make room and train again"),
            std::string::npos)
      << r.describe();
  EXPECT_FALSE(fs::exists(dir / "o.json"));
  EXPECT_FALSE(fs::exists(dir / "ck.json"));
}

// A warning quotes the checkpoint's path; control characters in it (a
// terminal escape, a bell) come out escaped, as in `error:` lines, so a log
// cannot clear the screen or forge a line.
TEST(TrainCheckpointFailure, WarningsEscapeControlCharactersOfThePaths) {
  ScratchDir scratch("nodeflow-ck-escape");
  const ProcessResult r = train_with_too_small_a_file_limit(scratch.path(), 1, "ck\x1b[2J\a.json");
  EXPECT_FALSE(r.sanitizer_report()) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const std::string line = line_with(r.err, "[warning] epoch 1/1: the checkpoint was not saved: ");
  EXPECT_NE(line.find(R"(ck\x1b[2J\x07.json)"), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find('\a'), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace nodeflow::testing
