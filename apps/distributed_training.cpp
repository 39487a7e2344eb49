#include "apps/distributed_training.hpp"

#include <iostream>
#include <new>
#include <string>

#include "apps/arguments.hpp"
#include "core/errors.hpp"
#if NODEFLOW_HAVE_MPI
#include "training/mpi/mpi_process_group.hpp"
#endif

namespace nodeflow::cli {

#if NODEFLOW_HAVE_MPI

namespace {

// nodeflow_main.cpp's exit statuses (docs/cli.md).
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// The `error:` line main prints, naming the rank, then the end of the job:
// the other ranks may be waiting for this one in a collective operation.
[[noreturn]] void fail(training::MpiProcessGroup& group, std::ostream& out,
                       const std::string& message, int exit_code) {
  out.flush();
  std::cerr << (exit_code == kExitUsage ? "nodeflow: " : "error: ") << "rank " << group.rank()
            << " of " << group.size() << ": " << printable(message, std::string::npos)
            << (exit_code == kExitUsage ? " (nodeflow train --help)" : "") << std::endl;
  group.abort(exit_code);
}

}  // namespace

void train_distributed(const TrainRequest& request, std::ostream& out) {
  training::MpiProcessGroup group;
  if (group.size() == 1) {  // nobody waits for this process: fail as train does
    train_model(request, out, &group);
    return;
  }
  try {
    train_model(request, out, &group);
  } catch (const UsageError& e) {
    fail(group, out, e.what(), kExitUsage);
  } catch (const std::bad_alloc&) {
    fail(group, out, "out of memory", kExitFailure);
  } catch (const std::exception& e) {
    fail(group, out, e.what(), kExitFailure);
  }
}

#else

void train_distributed(const TrainRequest&, std::ostream&) {
  throw UsageError(
      "--distributed: this nodeflow was built without MPI (CMake found no MPI C library, or "
      "NODEFLOW_MPI was OFF); install Open MPI (Debian: libopenmpi-dev openmpi-bin, "
      "scripts/setup.sh) and build again, then run it under mpirun (docs/distributed.md)");
}

#endif

}  // namespace nodeflow::cli
