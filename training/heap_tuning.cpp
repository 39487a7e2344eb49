#include "training/heap_tuning.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nodeflow::training {

bool keep_freed_buffers_in_heap() {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD) && defined(M_MMAP_MAX)
  // 32 MiB: the largest threshold glibc takes (64-bit), above any LeNet-sized
  // activation. M_MMAP_MAX 0 keeps bigger blocks (a 16x256x56x56 float32
  // activation is 51 MB) in the heap too: mmap'd they would be faulted in and
  // zero-filled at every allocation, which doubled the time of a memory-bound
  // Add (bench/op_bench). glibc still falls back to mmap when the heap cannot grow.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1;
  const bool mmap_max_ok = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024) == 1;
  return mmap_ok && mmap_max_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace nodeflow::training
