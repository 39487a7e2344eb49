#pragma once
// The loss and accuracy chart of a training run, drawn by gnuplot (Debian's
// gnuplot-nox; scripts/setup.sh installs it).
//
// No path reaches gnuplot: it reads its script from standard input and draws
// on standard output, both anonymous in-memory files (memfd_create), and the
// picture is then saved like every other output (write_file_atomically). A
// file name is data, never gnuplot code, whatever bytes it holds.
#include <filesystem>
#include <string>
#include <vector>

#include "training/history.hpp"

namespace nodeflow::training {

/// Throws InvalidAttribute naming `output` unless its name ends in ".svg" or
/// ".png", the two kinds of picture write_chart draws. Callers check it before
/// training, so that a wrong name is not found an epoch later.
void check_chart_name(const std::filesystem::path& output);

/// The gnuplot script that draws `history` on gnuplot's standard output: two
/// panels side by side, loss (train, test) and accuracy in % (train, test)
/// against the epoch. `output` chooses the terminal only, by its extension:
/// ".svg" (svg) or ".png" (pngcairo); the script holds no path, only fixed
/// text and the numbers of `history`. Throws InvalidAttribute for another
/// extension.
std::string chart_script(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output);

/// Runs gnuplot on chart_script and saves the picture to `output` with
/// write_file_atomically: `output` is never half-written, and when it is a
/// symbolic link (even a dangling one) the file it finally points to is
/// replaced and the link stays. No file but `output`'s is created or opened by
/// name. Throws IoError when gnuplot cannot be run, fails (its stderr is
/// passed through to ours), or draws nothing or an incomplete picture (an SVG
/// without its closing tag, a PNG without its IEND chunk: gnuplot exits with 0
/// when its own writes fail), or when the picture cannot be saved.
void write_chart(const std::vector<EpochMetrics>& history, const std::filesystem::path& output);

/// The picture write_chart saves, drawn by gnuplot, without saving it (for a
/// caller that saves it with other files as one set). Throws as write_chart
/// does, but for the save.
std::string render_chart(const std::vector<EpochMetrics>& history,
                         const std::filesystem::path& output);

}  // namespace nodeflow::training
