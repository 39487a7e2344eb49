#pragma once
// A memory-bandwidth probe for the benchmarks' "bound" rows: every thread
// reads its share of each array a kernel must read and writes its share of
// each array it must write, with the widest vector loads and plain stores,
// so a kernel's time can be compared with the time its bytes take to move.
#include <cstddef>
#include <memory>
#include <vector>

namespace nodeflow::bench {

struct AlignedFree {
  void operator()(float* p) const;
};
using Buffer = std::unique_ptr<float[], AlignedFree>;

/// A zeroed 64-byte aligned buffer of at least `bytes`.
Buffer allocate(std::size_t bytes);

/// Arrays a kernel must read, write, or read and write, as float counts.
struct Traffic {
  std::vector<std::size_t> reads, writes, updates;
  /// Bytes moved: reads and writes once, updates twice.
  std::size_t bytes() const;
};

/// The buffers of one Traffic.
struct Probe {
  std::vector<Buffer> reads, writes, updates;
  std::vector<std::size_t> read_n, write_n, update_n;
};

Probe make_probe(const Traffic& t);
/// One pass over the probe's arrays on `threads` OpenMP threads.
void run_probe(const Probe& p, int threads);

}  // namespace nodeflow::bench
