// The one file of the library built with OpenMP (CMakeLists.txt): every
// kernel that splits its work, Eigen's matrix products included
// (nodes/linear/matrix_product.cpp), runs on the threads of this team.
#include "core/parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace nodeflow {

bool parallel_available() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

void parallel_ranges(int threads, std::int64_t items,
                     const std::function<void(std::int64_t, std::int64_t)>& body) {
  const int team = static_cast<int>(std::clamp<std::int64_t>(items, 1, std::max(1, threads)));
  if (team == 1 || !parallel_available()) {
    if (items > 0) body(0, items);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  // Exceptions must not leave an OpenMP region: each range keeps its own.
#if defined(_OPENMP)
#pragma omp parallel num_threads(team)
#endif
  {
#if defined(_OPENMP)
    const std::int64_t rank = omp_get_thread_num(), size = omp_get_num_threads();
#else
    const std::int64_t rank = 0, size = 1;
#endif
    const std::int64_t begin = items * rank / size, end = items * (rank + 1) / size;
    try {
      if (begin < end) body(begin, end);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace nodeflow
