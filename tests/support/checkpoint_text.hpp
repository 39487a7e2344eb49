#pragma once
// Comparing training checkpoints (training/checkpoint.hpp) across runs: their
// training state holds wall-clock times, which differ between two runs that
// are otherwise bit-identical.
#include <string>

namespace nodeflow::testing {

/// `text` with the timing fields of its "training_state" (each epoch's
/// seconds and samples_per_second, epoch_seconds) set to 0, re-rendered;
/// `text` as it is when it is not a JSON document with a training state (a
/// torn file stays torn).
std::string without_timings(const std::string& text);

/// The graph document of a checkpoint without its training state, as the
/// writer writes it: the bytes of the trained graph saved at that moment.
std::string graph_part(const std::string& text);

}  // namespace nodeflow::testing
