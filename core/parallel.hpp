#pragma once
// Work splitting for the kernels (fast pooling, elementwise, reductions, Conv,
// matrix products, ...): contiguous ranges of work
// items, one per thread, so each thread streams through its own part of the
// tensors. OpenMP when the library is built with it, else the calling thread.
#include <cstdint>
#include <functional>

namespace nodeflow {

/// Calls body(begin, end) on up to `threads` threads, whose ranges cover
/// [0, items) in order. The first exception a range throws is rethrown here
/// after every range has finished.
void parallel_ranges(int threads, std::int64_t items,
                     const std::function<void(std::int64_t, std::int64_t)>& body);

/// True when parallel_ranges can run ranges on several threads.
bool parallel_available();

}  // namespace nodeflow
