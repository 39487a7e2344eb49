#pragma once
// A gtest fixture for the command-line tests: a `nodeflow` binary run in a
// scratch directory of its own, and the exit statuses docs/cli.md gives.
// Header-only: the installed-binary tests (tests/cli_test.cpp) link only
// subprocess.cpp of the support files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.hpp"

namespace nodeflow::testing {

inline constexpr int kUsage = 2;    ///< exit status of a usage error
inline constexpr int kFailure = 1;  ///< exit status of a command that failed

class CliTest : public ::testing::Test {
 protected:
  /// `binary`: the path of the program under test; `scratch_prefix` names
  /// the directory the commands run in.
  CliTest(std::string binary, const std::string& scratch_prefix)
      : binary_(std::move(binary)), scratch_(scratch_prefix) {}

  const std::filesystem::path& dir() const { return scratch_.path(); }
  const std::string& binary() const { return binary_; }

  /// Runs `argv` in dir(); a sanitizer report fails the test.
  ProcessResult run(const std::vector<std::string>& argv, const ProcessOptions& options = {}) const {
    ProcessResult r = run_process(argv, dir(), options);
    EXPECT_FALSE(r.sanitizer_report()) << r.describe();
    return r;
  }

  /// Runs the binary with `args` in dir().
  ProcessResult nodeflow(std::vector<std::string> args, const ProcessOptions& options = {}) const {
    args.insert(args.begin(), binary_);
    return run(args, options);
  }

  /// Writes `text` to dir()/name; returns that path.
  std::filesystem::path write_text(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = dir() / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  std::string binary_;
  ScratchDir scratch_;
};

}  // namespace nodeflow::testing
