#include "training/trainer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "serialization/json_writer.hpp"
#include "training/chart.hpp"
#include "training/data_parallel.hpp"
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

// A tensor of the loss's dtype and shape filled with `value`: d loss / d loss
// (1), times the loss scale.
Tensor filled_like(const Tensor& t, double value) {
  Tensor one(t.dtype(), t.shape());
  visit_float_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (T& x : one.values<T>()) x = static_cast<T>(value);
  });
  return one;
}

// "NaN", "+inf" or "-inf": to_string's "-nan" shows a sign bit that means nothing.
std::string non_finite_text(double x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "+inf" : "-inf";
}

// The global batch's loss, correct predictions and samples from the ranks'
// (docs/distributed.md): the loss is the sample-weighted mean of the ranks'.
StepResult global_result(ProcessGroup& group, const StepResult& local) {
  double totals[3] = {static_cast<double>(local.samples),
                      local.loss * static_cast<double>(local.samples),
                      static_cast<double>(local.correct)};
  group.sum(DType::Float64, reinterpret_cast<std::byte*>(totals), 3);
  return {totals[1] / totals[0], std::llround(totals[2]), std::llround(totals[0])};
}

// The samples of one (micro-)batch over all ranks, of which this rank holds `n`.
std::int64_t global_count(ProcessGroup& group, std::int64_t n) {
  double count = static_cast<double>(n);
  group.sum(DType::Float64, reinterpret_cast<std::byte*>(&count), 1);
  return std::llround(count);
}

// Distinct streams derived from the one user seed.
constexpr std::uint64_t kShuffleStream = 1;
constexpr std::uint64_t kDropoutStream = 2;
constexpr std::uint64_t kRankStreams = 1000;  // + rank: the Dropout stream of rank > 0

}  // namespace

Trainer::Trainer(Graph& graph, TrainConfig config)
    : graph_(graph),
      config_(std::move(config)),
      executor_(graph_, config_.executor_options()),
      optimizer_(config_.optimizer),
      shuffle_rng_(mix_seed(config_.seed, kShuffleStream)),
      seed_(config_.seed),
      dropout_seed_(mix_seed(config_.seed, kDropoutStream)),
      scaler_(config_.loss_scaling) {
  check_bindings(graph_, config_.bindings);
  validate(config_.schedule);
  validate(config_.clipping);
  if (config_.loss_scaling.enabled) validate(config_.loss_scaling);
  if (config_.batch_size < 1) throw InvalidAttribute("batch_size must be >= 1");
  if (config_.epochs < 1) throw InvalidAttribute("epochs must be >= 1");
  if (config_.gradient_accumulation < 1)
    throw InvalidAttribute("gradient_accumulation must be >= 1");
  if (config_.checkpoint_every < 0) throw InvalidAttribute("checkpoint_every must be >= 0");
  reached_ = parameters_reached(graph_, config_.bindings.loss);
  weight_decay_ =
      weight_decay_plan(graph_, config_.optimizer.weight_decay, config_.weight_decay_overrides);
}

StepResult Trainer::step(const Batch& batch, double lr) { return step(std::span(&batch, 1), lr); }

StepResult Trainer::step(std::span<const Batch> micro_batches, double lr) {
  if (micro_batches.empty()) throw InvalidAttribute("an optimizer step needs at least one batch");
  const Bindings& b = config_.bindings;
  const bool scaling = config_.loss_scaling.enabled;
  const ClipSettings& clip = config_.clipping;
  const bool parallel = group_ != nullptr && group_->size() > 1;
  // One batch without scaling or clipping hands the gradients over as they
  // are; otherwise they are gathered in float64 (gradient_steps.hpp).
  const bool direct = micro_batches.size() == 1 && !scaling && !clip.value && !clip.max_norm;
  const auto diverged = [&](double loss) {
    // Adam with eps 0 turns a gradient that is still 0 into 0/0 = NaN weights.
    const OptimizerSettings& o = config_.optimizer;
    const bool eps0 = o.kind != OptimizerKind::SGD && o.eps == 0.0;
    return RunError("training step " + std::to_string(steps_ + 1) + ": the loss is " +
                    non_finite_text(loss) +
                    (eps0 ? " (diverged; with optimizer.eps 0, a parameter whose gradient is 0 "
                            "gets 0/0 = NaN: give eps > 0, 1e-8 by default)"
                          : " (diverged; lower the learning rate)"));
  };
  std::int64_t total = 0;
  for (const Batch& batch : micro_batches) total += batch.labels.numel();
  StepResult result;
  double weighted_loss = 0.0;
  TensorMap direct_grads;
  GradientMap grads;
  for (std::size_t i = 0; i < micro_batches.size(); ++i) {
    const Batch& batch = micro_batches[i];
    const std::uint64_t step_seed = mix_seed(dropout_seed_, static_cast<std::uint64_t>(steps_));
    TrainingRun run = executor_.forward({{b.input, batch.samples}, {b.label, batch.labels}},
                                        i == 0 ? step_seed : mix_seed(step_seed, i));
    const Tensor loss = run.outputs().at(b.loss);
    const double loss_value =
        with_context(binding_where("loss", b.loss), [&] { return scalar_value(loss); });
    const std::int64_t n = batch.labels.numel();
    const std::vector<std::int64_t> predicted =
        with_context(binding_where("prediction", b.prediction),
                     [&] { return predicted_classes(run.outputs().at(b.prediction)); });
    const std::int64_t* labels = batch.labels.data<std::int64_t>();
    for (std::size_t k = 0; k < predicted.size(); ++k)
      result.correct += predicted[k] == labels[k] ? 1 : 0;
    result.samples += n;
    weighted_loss += loss_value * static_cast<double>(n);
    // Data-parallel runs check the global batch's loss below, so that a loss
    // gone non-finite on one rank stops every rank alike.
    if (!parallel && !std::isfinite(loss_value)) throw diverged(loss_value);
    // d loss / d loss, times the loss scale: in float16 a scale past 65504
    // is inf, which the check below catches like any overflow. The inputs'
    // gradients are not wanted (a first Conv's dX is a product and a col2im).
    const TensorMap step_grads = executor_.backward(
        run, {{b.loss, filled_like(loss, scaling ? scaler_.scale() : 1.0)}}, false);
    TensorMap updates = run.initializer_updates();
    if (parallel)  // running statistics: the same on every rank (docs/distributed.md)
      average_updates(*group_, updates,
                      static_cast<double>(n) / static_cast<double>(global_count(*group_, n)));
    for (const auto& [name, value] : updates) graph_.set_initializer(name, value);
    if (direct) {
      direct_grads = step_grads;
      continue;
    }
    // The mean loss of all micro-batches weighs each one's gradient by its share.
    const double weight = static_cast<double>(n) / static_cast<double>(total);
    for (const std::string& name : reached_) {
      const Tensor& g = step_grads.at(name);
      const auto [it, inserted] = grads.try_emplace(name, DType::Float64, g.shape());
      const bool fresh = inserted;  // a lambda may not capture a structured binding (clang 14)
      double* acc = it->second.data<double>();
      visit_float_dtype(g.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* src = g.data<T>();
        for (std::int64_t k = 0; k < g.numel(); ++k)
          acc[k] = (fresh ? 0.0 : acc[k]) + weight * static_cast<double>(src[k]);
      });
    }
  }
  result.loss = weighted_loss / static_cast<double>(total);
  if (parallel) {
    // The hook of data-parallel training: the global batch's figures, and
    // the ranks' gradients summed by their share of it, before scaling and
    // clipping see them, so that every rank takes the same step.
    result = global_result(*group_, result);
    if (!std::isfinite(result.loss)) throw diverged(result.loss);
    const double share = static_cast<double>(total) / static_cast<double>(result.samples);
    sum_gradients(*group_, direct ? direct_grads : grads, reached_, share);
  }

  bool skip = false;
  if (!direct) {
    if (scaling) {
      const double scale = scaler_.scale();
      for (auto& [name, g] : grads)
        for (double& x : g.values<double>()) x /= scale;
      skip = !all_finite(grads);
      scaler_.update(skip);
    }
    if (!skip && clip.value) clip_by_value(grads, *clip.value);
    if (!skip && clip.max_norm) clip_by_norm(grads, *clip.max_norm, clip.norm_type);
  }
  if (skip) {
    ++skipped_steps_;
    spdlog::debug("step {}: inf or NaN in the scaled gradients: skipped, loss scale now {}",
                  steps_ + 1, scaler_.scale());
  } else {
    for (const std::string& name : reached_) {
      const Initializer* init = graph_.initializer(name);
      graph_.set_initializer(name, optimizer_.update(name, init->value,
                                                     direct ? direct_grads.at(name) : grads.at(name),
                                                     lr, weight_decay_.at(name), config_.threads));
    }
  }
  ++steps_;
  return result;
}

EpochMetrics Trainer::train_epoch(const Dataset& train, std::int64_t epoch) {
  validate(train);
  if (train.size() == 0) throw InvalidAttribute("the training set is empty");
  const double lr = learning_rate(config_.schedule, config_.optimizer.lr, epoch);
  if (order_.empty() || epoch != epoch_) {
    order_ = shuffled_indices(train.size(), shuffle_rng_);
    // Kept for a checkpoint inside this epoch, which only checkpoint_every or
    // a progress callback that stops can write (hashing MNIST's 188 MB costs
    // 0.3 to 1.5 s, so an epoch without them does not).
    order_data_ = config_.checkpoint_every > 0 || progress_ ? dataset_fingerprint(train) : 0;
    epoch_ = epoch;
    epoch_samples_ = 0;
    epoch_loss_sum_ = 0.0;
    epoch_correct_ = 0;
    epoch_seconds_ = 0.0;
  } else if (order_.size() != train.size()) {
    throw InvalidAttribute("the training set has " + std::to_string(train.size()) +
                           " samples, the order of the epoch being continued " +
                           std::to_string(order_.size()) + ": not the data it began with");
  } else if (order_data_ != 0 && dataset_fingerprint(train) != order_data_) {
    throw InvalidAttribute("the training set has the " + std::to_string(train.size()) +
                           " samples of the epoch being continued, but other samples, labels or "
                           "classes: not the data it began with (its order indexes that data)");
  }
  const auto batch = static_cast<std::size_t>(config_.batch_size);
  const auto accumulate = static_cast<std::size_t>(config_.gradient_accumulation);
  const std::size_t per_step = batch * accumulate;
  const std::size_t batches = (order_.size() + per_step - 1) / per_step;
  if (planned_samples_ == 0.0) planned_samples_ = static_cast<double>(train.size());
  if (group_) check_shardable(train.size(), config_.batch_size, group_->size());

  stopped_ = false;
  EpochMetrics m;
  m.epoch = epoch + 1;
  m.lr = lr;
  const Clock::time_point start = Clock::now();
  const double seconds_before = epoch_seconds_;
  const std::size_t samples_before = epoch_samples_;
  bool finished = epoch_samples_ >= order_.size();
  while (!finished) {
    const std::size_t begin = epoch_samples_;
    std::vector<Batch> micro;
    for (std::size_t at = begin; at < order_.size() && micro.size() < accumulate; at += batch) {
      const std::size_t end = std::min(order_.size(), at + batch);
      std::span<const std::size_t> samples = std::span(order_).subspan(at, end - at);
      if (group_) {  // this rank's shard of the global batch
        const Shard shard = shard_of(samples.size(), group_->rank(), group_->size());
        samples = samples.subspan(shard.first, shard.count);
      }
      micro.push_back(gather(train, samples));
    }
    const StepResult r = step(micro, lr);
    // r.samples: the global batch's, also when this rank trained a shard of it.
    epoch_samples_ = begin + static_cast<std::size_t>(r.samples);
    epoch_loss_sum_ += r.loss * static_cast<double>(r.samples);
    epoch_correct_ += r.correct;
    epoch_seconds_ = seconds_before + seconds_since(start);
    finished = epoch_samples_ >= order_.size();
    const auto seen = static_cast<std::int64_t>(epoch_samples_);
    const std::size_t k = (epoch_samples_ + per_step - 1) / per_step - 1;  // step of the epoch
    const bool log_now =
        config_.log_every > 0 && ((k + 1) % static_cast<std::size_t>(config_.log_every) == 0);
    const bool log_line = log_now && spdlog::should_log(spdlog::level::info);
    double rate = 0.0, left = 0.0;
    if (log_line || progress_) {
      const double elapsed = busy_seconds_ + seconds_since(start);
      const auto trained = static_cast<double>(done_samples_) +
                           static_cast<double>(epoch_samples_ - samples_before);
      rate = trained / std::max(elapsed, 1e-9);
      left = std::max(0.0, (planned_samples_ - trained) / std::max(rate, 1e-9));
    }
    if (log_line)
      spdlog::info(
          "epoch {}/{} batch {}/{}: loss {:.4f} accuracy {:.2f}% | {:.0f} samples/s | {} left",
          epoch + 1, config_.epochs, k + 1, batches, epoch_loss_sum_ / static_cast<double>(seen),
          100.0 * static_cast<double>(epoch_correct_) / static_cast<double>(seen), rate,
          duration_text(left));
    if (!finished && !checkpoint_.empty() && config_.checkpoint_every > 0 &&
        steps_ % config_.checkpoint_every == 0)
      save_checkpoint_now(false, false);
    if (progress_) {
      Progress p;
      p.epoch = epoch + 1;
      p.batch = static_cast<std::int64_t>(k + 1);
      p.batches = static_cast<std::int64_t>(batches);
      p.step = steps_;
      p.loss = epoch_loss_sum_ / static_cast<double>(seen);
      p.accuracy = static_cast<double>(epoch_correct_) / static_cast<double>(seen);
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
  const auto seen = static_cast<std::int64_t>(epoch_samples_);
  m.seconds = epoch_seconds_;
  m.train_loss = epoch_loss_sum_ / static_cast<double>(seen);
  m.train_accuracy = static_cast<double>(epoch_correct_) / static_cast<double>(seen);
  m.samples_per_second = static_cast<double>(seen) / std::max(m.seconds, 1e-9);
  busy_seconds_ += seconds_since(start);
  done_samples_ += static_cast<std::int64_t>(epoch_samples_ - samples_before);
  if (finished) {  // the next epoch draws a new order
    order_.clear();
    epoch_samples_ = 0;
    epoch_ = epoch + 1;
  }
  return m;
}

TrainingState Trainer::state() const {
  TrainingState s;
  s.seed = seed_;
  s.step = steps_;
  s.epoch = epoch_;
  s.epoch_samples = static_cast<std::int64_t>(epoch_samples_);
  if (!order_.empty()) {
    s.order.assign(order_.begin(), order_.end());
    s.order_data = order_data_;
  }
  s.shuffle_stream = shuffle_rng_.state();
  s.epoch_loss_sum = epoch_loss_sum_;
  s.epoch_correct = epoch_correct_;
  s.epoch_seconds = epoch_seconds_;
  s.history = history_;
  s.optimizer = config_.optimizer.kind;
  s.optimizer_state = optimizer_.state();
  s.loss_scale = config_.loss_scaling.enabled ? scaler_.scale() : 0.0;
  s.loss_scale_good_steps = config_.loss_scaling.enabled ? scaler_.good_steps() : 0;
  s.skipped_steps = skipped_steps_;
  return s;
}

void Trainer::restore(const TrainingState& s) {
  if (s.optimizer != config_.optimizer.kind)
    throw InvalidAttribute("the checkpoint was trained with the " +
                           std::string(optimizer_kind_name(s.optimizer)) +
                           " optimizer, the configuration names " +
                           std::string(optimizer_kind_name(config_.optimizer.kind)) +
                           ": its optimizer state does not carry over");
  for (const auto& [name, st] : s.optimizer_state) {
    if (reached_.count(name) == 0)
      throw InvalidAttribute("the checkpoint has optimizer state for '" + name +
                             "', which is not a parameter this configuration trains");
    const Tensor& value = graph_.initializer(name)->value;
    const DType want = value.dtype() == DType::Float16 || value.dtype() == DType::BFloat16
                           ? DType::Float32
                           : value.dtype();
    if (st.m.dtype() != want || st.m.shape() != value.shape())
      throw InvalidAttribute("the checkpoint's optimizer state of '" + name + "' is " +
                             std::string(dtype_name(st.m.dtype())) + " " +
                             to_string(st.m.shape()) + ", the parameter needs " +
                             std::string(dtype_name(want)) + " " + to_string(value.shape()));
  }
  if (static_cast<std::int64_t>(s.history.size()) != s.epoch)
    throw InvalidAttribute("the checkpoint's history holds " + std::to_string(s.history.size()) +
                           " epochs, its position is in epoch " + std::to_string(s.epoch + 1));
  if (s.epoch_samples > 0 && s.order.empty())
    throw InvalidAttribute("the checkpoint is inside an epoch but holds no data order");
  for (const std::int64_t i : s.order)
    if (i < 0 || static_cast<std::size_t>(i) >= s.order.size())
      throw InvalidAttribute("the checkpoint's data order holds index " + std::to_string(i) +
                             ", outside its " + std::to_string(s.order.size()) + " samples");
  Rng shuffle = shuffle_rng_;
  shuffle.restore(s.shuffle_stream);
  LossScaler scaler(config_.loss_scaling);
  if (config_.loss_scaling.enabled && s.loss_scale > 0)
    scaler.restore(s.loss_scale, s.loss_scale_good_steps);
  Optimizer optimizer(config_.optimizer);
  optimizer.restore_state(s.optimizer_state);
  // Everything checked: nothing below throws.
  if (s.seed != config_.seed)
    spdlog::warn(
        "the configuration's seed is {}, the checkpoint's {}: its random streams go on (the "
        "seed is the run's, fixed at its start)",
        config_.seed, s.seed);
  optimizer_ = std::move(optimizer);
  shuffle_rng_ = shuffle;
  scaler_ = scaler;
  seed_ = s.seed;
  dropout_seed_ = mix_seed(s.seed, kDropoutStream);
  steps_ = s.step;
  epoch_ = s.epoch;
  order_.assign(s.order.begin(), s.order.end());
  order_data_ = s.order_data;
  epoch_samples_ = static_cast<std::size_t>(s.epoch_samples);
  epoch_loss_sum_ = s.epoch_loss_sum;
  epoch_correct_ = s.epoch_correct;
  epoch_seconds_ = s.epoch_seconds;
  history_ = s.history;
  skipped_steps_ = s.skipped_steps;
  resumed_ = true;
}

void Trainer::save_checkpoint_now(bool epoch_end, bool last) {
  try {
    save_checkpoint(checkpoint_, graph_.def(), state());
    if (epoch_end) {
      checkpoint_epoch_ = epoch_;
      checkpoint_step_.reset();
    } else {
      checkpoint_step_ = steps_;
    }
  } catch (const IoError& err) {
    const std::string when =
        epoch_end ? "epoch " + std::to_string(epoch_) + "/" + std::to_string(config_.epochs)
                  : "epoch " + std::to_string(epoch_ + 1) + "/" + std::to_string(config_.epochs) +
                        " step " + std::to_string(steps_);
    spdlog::warn("{}: the checkpoint was not saved: {}; {}{}", when, err.what(),
                 checkpoint_status(),
                 last ? "" : epoch_end
                                 ? "; training goes on and saves it again after the next epoch"
                                 : "; training goes on and saves it again later");
  }
}

std::vector<EpochMetrics> Trainer::fit(const Dataset& train, const Dataset& test,
                                       const TrainOutputs& outputs) {
  validate(test);
  check_feeds(graph_, config_.bindings, train, config_.batch_size,
              "training (batch_size " + std::to_string(config_.batch_size) + ")");
  check_feeds(graph_, config_.bindings, test, config_.eval_batch_size,
              "evaluation (eval_batch_size " + std::to_string(config_.eval_batch_size) + ")");
  if (!outputs.chart.empty()) check_chart_name(outputs.chart);  // not an epoch later
  if (group_) {
    check_shardable(train.size(), config_.batch_size, group_->size());
    check_same_on_every_rank(*group_, initializers_fingerprint(graph_), "initial weights",
                             "every rank must load the same graph (on every host a copy of "
                             "the same file)");
    check_same_on_every_rank(*group_, dataset_fingerprint(train), "training samples",
                             "every rank must read the same dataset (on every host a copy "
                             "of the same files)");
    check_same_on_every_rank(*group_, settings_fingerprint(config_), "training settings",
                             "every rank must read the same configuration and options "
                             "(only threads, eval_batch_size and log_every may differ)");
  }
  if (!resumed_) {  // a fresh run from epoch 1
    history_.clear();
    order_.clear();
    epoch_ = 0;
  }
  resumed_ = false;
  const std::int64_t first = epoch_;
  planned_samples_ = static_cast<double>(train.size()) *
                         static_cast<double>(std::max<std::int64_t>(config_.epochs - first, 0)) -
                     static_cast<double>(epoch_samples_);
  done_samples_ = 0;
  busy_seconds_ = 0.0;
  bool chart_failed = false;
  checkpoint_ = outputs.checkpoint;
  checkpoint_epoch_.reset();
  checkpoint_step_.reset();
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
      "of batches of {}, {} lr {}, {} thread(s){}",
      reached_.size(), trained_values, graph_.name(), train.size(), test.size(), config_.epochs,
      config_.batch_size, optimizer_kind_name(config_.optimizer.kind), config_.optimizer.lr,
      config_.threads,
      group_ ? " per rank, data-parallel on " + std::to_string(group_->size()) + " ranks" : "");
  if (first >= config_.epochs)
    spdlog::info("resuming after epoch {}, step {}: the checkpoint has done all {} epoch(s) of "
                 "the configuration, nothing is left to train (a larger epochs trains on)",
                 first, steps_, config_.epochs);
  else if (first > 0 || epoch_samples_ > 0)
    spdlog::info("resuming at epoch {}/{}, step {}{}", first + 1, config_.epochs, steps_,
                 epoch_samples_ > 0
                     ? " (" + std::to_string(epoch_samples_) + " samples of the epoch done)"
                     : std::string());
  std::vector<EpochMetrics> history = history_;
  for (std::int64_t e = first; e < config_.epochs; ++e) {
    EpochMetrics m = train_epoch(train, e);
    const bool stopped = stopped_;
    if (group_)
      check_same_on_every_rank(*group_, initializers_fingerprint(graph_),
                               "weights after epoch " + std::to_string(e + 1),
                               "the ranks computed different steps, which is a bug of nodeflow "
                               "(or of the MPI library); please report it");
    const Clock::time_point eval_start = Clock::now();
    const Evaluation ev = evaluate(graph_, test, config_.bindings, config_.eval_batch_size,
                                   config_.executor_options());
    busy_seconds_ += seconds_since(eval_start);  // evaluation time counts in the estimate
    m.test_loss = ev.loss;
    m.test_accuracy = ev.confusion.accuracy();
    // A stopped epoch is not finished: the checkpoint keeps its position and
    // the history only the finished ones; the returned history shows it.
    const bool finished = epoch_ > e;  // a stop at its last step finishes it too
    if (finished) history_.push_back(m);
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
    if (!outputs.checkpoint.empty()) save_checkpoint_now(finished, last);
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
  if (skipped_steps_ > 0)
    spdlog::info("loss scaling skipped {} step(s) with inf or NaN gradients; loss scale {}",
                 skipped_steps_, scaler_.scale());
  return history;
}

void Trainer::set_process_group(ProcessGroup& group) {
  if (steps_ > 0)
    throw InvalidAttribute("set_process_group: the trainer has taken " + std::to_string(steps_) +
                           " step(s) already; a process group is set before the first");
  group_ = &group;
  // Rank 0 keeps the stream of a single process; the others draw masks of their own.
  dropout_seed_ = mix_seed(config_.seed, kDropoutStream);
  if (group.rank() > 0)
    dropout_seed_ =
        mix_seed(dropout_seed_, kRankStreams + static_cast<std::uint64_t>(group.rank()));
}

std::string Trainer::checkpoint_status() const {
  if (checkpoint_step_)
    return "the last good checkpoint is " + checkpoint_.string() + " (step " +
           std::to_string(*checkpoint_step_) + ", inside epoch " + std::to_string(epoch_ + 1) +
           " of " + std::to_string(config_.epochs) + ")";
  if (!checkpoint_epoch_) return "no checkpoint of this run has been saved";
  return "the last good checkpoint is " + checkpoint_.string() + " (epoch " +
         std::to_string(*checkpoint_epoch_) + " of " + std::to_string(config_.epochs) +
         (*checkpoint_epoch_ == config_.epochs ? ", the trained weights)" : ")");
}

}  // namespace nodeflow::training
