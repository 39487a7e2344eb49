#include "training/heap_tuning.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nodeflow::training {

bool keep_freed_buffers_in_heap() {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  // 32 MiB: the largest default dynamic threshold of 64-bit glibc, above any
  // LeNet-sized activation; bigger blocks still go to mmap.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace nodeflow::training
