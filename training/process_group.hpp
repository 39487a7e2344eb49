#pragma once
// The processes of a data-parallel run as the trainer sees them
// (docs/distributed.md): a rank, a size and two collective operations. The
// MPI implementation is training/mpi/mpi_process_group.hpp; a test or another
// transport can implement the same interface.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"

namespace nodeflow::training {

/// A fixed group of processes that train one network together. Every
/// collective operation must be called by every rank, in the same order, with
/// the same dtype and count; a rank that does not call it leaves the others
/// waiting (the MPI group ends the whole job when a rank dies, so they do not
/// wait forever).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  /// This process's 0-based rank, below size().
  virtual int rank() const = 0;
  /// The number of processes, at least 1.
  virtual int size() const = 0;

  /// Collective: replaces the `count` values of float dtype `dtype` at
  /// `values` on every rank by their sum over the ranks, the operands taken in
  /// ascending rank order; every rank receives the same bits. Throws RunError
  /// when the transport fails, UnsupportedDType for a dtype that is not a
  /// float dtype.
  virtual void sum(DType dtype, std::byte* values, std::size_t count) = 0;

  /// Collective: every rank's `value`, indexed by rank. Throws RunError when
  /// the transport fails.
  virtual std::vector<std::uint64_t> all_gather(std::uint64_t value) = 0;
};

}  // namespace nodeflow::training
