#pragma once
// The loss and accuracy chart of a training run, drawn by gnuplot (Debian's
// gnuplot-nox; scripts/setup.sh installs it).
#include <filesystem>
#include <string>
#include <vector>

#include "training/history.hpp"

namespace nodeflow::training {

/// Throws InvalidAttribute naming `output` unless its name ends in ".svg" or
/// ".png", the two kinds of picture write_chart draws. Callers check it before
/// training, so that a wrong name is not found an epoch later.
void check_chart_name(const std::filesystem::path& output);

/// The gnuplot script that draws `history` into `output`: two panels side by
/// side, loss (train, test) and accuracy in % (train, test) against the epoch.
/// The terminal follows the extension: ".svg" (svg) or ".png" (pngcairo).
/// Throws InvalidAttribute for another extension.
std::string chart_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output);

/// Runs gnuplot on chart_script. The picture is drawn into a temporary file
/// next to `output` and renamed over it, so `output` is never half-written.
/// When `output` is a symbolic link (even a dangling one), the file it finally
/// points to is replaced and the link stays, as with every other output
/// (write_file_atomically).
/// Throws IoError when gnuplot cannot be run or fails (its stderr is passed
/// through), or when the result cannot be moved into place.
void write_chart(const std::vector<EpochMetrics>& history, const std::filesystem::path& output);

}  // namespace nodeflow::training
