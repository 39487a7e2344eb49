// Data-parallel training (docs/distributed.md) without MPI: the shards of a
// batch, the refusals, and trainers on threads joined by an in-process
// ProcessGroup (ranks in one process) against one trainer on the whole batch.
// The MPI group itself is tested under mpirun by tests/mpi/.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "support/error_of.hpp"
#include "support/graph_compare.hpp"
#include "support/graph_parts.hpp"
#include "support/toy_network.hpp"
#include "training/data_parallel.hpp"
#include "training/trainer.hpp"

namespace nodeflow::training {
namespace {

using testing::f32;
using testing::same_bits;
using testing::toy_graph;

// Ranks on threads of one process: each collective waits for every rank,
// then every rank adds the posted buffers in rank order, as the MPI group
// promises.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : barrier_(size), posted_(static_cast<std::size_t>(size)) {
    for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(*this, r));
  }
  ProcessGroup& rank(int r) { return *ranks_[static_cast<std::size_t>(r)]; }

 private:
  class Rank final : public ProcessGroup {
   public:
    Rank(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(group_.posted_.size()); }
    void sum(DType dtype, std::byte* values, std::size_t count) override {
      group_.posted_[static_cast<std::size_t>(rank_)] = values;
      group_.barrier_.arrive_and_wait();
      std::vector<std::byte> result(count * dtype_size(dtype));
      visit_float_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        T* out = reinterpret_cast<T*>(result.data());
        for (std::size_t i = 0; i < count; ++i) {
          T acc = reinterpret_cast<const T*>(group_.posted_[0])[i];
          for (std::size_t r = 1; r < group_.posted_.size(); ++r)
            acc = static_cast<T>(acc + reinterpret_cast<const T*>(group_.posted_[r])[i]);
          out[i] = acc;
        }
      });
      group_.barrier_.arrive_and_wait();  // nobody reads the posted buffers any more
      std::memcpy(values, result.data(), result.size());
    }
    std::vector<std::uint64_t> all_gather(std::uint64_t value) override {
      std::uint64_t mine = value;
      group_.posted_[static_cast<std::size_t>(rank_)] = reinterpret_cast<std::byte*>(&mine);
      group_.barrier_.arrive_and_wait();
      std::vector<std::uint64_t> values;
      for (std::byte* p : group_.posted_) values.push_back(*reinterpret_cast<std::uint64_t*>(p));
      group_.barrier_.arrive_and_wait();
      return values;
    }

   private:
    ThreadGroup& group_;
    int rank_;
  };

  std::barrier<> barrier_;
  std::vector<std::byte*> posted_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

// Runs body(rank) on `size` threads; rethrows the first exception.
template <typename Body>
void on_ranks(int size, Body body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// 14 points, class 1 when x0 + x1 > 1.
Dataset parallel_toy_data() {
  return {f32({14, 2}, {0,    0,    0,     1,    1,    0,    1,    1,    0.5f, 0.2f,
                        0.9f, 0.8f, 0.1f,  0.7f, 0.6f, 0.7f, 0.3f, 0.9f, 0.8f, 0.1f,
                        0.2f, 0.2f, 0.95f, 0.4f, 0.4f, 0.4f, 0.7f, 0.9f}),
          {0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1},
          2};
}

TrainConfig parallel_toy_config(std::int64_t batch_size) {
  TrainConfig c;
  c.optimizer.lr = 0.1;
  c.optimizer.momentum = 0.9;
  c.batch_size = batch_size;
  c.epochs = 1;
  c.seed = 42;
  c.log_every = 0;
  c.bindings = {"x", "y", "loss", "logits"};
  return c;
}

TEST(DataParallel, ShardsCutABatchInRankOrderEvenly) {
  std::size_t next = 0;
  for (int r = 0; r < 3; ++r) {
    const Shard s = shard_of(10, r, 3);
    EXPECT_EQ(s.first, next);
    EXPECT_EQ(s.count, r == 0 ? 4u : 3u);
    next = s.first + s.count;
  }
  EXPECT_EQ(next, 10u);
  EXPECT_EQ(shard_of(7, 0, 1).count, 7u);
}

TEST(DataParallel, BatchesThatLeaveARankWithoutSamplesAreRefused) {
  EXPECT_NO_THROW(check_shardable(8000, 64, 2));
  EXPECT_NO_THROW(check_shardable(8000, 333, 2));  // a last batch of 8
  EXPECT_NO_THROW(check_shardable(9, 4, 1));
  EXPECT_NE(testing::error_of<InvalidAttribute>([] {
              check_shardable(8000, 1, 2);
            }).find("give batch_size >= 2"),
            std::string::npos);
  const std::string last = testing::error_of<InvalidAttribute>([] { check_shardable(9, 4, 2); });
  EXPECT_NE(last.find("the last batch of each epoch (9 samples in batches of 4) has 1 "
                      "sample(s), which cannot be cut into 2 non-empty shards (the last "
                      "rank's would hold 0); "),
            std::string::npos)
      << last;
}

TEST(DataParallel, MismatchesNameTheRanks) {
  ThreadGroup group(4);
  std::vector<std::string> messages(4);
  on_ranks(4, [&](int r) {
    const std::uint64_t value = r == 1 ? 7 : r == 3 ? 9 : 5;
    messages[static_cast<std::size_t>(r)] = testing::error_of<RunError>([&] {
      check_same_on_every_rank(group.rank(r), value, "initial weights", "load one file");
    });
  });
  for (const std::string& m : messages)
    EXPECT_EQ(m,
              "data-parallel training on 4 ranks: ranks 1, 3 have other initial weights than "
              "rank 0; load one file");
}

// Two ranks on threads and one trainer alone, each one epoch over parallel_toy_data
// in batches of `batch_size`: the ranks end with the same weights bit for
// bit; without BatchNormalization (whose ranks normalize with their shard's
// statistics) within 1e-6 of the single trainer's.
void expect_two_ranks_match_one(bool batch_norm, std::int64_t batch_size) {
  Graph alone(toy_graph({.batch_norm = batch_norm}));
  Trainer single(alone, parallel_toy_config(batch_size));
  single.train_epoch(parallel_toy_data(), 0);

  ThreadGroup group(2);
  std::vector<std::unique_ptr<Graph>> graphs;
  for (int r = 0; r < 2; ++r)
    graphs.push_back(std::make_unique<Graph>(toy_graph({.batch_norm = batch_norm})));
  std::vector<EpochMetrics> metrics(2);
  on_ranks(2, [&](int r) {
    Trainer trainer(*graphs[static_cast<std::size_t>(r)], parallel_toy_config(batch_size));
    trainer.set_process_group(group.rank(r));
    metrics[static_cast<std::size_t>(r)] = trainer.train_epoch(parallel_toy_data(), 0);
  });
  for (const Initializer& init : alone.def().initializers) {
    const Tensor& a = init.value;
    const Tensor& r0 = graphs[0]->initializer(init.name)->value;
    const Tensor& r1 = graphs[1]->initializer(init.name)->value;
    EXPECT_TRUE(same_bits(r0, r1)) << init.name;
    if (batch_norm) continue;
    for (std::int64_t i = 0; i < a.numel(); ++i)
      EXPECT_NEAR(r0.data<float>()[i], a.data<float>()[i], 1e-6) << init.name << "[" << i << "]";
  }
  // The loss and accuracy are the global batch's on every rank.
  EXPECT_EQ(metrics[0].train_accuracy, metrics[1].train_accuracy);
  EXPECT_EQ(metrics[0].train_loss, metrics[1].train_loss);
}

TEST(DataParallel, TwoRanksOnThreadsMatchOneTrainer) {
  expect_two_ranks_match_one(false, 4);  // shards of 2 and 2, the last batch 1 and 1
  expect_two_ranks_match_one(false, 5);  // shards of 3 and 2, weighted 3/5 and 2/5
}

TEST(DataParallel, BatchNormalizationStatisticsArePerRankAndRunningOnesAveraged) {
  expect_two_ranks_match_one(true, 14);  // one step on the whole set: shards of 7 and 7
  expect_two_ranks_match_one(true, 5);
}

// One step on x = [[0, 1], [2, 3], [4, 5], [6, 8]], rank 0 taking the first
// two samples and rank 1 the last two (ONNX: running = 0.9 * running + 0.1 *
// batch statistic). The running mean is the global batch's; the running
// variance is the mean of the shards' biased variances, short of the global
// batch's by the variance of the shard means: channel 0 has shard means 1 and
// 5, shard variances 1 and 1, global variance 5; channel 1 shard means 2 and
// 6.5, shard variances 1 and 2.25, global variance 6.6875.
TEST(DataParallel, RunningVarianceIsTheMeanOfTheShardVariances) {
  const Dataset data{f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 8}), {0, 1, 0, 1}, 2};
  Graph alone(toy_graph({.batch_norm = true}));
  Trainer(alone, parallel_toy_config(4)).step(gather(data, std::vector<std::size_t>{0, 1, 2, 3}), 0.1);
  testing::expect_values(alone.initializer("mean")->value, {0.48f, 0.335f});
  testing::expect_values(alone.initializer("var")->value, {1.4f, 2.46875f});

  ThreadGroup group(2);
  std::vector<std::unique_ptr<Graph>> graphs;
  for (int r = 0; r < 2; ++r) graphs.push_back(std::make_unique<Graph>(toy_graph({.batch_norm = true})));
  on_ranks(2, [&](int r) {
    Trainer trainer(*graphs[static_cast<std::size_t>(r)], parallel_toy_config(4));
    trainer.set_process_group(group.rank(r));
    const std::size_t first = r == 0 ? 0 : 2;
    trainer.step(gather(data, std::vector<std::size_t>{first, first + 1}), 0.1);
  });
  for (int r = 0; r < 2; ++r) {
    testing::expect_values(graphs[static_cast<std::size_t>(r)]->initializer("mean")->value,
                           {0.48f, 0.335f});
    testing::expect_values(graphs[static_cast<std::size_t>(r)]->initializer("var")->value,
                           {1.0f, 1.9625f});
  }
}

TEST(DataParallel, AProcessGroupIsSetBeforeTheFirstStep) {
  Graph g(toy_graph());
  Trainer trainer(g, parallel_toy_config(4));
  trainer.step(gather(parallel_toy_data(), std::vector<std::size_t>{0, 1}), 0.1);
  ThreadGroup group(1);
  EXPECT_NE(testing::error_of<InvalidAttribute>([&] {
              trainer.set_process_group(group.rank(0));
            }).find("a process group is set before the first"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeflow::training
