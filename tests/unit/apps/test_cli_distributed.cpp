// `nodeflow train --distributed` (docs/distributed.md) in this build: offered
// when it was built with MPI, refused with a clear message when not. Its runs
// under mpirun are tested by tests/mpi/.
#include <gtest/gtest.h>

#include "support/cli_fixture.hpp"

namespace nodeflow::testing {
namespace {

class CliDistributed : public CliTest {
 protected:
  CliDistributed() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-cli-distributed-") {}
};

TEST_F(CliDistributed, TheOptionIsOfferedOrRefusedByTheBuild) {
  const ProcessResult help = nodeflow({"train", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.describe();
  EXPECT_NE(help.out.find("--distributed"), std::string::npos) << help.out;
#if !NODEFLOW_HAVE_MPI
  const ProcessResult r = nodeflow({"train", "g.json", "--config", "c.json", "--data", "mnist",
                                    "-o", "o.json", "--distributed"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_NE(r.err.find("--distributed: this nodeflow was built without MPI"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("libopenmpi-dev"), std::string::npos) << r.err;
#endif
}

}  // namespace
}  // namespace nodeflow::testing
