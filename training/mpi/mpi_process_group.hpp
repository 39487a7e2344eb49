#pragma once
// The ProcessGroup of an MPI job: every process mpirun started
// (MPI_COMM_WORLD), for `nodeflow train --distributed` (docs/distributed.md).
// Built only when CMake finds MPI (Open MPI's libopenmpi-dev), into the
// library nodeflow_training_mpi; this header does not include <mpi.h>.
#include <cstdint>
#include <memory>
#include <vector>

#include "training/process_group.hpp"

namespace nodeflow::training {

/// MPI_COMM_WORLD as a ProcessGroup. Construction initializes MPI (threads
/// "funneled": only the thread that made the group calls MPI, the kernels'
/// threads never do), destruction finalizes it; at most one may exist in a
/// process's life, as MPI can be initialized only once. Run without mpirun,
/// the process is a group of one. MPI errors are returned, not fatal: a
/// failed operation throws RunError with MPI's message.
class MpiProcessGroup final : public ProcessGroup {
 public:
  /// Throws RunError when MPI was initialized before or cannot be.
  MpiProcessGroup();
  /// MPI_Finalize. Only after every rank is done with its collective
  /// operations: a rank that failed calls abort() instead.
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  /// MPI_Allreduce with a non-commutative addition per dtype: MPI then
  /// combines the operands in ascending rank order. For two ranks that is one
  /// addition, the same bits on both; with more, the grouping is the MPI
  /// library's (docs/distributed.md, step 5). Counts beyond INT_MAX go in
  /// several calls.
  void sum(DType dtype, std::byte* values, std::size_t count) override;
  std::vector<std::uint64_t> all_gather(std::uint64_t value) override;

  /// Ends every process of the job (MPI_Abort) with `exit_code`: for a rank
  /// that failed, whose partners may be waiting for it in a collective
  /// operation and would otherwise wait forever. Does not return.
  [[noreturn]] void abort(int exit_code);

 private:
  struct Ops;
  std::unique_ptr<Ops> ops_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace nodeflow::training
