// The training configuration document: defaults, every key, and errors that
// name the JSON path.
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>

#include "support/error_of.hpp"
#include "training/train_config.hpp"

namespace nodeflow::training {
namespace {

std::string error_of(const std::string& text) {
  return testing::error_of<InvalidConfig>([&] { parse_train_config(text); });
}

TEST(TrainConfig, MinimalDocumentTakesTheDefaults) {
  const TrainConfig c = parse_train_config(R"({"optimizer": {"type": "sgd", "lr": 0.05}})");
  EXPECT_EQ(c.optimizer.kind, OptimizerKind::SGD);
  EXPECT_EQ(c.optimizer.lr, 0.05);
  EXPECT_EQ(c.optimizer.momentum, 0.0);
  EXPECT_EQ(c.schedule.kind, ScheduleKind::Constant);
  EXPECT_EQ(c.batch_size, 64);
  EXPECT_EQ(c.epochs, 10);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.threads, 1);
  EXPECT_EQ(c.bindings.input, "image");
  EXPECT_EQ(c.bindings.loss, "loss");
  EXPECT_TRUE(c.weight_decay_overrides.empty());
}

TEST(TrainConfig, ReadsEveryKey) {
  const TrainConfig c = parse_train_config(R"({
    "optimizer": {"type": "adamw", "lr": 0.002, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "weight_decay": 0.01},
    "schedule": {"type": "cosine", "lr_min": 1e-5},
    "batch_size": 32, "epochs": 4, "seed": 7, "threads": 2, "eval_batch_size": 100, "log_every": 0,
    "weight_decay_overrides": {"fc1.B": 0.5},
    "bindings": {"input": "x", "label": "y", "loss": "L", "prediction": "p"}})");
  EXPECT_EQ(c.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_EQ(c.optimizer.beta1, 0.8);
  EXPECT_EQ(c.optimizer.beta2, 0.99);
  EXPECT_EQ(c.optimizer.eps, 1e-6);
  EXPECT_EQ(c.optimizer.weight_decay, 0.01);
  EXPECT_EQ(c.schedule.kind, ScheduleKind::Cosine);
  EXPECT_EQ(c.schedule.t_max, 4);  // defaults to epochs
  EXPECT_EQ(c.schedule.lr_min, 1e-5);
  EXPECT_EQ(c.batch_size, 32);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.eval_batch_size, 100);
  EXPECT_EQ(c.log_every, 0);
  EXPECT_EQ(c.weight_decay_overrides.at("fc1.B"), 0.5);
  EXPECT_EQ(c.bindings.prediction, "p");
  const TrainConfig m = parse_train_config(
      R"({"optimizer": {"type": "sgd", "lr": 1, "momentum": 0.9, "nesterov": true},
          "schedule": {"type": "multistep", "milestones": [3, 6], "gamma": 0.2}})");
  EXPECT_TRUE(m.optimizer.nesterov);
  EXPECT_EQ(m.schedule.milestones, (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(m.schedule.gamma, 0.2);
}

TEST(TrainConfig, ErrorsNameThePath) {
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1, "momentun": 0.9}})"),
            "optimizer.momentun: unknown key (known: type, lr, momentum, nesterov, beta1, beta2, "
            "eps, weight_decay)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "rmsprop", "lr": 0.1}})"),
            "optimizer.type: expected \"sgd\", \"adam\" or \"adamw\", got 'rmsprop'");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd"}})"),
            "optimizer.lr: missing (the base learning rate)");
  EXPECT_EQ(error_of(R"({})"), "optimizer: missing (an object with type and lr)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "batch_size": 0})"),
            "batch_size: expected an integer >= 1, got 0");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 2.5})"),
            "epochs: expected an integer >= 1, got 2.5");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": -1}})"),
            "optimizer.lr: expected a finite number >= 0, got -1");
  EXPECT_EQ(
      error_of(
          R"({"optimizer": {"type": "sgd", "lr": 0.1}, "schedule": {"type": "step", "step_size": 0}})"),
      "schedule.step_size: expected an integer >= 1, got 0");
  EXPECT_EQ(
      error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "weight_decay_overrides": {"w": -1}})"),
      "weight_decay_overrides.w: expected a number >= 0, got -1");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "bindings": {"input": ""}})"),
            "bindings.input: expected a non-empty string, got ''");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "seeds": 1})"),
            "seeds: unknown key (known: optimizer, schedule, batch_size, epochs, seed, threads, "
            "eval_batch_size, "
            "log_every, weight_decay_overrides, bindings, gradient_clipping, "
            "gradient_accumulation, loss_scaling, checkpoint_every)");
  EXPECT_EQ(error_of("[1, 2]"), "configuration: expected an object, got [1, 2]");
  EXPECT_EQ(error_of("{").rfind("invalid JSON: ", 0), 0u);
}

TEST(TrainConfig, AScheduleKeyOfAnotherScheduleIsRefused) {
  // gamma with the constant schedule was accepted and silently ignored.
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "schedule": {"type": "constant", "gamma": 0.5}})"),
            "schedule.gamma: not used by the \"constant\" schedule (only by step, multistep and exponential)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "schedule": {"type": "step", "milestones": [2]}})"),
            "schedule.milestones: not used by the \"step\" schedule (only by multistep)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "schedule": {"type": "multistep", "t_max": 3}})"),
            "schedule.t_max: not used by the \"multistep\" schedule (only by cosine)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "schedule": {"type": "cosine", "step_size": 3}})"),
            "schedule.step_size: not used by the \"cosine\" schedule (only by step)");
  EXPECT_NO_THROW(parse_train_config(R"({"optimizer": {"type": "sgd", "lr": 0.1},
                         "schedule": {"type": "multistep", "milestones": [2, 4], "gamma": 0.5}})"));
}

TEST(TrainConfig, DuplicateKeysAreRefused) {
  // The graph document's rule holds here too: the earlier lr must not vanish.
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1, "lr": 10}})"),
            "optimizer.lr: duplicate key 'lr' (each key may appear once in an object)");
}

TEST(TrainConfig, LoadNamesTheFileAndWhyItCannotBeRead) {
  // A directory read as a stream is empty: it must not reach the parser as
  // "invalid JSON: unexpected end of input".
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  for (const auto& [path, reason] :
       {std::pair{std::filesystem::path("/nonexistent/train.json"), "No such file or directory"},
        std::pair{dir, "Is a directory"}}) {
    try {
      load_train_config(path);
      ADD_FAILURE() << path;
    } catch (const IoError& e) {
      EXPECT_EQ(e.what(), "cannot read training configuration " + path.string() + ": " + reason);
    }
  }
}

TEST(TrainConfig, AnOptimizerKeyOfAnotherOptimizerIsRefused) {
  // beta2 with sgd was read, range-checked and then silently ignored.
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1, "beta2": 0.5}})"),
            "optimizer.beta2: not used by the \"sgd\" optimizer (only by adam and adamw)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1, "eps": 0.5}})"),
            "optimizer.eps: not used by the \"sgd\" optimizer (only by adam and adamw)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "adamw", "lr": 0.1, "nesterov": false}})"),
            "optimizer.nesterov: not used by the \"adamw\" optimizer (only by sgd)");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "adam", "lr": 0.1, "momentum": 0}})"),
            "optimizer.momentum: not used by the \"adam\" optimizer (only by sgd)");
  EXPECT_NO_THROW(parse_train_config(R"({"optimizer": {"type": "adam", "lr": 0.1, "beta1": 0.8, "eps": 1e-6}})"));
}

TEST(TrainConfig, AnIntegerPastInt64IsCalledTooLargeNotTooSmall) {
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "seed": 18446744073709551615})"),
            "seed: expected an integer from 0 to 9223372036854775807, got 18446744073709551615");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "batch_size": 9223372036854775808})"),
            "batch_size: expected an integer from 1 to 9223372036854775807, got 9223372036854775808");
  EXPECT_EQ(error_of(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "seed": -1})"),
            "seed: expected a non-negative integer, got -1");
}

}  // namespace
}  // namespace nodeflow::training
