#pragma once
// The thread count of the library's matrix products (Conv, Gemm, MatMul and
// their gradients). It is process-wide: Eigen keeps one setting.
namespace nodeflow::training {

/// True when nodeflow was built with OpenMP; otherwise every product runs on
/// the calling thread and set_thread_count only records the request.
bool multithreading_available();

/// Lets the matrix products use up to `threads` threads (Eigen::setNbThreads;
/// Eigen splits a product only when it is large enough to pay off). Results
/// are reproducible for a given thread count. Throws InvalidAttribute for
/// threads < 1.
void set_thread_count(int threads);

/// The threads the products may use (1 without OpenMP).
int thread_count();

}  // namespace nodeflow::training
