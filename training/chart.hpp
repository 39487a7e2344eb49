#pragma once
// The loss and accuracy chart of a training run, drawn by gnuplot (Debian's
// gnuplot-nox; scripts/setup.sh installs it).
#include <filesystem>
#include <string>
#include <vector>

#include "training/history.hpp"

namespace nodeflow::training {

/// The gnuplot script that draws `history` into `output`: two panels side by
/// side, loss (train, test) and accuracy in % (train, test) against the epoch.
/// The terminal follows the extension: ".svg" (svg) or ".png" (pngcairo).
/// Throws InvalidAttribute for another extension.
std::string chart_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output);

/// Runs gnuplot on chart_script. The picture is drawn into a temporary file
/// next to `output` and renamed over it, so `output` is never half-written.
/// Throws IoError when gnuplot cannot be run or fails (its stderr is passed
/// through), or when the result cannot be moved into place.
void write_chart(const std::vector<EpochMetrics>& history, const std::filesystem::path& output);

}  // namespace nodeflow::training
