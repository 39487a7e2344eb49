#include "training/threads.hpp"

#include <Eigen/Core>
#include <string>

#include "core/errors.hpp"

namespace nodeflow::training {

bool multithreading_available() {
#ifdef EIGEN_HAS_OPENMP
  return true;
#else
  return false;
#endif
}

void set_thread_count(int threads) {
  if (threads < 1) throw InvalidAttribute("thread count must be >= 1, got " + std::to_string(threads));
  Eigen::setNbThreads(threads);
}

int thread_count() { return Eigen::nbThreads(); }

}  // namespace nodeflow::training
