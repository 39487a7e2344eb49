// nf_trainer_*: training a graph's weights on samples and labels the host passes.
#include <algorithm>
#include <limits>
#include <string>

#include "capi/api_guard.hpp"
#include "capi/handles.hpp"
#include "capi/tensor_io.hpp"
#include "training/evaluation.hpp"
#include "training/train_config.hpp"

using namespace nodeflow;
using namespace nodeflow::capi;
using nodeflow::training::EpochMetrics;
using nodeflow::training::Progress;

namespace {

// No limit on epochs or steps.
constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

// The trainer, refused while it trains: a call from its own progress callback
// would change the data or the callback under the training loop.
nf_trainer& idle(nf_trainer* trainer) {
  nf_trainer& t = *require(trainer, "trainer");
  if (t.training)
    throw ApiError(NF_ERR_INVALID_ARGUMENT,
                   "the trainer is training: its progress callback cannot call nf_trainer_set_data or "
                   "nf_trainer_train_*");
  return t;
}

nf_trainer& trainer_of(nf_trainer* trainer) {
  nf_trainer& t = idle(trainer);
  if (t.data.size() == 0)
    throw ApiError(NF_ERR_INVALID_ARGUMENT, "the trainer has no data (nf_trainer_set_data)");
  return t;
}

// The class count: the prediction output's last dimension when the graph
// fixes it, else one more than the largest label.
std::int64_t class_count(const Graph& g, const training::Bindings& b,
                         const std::vector<std::int64_t>& labels) {
  const Shape& shape = g.info(b.prediction).shape;
  if (!shape.empty() && shape.back() > 0) return shape.back();
  return labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
}

// Trains up to `epochs` epochs and up to `steps` steps, whichever ends first
// (a step limit stops inside an epoch), or until the host's callback returns 0.
// *loss and *accuracy get the last epoch's training metrics.
void train(nf_trainer& t, std::int64_t epochs, std::int64_t steps, nf_progress_fn progress,
           void* user_data, double* loss, double* accuracy) {
  training::Trainer& trainer = *t.trainer;
  const std::int64_t last_step =
      steps > kUnlimited - trainer.steps() ? kUnlimited : trainer.steps() + steps;
  bool stop = false;
  trainer.set_progress_callback([&](const Progress& p) {
    if (progress && progress(user_data, p.epoch, p.step, p.loss, p.accuracy, p.lr) == 0)
      stop = true;
    stop = stop || p.step >= last_step;
    return !stop;
  });
  // The callback refers to this frame: cleared however training ends.
  struct Clear {
    nf_trainer& t;
    ~Clear() {
      t.trainer->set_progress_callback({});
      t.training = false;
    }
  } clear{t};
  t.training = true;
  EpochMetrics last;
  for (std::int64_t e = 0; e < epochs && !stop; ++e)
    last = trainer.train_epoch(t.data, t.next_epoch++);
  if (loss) *loss = last.train_loss;
  if (accuracy) *accuracy = last.train_accuracy;
}

// `count` (epochs or steps), or InvalidArgument when it is < 1.
std::int64_t at_least_one(std::int64_t count, const char* what) {
  if (count < 1)
    throw ApiError(NF_ERR_INVALID_ARGUMENT,
                   std::string(what) + " is " + std::to_string(count) + ", must be >= 1");
  return count;
}

}  // namespace

extern "C" {

NF_API nf_status nf_trainer_create(nf_graph* graph, const char* config_json, nf_trainer** trainer) {
  return guard([&] {
    require(trainer, "trainer");
    std::shared_ptr<Graph> g = require(graph, "graph")->graph;
    training::TrainConfig config =
        training::parse_train_config(name_arg(config_json, "config_json"));
    auto t = std::make_unique<nf_trainer>();
    t->trainer = std::make_unique<training::Trainer>(*g, std::move(config));
    t->graph = std::move(g);
    *trainer = t.release();
  });
}

NF_API void nf_trainer_release(nf_trainer* trainer) { delete trainer; }

NF_API nf_status nf_trainer_set_data(nf_trainer* trainer, nf_dtype dtype, int32_t rank,
                                     const int64_t* dims, const void* samples, size_t size,
                                     const int64_t* labels, size_t label_count) {
  return guard([&] {
    nf_trainer& t = idle(trainer);
    if (label_count > 0) require(labels, "labels");
    training::Dataset data;
    data.samples =
        tensor_from_host("samples", raw_code(dtype), rank, dims, samples, size, Ownership::Copy);
    data.labels.assign(labels, labels + label_count);
    const training::TrainConfig& c = t.trainer->config();
    data.num_classes = class_count(*t.graph, c.bindings, data.labels);
    training::validate(data);
    training::check_feeds(*t.graph, c.bindings, data, c.batch_size,
                          "training (batch_size " + std::to_string(c.batch_size) + ")");
    t.data = std::move(data);
  });
}

NF_API nf_status nf_trainer_train_epochs(nf_trainer* trainer, int64_t epochs,
                                         nf_progress_fn progress, void* user_data, double* loss,
                                         double* accuracy) {
  return guard([&] {
    train(trainer_of(trainer), at_least_one(epochs, "epochs"), kUnlimited, progress, user_data,
          loss, accuracy);
  });
}

NF_API nf_status nf_trainer_train_steps(nf_trainer* trainer, int64_t steps, nf_progress_fn progress,
                                        void* user_data, double* loss, double* accuracy) {
  return guard([&] {
    train(trainer_of(trainer), kUnlimited, at_least_one(steps, "steps"), progress, user_data, loss,
          accuracy);
  });
}

}  // extern "C"
