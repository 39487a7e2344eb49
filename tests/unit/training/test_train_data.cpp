// Datasets, batches, the reproducible split, classification metrics, the
// metrics CSV and the chart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/random.hpp"
#include "training/chart.hpp"
#include "training/dataset.hpp"
#include "training/heap_tuning.hpp"
#include "training/history.hpp"
#include "training/metrics.hpp"
#include "support/temp_dir.hpp"

namespace nodeflow::training {
namespace {

// Sample i is the 2x2 image filled with i; label i % 3.
Dataset numbered(std::size_t n) {
  Dataset d{Tensor(DType::Float32, {static_cast<std::int64_t>(n), 1, 2, 2}), {}, 3};
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k)
      d.samples.data<float>()[i * 4 + static_cast<std::size_t>(k)] = static_cast<float>(i);
    d.labels.push_back(static_cast<std::int64_t>(i % 3));
  }
  return d;
}

TEST(Dataset, GatherCopiesRowsInTheGivenOrder) {
  const Dataset d = numbered(6);
  const std::vector<std::size_t> idx{4, 1, 1};
  const Batch b = gather(d, idx);
  EXPECT_EQ(b.samples.shape(), (Shape{3, 1, 2, 2}));
  EXPECT_EQ(b.samples.data<float>()[0], 4.0f);
  EXPECT_EQ(b.samples.data<float>()[7], 1.0f);
  EXPECT_EQ(b.labels.dtype(), DType::Int64);
  EXPECT_EQ(b.labels.data<std::int64_t>()[0], 1);
  EXPECT_EQ(b.labels.data<std::int64_t>()[1], 1);
  const std::vector<std::size_t> bad{6};
  EXPECT_THROW(gather(d, bad), ShapeMismatch);
  const Batch s = slice(d, 2, 5);
  EXPECT_EQ(s.samples.shape()[0], 3);
  EXPECT_EQ(s.samples.data<float>()[4], 3.0f);
}

TEST(Dataset, SplitIsAReproduciblePartition) {
  const Dataset d = numbered(50);
  const Split a = split(d, 40, 99), b = split(d, 40, 99), c = split(d, 40, 100);
  ASSERT_EQ(a.first.size(), 40u);
  ASSERT_EQ(a.second.size(), 10u);
  EXPECT_EQ(0, std::memcmp(a.first.samples.raw(), b.first.samples.raw(), a.first.samples.nbytes()));
  EXPECT_NE(0, std::memcmp(a.first.samples.raw(), c.first.samples.raw(), a.first.samples.nbytes()));
  // Every sample lands in exactly one part, with its own label.
  std::vector<int> seen(50, 0);
  for (const Dataset* part : {&a.first, &a.second})
    for (std::size_t i = 0; i < part->size(); ++i) {
      const auto id = static_cast<std::size_t>(part->samples.data<float>()[i * 4]);
      ++seen[id];
      EXPECT_EQ(part->labels[i], static_cast<std::int64_t>(id % 3));
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 50);
  EXPECT_THROW(split(d, 51, 1), ShapeMismatch);
}

TEST(Dataset, ShuffleIsAFisherYatesPermutation) {
  Rng rng(3);
  std::vector<std::size_t> order = shuffled_indices(100, rng);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(order, identity);
  Rng next(3);
  EXPECT_EQ(shuffled_indices(100, next), order);
}

TEST(Dataset, ValidateRefusesBadLabels) {
  Dataset d = numbered(3);
  d.labels[1] = 3;
  EXPECT_THROW(validate(d), InvalidAttribute);
  d.labels.pop_back();
  EXPECT_THROW(validate(d), ShapeMismatch);
}

TEST(Metrics, ConfusionMatrixAccuracyAndPerClass) {
  ConfusionMatrix cm(3);
  // Scores for 5 samples; predicted classes 0, 2, 2, 1, 0 (ties go to the first).
  const Tensor scores = Tensor::from<float>(
      {5, 3}, {3, 1, 2, /**/ 0, 1, 5, /**/ 1, 1, 9, /**/ 0, 4, 4, /**/ 7, 7, 7});
  EXPECT_EQ(predicted_classes(scores), (std::vector<std::int64_t>{0, 2, 2, 1, 0}));
  cm.add(scores, {0, 2, 1, 1, 2});
  EXPECT_EQ(cm.total(), 5);
  EXPECT_EQ(cm.correct(), 3);
  EXPECT_DOUBLE_EQ(cm.accuracy(), 0.6);
  EXPECT_EQ(cm.count(1, 2), 1);
  EXPECT_EQ(cm.count(2, 0), 1);
  const std::vector<double> per = cm.per_class_accuracy();
  EXPECT_DOUBLE_EQ(per[0], 1.0);
  EXPECT_DOUBLE_EQ(per[1], 0.5);
  EXPECT_DOUBLE_EQ(per[2], 0.5);
  const std::string text = cm.format();
  EXPECT_NE(text.find("accuracy 60.00% (3 of 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("     1     0     1     1\n"), std::string::npos) << text;
  EXPECT_THROW(cm.add(scores, {0, 1}), ShapeMismatch);
  EXPECT_THROW(cm.add(0, 3), InvalidAttribute);
  ConfusionMatrix empty(2);
  EXPECT_TRUE(std::isnan(empty.per_class_accuracy()[0]));
}

std::vector<EpochMetrics> two_epochs() {
  return {{1, 0.1, 0.9, 0.7, 0.5, 0.85, 2.5, 3200}, {2, 0.05, 0.4, 0.9, 0.3, 0.925, 2.25, 3555.5}};
}

TEST(History, CsvHasOneLinePerEpoch) {
  EXPECT_EQ(
      metrics_csv(two_epochs()),
      "epoch,lr,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second\n"
      "1,0.1,0.9,0.7,0.5,0.85,2.5,3200\n"
      "2,0.05,0.4,0.9,0.3,0.925,2.25,3555.5\n");
}

using testing::temp_dir;

TEST(Chart, ScriptPlotsLossAndAccuracyPerEpoch) {
  const std::string s = chart_script(two_epochs(), "out/it's.svg");
  EXPECT_NE(s.find("set terminal svg"), std::string::npos);
  // The picture goes to standard output: the name only chose the terminal.
  EXPECT_NE(s.find("set output\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("it's"), std::string::npos) << s;
  EXPECT_NE(s.find("2 0.4 90 0.3 92.5\n"), std::string::npos) << s;
  EXPECT_NE(chart_script(two_epochs(), "a.png").find("pngcairo"), std::string::npos);
  EXPECT_THROW(chart_script(two_epochs(), "a.pdf"), InvalidAttribute);
}

TEST(Chart, GnuplotDrawsTheFile) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed";
  const auto dir = temp_dir("chart");
  write_chart(two_epochs(), dir / "history.svg");
  std::ifstream in(dir / "history.svg");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("<svg"), std::string::npos);
  EXPECT_NE(text.str().find("accuracy"), std::string::npos);
  write_chart(two_epochs(), dir / "history.png");
  std::ifstream png(dir / "history.png", std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  // Only the two pictures: no temporary script or picture is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nodeflow::training

namespace nodeflow::training {
namespace {

TEST(HeapTuning, GlibcAcceptsTheSettings) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces malloc, and its mallopt accepts no setting";
#elif defined(__GLIBC__)
  // False here would mean the settings never reached mallopt (e.g. __GLIBC__ unseen).
  EXPECT_TRUE(keep_freed_buffers_in_heap());
#else
  EXPECT_FALSE(keep_freed_buffers_in_heap());
#endif
}

}  // namespace
}  // namespace nodeflow::training
