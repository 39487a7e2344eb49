#pragma once
// The benchmark programs' shared command-line switch: they keep freed tensor
// buffers in the heap as `nodeflow train/eval` do (training/heap_tuning.hpp),
// unless run with --no_heap_tuning to see glibc's default behaviour.
#include <cstring>

#include "training/heap_tuning.hpp"

namespace nodeflow::bench {

/// Removes --no_heap_tuning from argv, applies the heap setting unless it was
/// given, and returns the new argc (for benchmark::Initialize).
inline int apply_heap_tuning_flag(int argc, char** argv) {
  bool tune = true;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no_heap_tuning") == 0)
      tune = false;
    else
      argv[kept++] = argv[i];
  }
  if (tune) nodeflow::training::keep_freed_buffers_in_heap();
  return kept;
}

}  // namespace nodeflow::bench
