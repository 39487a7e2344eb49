// What the `nodeflow` binary of this build tree tells a user who got something
// wrong: a mistyped verb, a bad input file. (tests/cli_test.cpp covers the
// installed binary's exit codes and files under ctest.)
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kUsage = 2;
constexpr int kFailure = 1;

class CliMessages : public ::testing::Test {
 protected:
  fs::path dir() const { return scratch_.path(); }

  ProcessResult nodeflow(std::vector<std::string> args) const {
    args.insert(args.begin(), NODEFLOW_BUILT_CLI);
    ProcessResult r = run_process(args, dir());
    EXPECT_FALSE(r.sanitizer_report()) << r.describe();
    return r;
  }

  fs::path write_text(const std::string& name, const std::string& text) const {
    const fs::path file = dir() / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  ScratchDir scratch_{"nodeflow-cli-messages"};
};

TEST_F(CliMessages, UnknownVerbIsNamedWithTheValidOnes) {
  const ProcessResult r = nodeflow({"frobnicate", "graph.json"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  const std::string first_line = r.err.substr(0, r.err.find('\n'));
  EXPECT_NE(first_line.find("'frobnicate'"), std::string::npos) << r.describe();
  for (const char* verb : {"run", "backward", "check", "convert", "train", "eval"})
    EXPECT_NE(first_line.find(verb), std::string::npos) << verb << "\n" << r.describe();
  EXPECT_NE(r.err.find("Usage"), std::string::npos) << r.describe();
}

TEST_F(CliMessages, NoVerbStillSaysOneIsRequired) {
  const ProcessResult r = nodeflow({});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_NE(r.err.find("A subcommand is required"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace nodeflow::testing
