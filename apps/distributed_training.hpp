#pragma once
// `nodeflow train --distributed`: one rank of a data-parallel MPI job
// (docs/distributed.md).
#include <ostream>

#include "apps/training_commands.hpp"

namespace nodeflow::cli {

/// Joins the MPI job this process was started in (`mpirun -np N nodeflow
/// train ... --distributed`; without mpirun, a job of one) and runs
/// train_model as its rank: rank 0 writes the files, the progress lines and
/// the summary, every rank trains its shard of each batch. A rank that fails
/// prints its error ("error: rank 1 of 2: ...") and ends the whole job with
/// MPI_Abort and exit status 1 (2 for wrong usage), so that no rank waits
/// forever for it; in a job of one, the failure is thrown as train_model's.
/// In a build without MPI, throws UsageError saying so and how to get it.
void train_distributed(const TrainRequest& request, std::ostream& out);

}  // namespace nodeflow::cli
