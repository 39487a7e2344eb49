// `nodeflow serve` as a process (docs/cli.md "serve"): it prints the URL with
// its token, answers on it, and stops with exit status 0 on SIGINT; a port in
// use is exit status 1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "support/server_fixture.hpp"

extern char** environ;

namespace nodeflow::testing {
namespace {

// A loopback port that was free a moment ago.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(s);
  return ntohs(a.sin_port);
}

TEST(ServeCommand, PrintsItsUrlAnswersAndStopsOnSigint) {
  ScratchDir scratch("nodeflow-serve-command");
  const std::string port = std::to_string(free_port());
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  const std::string root = scratch.path().string();
  std::vector<std::string> args{NODEFLOW_BUILT_CLI, "serve", "--port", port, "--root", root};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, NODEFLOW_BUILT_CLI, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  // The URL line comes first; then the server answers on it.
  std::string text;
  const std::regex url("http://127\\.0\\.0\\.1:" + port + "/\\?token=([0-9a-f]{64})");
  std::smatch m;
  char buf[256];
  while (!std::regex_search(text, m, url)) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ASSERT_TRUE(std::regex_search(text, m, url)) << text;
  httplib::Client c("127.0.0.1", std::stoi(port));
  c.set_bearer_token_auth(m[1].str());
  auto r = c.Get("/api/files");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"files\":[]}\n");
  // A second server on the port is refused: exit status 1.
  ProcessResult second = run_process({NODEFLOW_BUILT_CLI, "serve", "--port", port, "--root", root},
                                     scratch.path(), std::chrono::seconds(30));
  EXPECT_EQ(second.exit_code, 1) << second.describe();
  EXPECT_NE(second.err.find("cannot listen on 127.0.0.1 port " + port), std::string::npos) << second.err;

  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(out[0]);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ServeCommand, ARootThatIsNotAFolderIsWrongUsage) {
  ScratchDir scratch("nodeflow-serve-command");
  const ProcessResult r = run_process(
      {NODEFLOW_BUILT_CLI, "serve", "--root", (scratch.path() / "missing").string()}, scratch.path(),
      std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.describe();
}

}  // namespace
}  // namespace nodeflow::testing
