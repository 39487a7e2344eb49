#include "training/trainer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "serialization/json_writer.hpp"
#include "training/chart.hpp"
#include "training/evaluation.hpp"
#include "training/lr_schedule.hpp"
#include "training/metrics.hpp"
#include "training/parameters.hpp"

namespace nodeflow::training {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "1h02m", "3m07s", "12s"
std::string duration_text(double seconds) {
  // Capped at about 3e7 years: llround has no value for larger ones.
  const auto s = static_cast<long long>(std::llround(std::min(std::max(0.0, seconds), 1e15)));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

// A tensor of the loss's dtype and shape filled with ones: d loss / d loss.
Tensor ones_like(const Tensor& t) {
  Tensor one(t.dtype(), t.shape());
  visit_float_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (T& x : one.values<T>()) x = T(1);
  });
  return one;
}

// "NaN", "+inf" or "-inf": to_string's "-nan" shows a sign bit that means nothing.
std::string non_finite_text(double x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "+inf" : "-inf";
}

// Where a binding's tensor is reported: "bindings.loss ('logits')".
// Distinct streams derived from the one user seed.
constexpr std::uint64_t kShuffleStream = 1;
constexpr std::uint64_t kDropoutStream = 2;

}  // namespace

Trainer::Trainer(Graph& graph, TrainConfig config)
    : graph_(graph),
      config_(std::move(config)),
      executor_(graph_, config_.executor_options()),
      optimizer_(config_.optimizer),
      shuffle_rng_(mix_seed(config_.seed, kShuffleStream)),
      dropout_seed_(mix_seed(config_.seed, kDropoutStream)) {
  check_bindings(graph_, config_.bindings);
  validate(config_.schedule);
  if (config_.batch_size < 1) throw InvalidAttribute("batch_size must be >= 1");
  if (config_.epochs < 1) throw InvalidAttribute("epochs must be >= 1");
  reached_ = parameters_reached(graph_, config_.bindings.loss);
  weight_decay_ =
      weight_decay_plan(graph_, config_.optimizer.weight_decay, config_.weight_decay_overrides);
}

StepResult Trainer::step(const Batch& batch, double lr) {
  const Bindings& b = config_.bindings;
  TrainingRun run = executor_.forward({{b.input, batch.samples}, {b.label, batch.labels}},
                                      mix_seed(dropout_seed_, static_cast<std::uint64_t>(steps_)));
  const Tensor loss = run.outputs().at(b.loss);
  StepResult result;
  result.loss = with_context(binding_where("loss", b.loss), [&] { return scalar_value(loss); });
  result.samples = batch.labels.numel();
  const std::vector<std::int64_t> predicted =
      with_context(binding_where("prediction", b.prediction),
                   [&] { return predicted_classes(run.outputs().at(b.prediction)); });
  const std::int64_t* labels = batch.labels.data<std::int64_t>();
  for (std::size_t i = 0; i < predicted.size(); ++i)
    result.correct += predicted[i] == labels[i] ? 1 : 0;
  if (!std::isfinite(result.loss)) {
    // Adam with eps 0 turns a gradient that is still 0 into 0/0 = NaN weights.
    const OptimizerSettings& o = config_.optimizer;
    const bool eps0 = o.kind != OptimizerKind::SGD && o.eps == 0.0;
    throw RunError("training step " + std::to_string(steps_ + 1) + ": the loss is " +
                   non_finite_text(result.loss) +
                   (eps0 ? " (diverged; with optimizer.eps 0, a parameter whose gradient is 0 "
                           "gets 0/0 = NaN: give eps > 0, 1e-8 by default)"
                         : " (diverged; lower the learning rate)"));
  }

  const TensorMap grads = executor_.backward(run, {{b.loss, ones_like(loss)}});
  for (const auto& [name, value] : run.initializer_updates()) graph_.set_initializer(name, value);
  for (const std::string& name : reached_) {
    const Initializer* init = graph_.initializer(name);
    graph_.set_initializer(
        name, optimizer_.update(name, init->value, grads.at(name), lr, weight_decay_.at(name)));
  }
  ++steps_;
  return result;
}

EpochMetrics Trainer::train_epoch(const Dataset& train, std::int64_t epoch) {
  validate(train);
  if (train.size() == 0) throw InvalidAttribute("the training set is empty");
  const double lr = learning_rate(config_.schedule, config_.optimizer.lr, epoch);
  const std::vector<std::size_t> order = shuffled_indices(train.size(), shuffle_rng_);
  const auto batch = static_cast<std::size_t>(config_.batch_size);
  const std::size_t batches = (order.size() + batch - 1) / batch;
  if (planned_samples_ == 0.0) planned_samples_ = static_cast<double>(train.size());

  stopped_ = false;
  EpochMetrics m;
  m.epoch = epoch + 1;
  m.lr = lr;
  double loss_sum = 0.0;
  std::int64_t correct = 0, seen = 0;
  const Clock::time_point start = Clock::now();
  for (std::size_t k = 0; k < batches; ++k) {
    const std::size_t begin = k * batch, end = std::min(order.size(), begin + batch);
    const StepResult r = step(gather(train, std::span(order).subspan(begin, end - begin)), lr);
    loss_sum += r.loss * static_cast<double>(r.samples);
    correct += r.correct;
    seen += r.samples;
    const bool log_now =
        config_.log_every > 0 && ((k + 1) % static_cast<std::size_t>(config_.log_every) == 0);
    if (!progress_ && !(log_now && spdlog::should_log(spdlog::level::info))) continue;
    const double elapsed = busy_seconds_ + seconds_since(start);
    const double rate = static_cast<double>(done_samples_ + seen) / std::max(elapsed, 1e-9);
    const double left = std::max(
        0.0, (planned_samples_ - static_cast<double>(done_samples_ + seen)) / std::max(rate, 1e-9));
    if (log_now && spdlog::should_log(spdlog::level::info))
      spdlog::info(
          "epoch {}/{} batch {}/{}: loss {:.4f} accuracy {:.2f}% | {:.0f} samples/s | {} left",
          epoch + 1, config_.epochs, k + 1, batches, loss_sum / static_cast<double>(seen),
          100.0 * static_cast<double>(correct) / static_cast<double>(seen), rate,
          duration_text(left));
    if (progress_) {
      Progress p;
      p.epoch = epoch + 1;
      p.batch = static_cast<std::int64_t>(k + 1);
      p.batches = static_cast<std::int64_t>(batches);
      p.step = steps_;
      p.loss = loss_sum / static_cast<double>(seen);
      p.accuracy = static_cast<double>(correct) / static_cast<double>(seen);
      p.lr = lr;
      p.epochs = config_.epochs;
      p.samples_per_second = rate;
      p.eta_seconds = left;
      if (!progress_(p)) {
        stopped_ = true;
        break;
      }
    }
  }
  m.seconds = seconds_since(start);
  m.train_loss = loss_sum / static_cast<double>(seen);
  m.train_accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  m.samples_per_second = static_cast<double>(seen) / std::max(m.seconds, 1e-9);
  busy_seconds_ += m.seconds;
  done_samples_ += seen;
  return m;
}

std::vector<EpochMetrics> Trainer::fit(const Dataset& train, const Dataset& test,
                                       const TrainOutputs& outputs) {
  validate(test);
  check_feeds(graph_, config_.bindings, train, config_.batch_size,
              "training (batch_size " + std::to_string(config_.batch_size) + ")");
  check_feeds(graph_, config_.bindings, test, config_.eval_batch_size,
              "evaluation (eval_batch_size " + std::to_string(config_.eval_batch_size) + ")");
  if (!outputs.chart.empty()) check_chart_name(outputs.chart);  // not an epoch later
  std::vector<EpochMetrics> history;
  planned_samples_ = static_cast<double>(train.size()) * static_cast<double>(config_.epochs);
  done_samples_ = 0;
  busy_seconds_ = 0.0;
  bool chart_failed = false;
  checkpoint_ = outputs.checkpoint;
  checkpoint_epoch_.reset();
  std::int64_t trained_values = 0;
  for (const std::string& name : reached_)
    trained_values += graph_.initializer(name)->value.numel();
  if (reached_.empty())
    spdlog::warn(
        "no trainable parameter of '{}' gets a gradient from the loss '{}' (none, or every path "
        "to them crosses a node with training false): training changes no weight",
        graph_.name(), config_.bindings.loss);
  spdlog::info(
      "training {} parameter tensors ({} values) of '{}' on {} samples ({} held out): {} epoch(s) "
      "of batches of {}, {} lr {}, {} thread(s)",
      reached_.size(), trained_values, graph_.name(), train.size(), test.size(), config_.epochs,
      config_.batch_size, optimizer_kind_name(config_.optimizer.kind), config_.optimizer.lr,
      config_.threads);
  for (std::int64_t e = 0; e < config_.epochs; ++e) {
    EpochMetrics m = train_epoch(train, e);
    const bool stopped = stopped_;
    const Clock::time_point eval_start = Clock::now();
    const Evaluation ev = evaluate(graph_, test, config_.bindings, config_.eval_batch_size,
                                   config_.executor_options());
    busy_seconds_ += seconds_since(eval_start);  // evaluation time counts in the estimate
    m.test_loss = ev.loss;
    m.test_accuracy = ev.confusion.accuracy();
    history.push_back(m);
    const double rate = static_cast<double>(done_samples_) / std::max(busy_seconds_, 1e-9);
    spdlog::info(
        "epoch {}/{} done: lr {:.6g} | train loss {:.4f} accuracy {:.2f}% | test loss {:.4f} "
        "accuracy {:.2f}% | {:.0f} samples/s | {:.1f}s | {} left",
        m.epoch, config_.epochs, m.lr, m.train_loss, 100.0 * m.train_accuracy, m.test_loss,
        100.0 * m.test_accuracy, m.samples_per_second, m.seconds,
        duration_text((planned_samples_ - static_cast<double>(done_samples_)) /
                      std::max(rate, 1e-9)));
    // A file that cannot be written (a full disk) must not end the run: the
    // weights in memory would be lost with it.
    const bool last = m.epoch == config_.epochs || stopped;
    if (!outputs.checkpoint.empty()) {
      try {
        save_graph_file(outputs.checkpoint, graph_.def());
        checkpoint_epoch_ = m.epoch;
      } catch (const IoError& err) {
        spdlog::warn("epoch {}/{}: the checkpoint was not saved: {}; {}{}", m.epoch,
                     config_.epochs, err.what(), checkpoint_status(),
                     last ? "" : "; training goes on and saves it again after the next epoch");
      }
    }
    if (!outputs.metrics_csv.empty()) {
      try {
        write_metrics_csv(outputs.metrics_csv, history);
      } catch (const IoError& err) {
        spdlog::warn("epoch {}/{}: the metrics were not saved: {}{}", m.epoch, config_.epochs,
                     err.what(),
                     last ? "" : "; training goes on and writes the whole history after the next "
                                 "epoch");
      }
    }
    if (!outputs.chart.empty() && !chart_failed) {
      try {
        write_chart(history, outputs.chart);
      } catch (const IoError& err) {
        chart_failed = true;  // gnuplot missing or failing would fail every epoch
        spdlog::warn("no chart: {}", err.what());
      }
    }
    if (stopped) {
      spdlog::info("epoch {}/{}: stopped by the progress callback after step {}", m.epoch,
                   config_.epochs, steps_);
      break;
    }
  }
  return history;
}

std::string Trainer::checkpoint_status() const {
  if (!checkpoint_epoch_) return "no checkpoint of this run has been saved";
  return "the last good checkpoint is " + checkpoint_.string() + " (epoch " +
         std::to_string(*checkpoint_epoch_) + " of " + std::to_string(config_.epochs) +
         (*checkpoint_epoch_ == config_.epochs ? ", the trained weights)" : ")");
}

}  // namespace nodeflow::training
