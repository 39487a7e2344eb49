#pragma once
// A console reporter that also keeps each benchmark's fastest time, for the
// tables the pooling benchmarks print after their runs: with
// --benchmark_repetitions > 1 the "min" aggregate (on a shared VM other
// tenants only ever slow a run down), else the one run.
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace nodeflow::bench {

class FastestRuns : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "min") continue;
      if (!aggregate && r.repetitions > 1) continue;
      times_[r.run_name.function_name] = r.GetAdjustedRealTime() * to_ms(r.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }

  /// Wall-clock ms per call of the benchmark `name`, or 0 if it did not run.
  double ms(const std::string& name) const {
    const auto it = times_.find(name);
    return it == times_.end() ? 0.0 : it->second;
  }

 private:
  static double to_ms(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond:
        return 1e-6;
      case benchmark::kMicrosecond:
        return 1e-3;
      case benchmark::kMillisecond:
        return 1.0;
      case benchmark::kSecond:
        return 1e3;
    }
    return 1.0;
  }
  std::map<std::string, double> times_;
};

/// The "min" statistic the tables read, for benchmark->ComputeStatistics.
inline double fastest(const std::vector<double>& v) {
  double m = v.empty() ? 0.0 : v.front();
  for (double x : v) m = x < m ? x : m;
  return m;
}

}  // namespace nodeflow::bench
