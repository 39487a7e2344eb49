// `nodeflow`: the command line of docs/cli.md.
// Exit status 0 on success, 1 on a failure in the input or the run (one stderr
// line beginning `error:`), 2 on wrong usage (with the usage text).
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "apps/arguments.hpp"
#include "apps/commands.hpp"
#include "apps/limit_flags.hpp"
#include "apps/serve_command.hpp"
#include "apps/training_commands.hpp"
#include "core/errors.hpp"

namespace {

// Forwards each log record to `inner` with control characters of its text
// escaped, as the `error:` lines are: a warning quoting a path or a message
// from a file must not be able to move the cursor or forge a line.
class PrintableSink final : public spdlog::sinks::sink {
 public:
  explicit PrintableSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    const std::string text =
        nodeflow::printable(std::string_view(msg.payload.data(), msg.payload.size()), std::string::npos);
    spdlog::details::log_msg escaped = msg;
    escaped.payload = text;
    inner_->log(escaped);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct Arguments {
  std::string graph;
  std::vector<std::string> inputs;
  std::vector<std::string> grad_outputs;
  std::string outdir;
  std::string converted;  ///< convert's OUT
  nodeflow::ReadOptions read;
  nodeflow::ExecutorOptions executor;
  std::uint64_t seed = 0;  ///< run's and backward's --seed
  bool json = false;       ///< ops' --json
};

// Every verb that reads a graph takes the reader's budget with it.
void add_graph_argument(CLI::App& verb, Arguments& args) {
  verb.add_option("GRAPH", args.graph,
                  "Graph document (nodeflow.graph JSON), or ONNX model (.onnx); - for a document "
                  "on standard input")
      ->required();
  nodeflow::cli::add_max_initializer_bytes(verb, args.read);
}

// An empty -o would put the files in the current directory unasked ("." says so).
void add_outdir(CLI::App& verb, Arguments& args) {
  verb.add_option("-o,--outdir", args.outdir, "Output directory (created if missing)")
      ->required()
      ->check(CLI::Validator(
          [](std::string& dir) {
            return dir.empty() ? std::string("an empty directory name (write . for the current one)")
                               : std::string();
          },
          ""))
      ->type_name("DIR");
}

// Each -i/-g takes exactly one NAME=FILE; repeat the flag for more.
void add_named_files(CLI::App& verb, const std::string& flags, std::vector<std::string>& into,
                     const std::string& help) {
  verb.add_option(flags, into, help)->allow_extra_args(false)->type_name("NAME=FILE.npy");
}

// Messages may quote a user's paths and words: the last line of defence keeps
// their control characters (ESC, BEL, CR, newlines) from the terminal.
void print_usage_error(const CLI::App& app, const CLI::App* verb, const std::string& message) {
  std::cerr << "nodeflow: " << nodeflow::printable(message, std::string::npos) << "\n\n"
            << (verb ? verb->help("nodeflow") : app.help());
}

// CLI11 reports an unknown first word (or option) as a missing subcommand
// ("A subcommand is required"); a user who mistyped it needs to see which
// word was refused and what the verbs are.
std::string usage_message(const CLI::App& app, const CLI::ParseError& error, int argc,
                          char** argv) {
  if (argc < 2) return error.what();
  const std::string word = argv[1];
  std::string verbs;
  bool known = false;
  for (const CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) {
    known = known || verb->check_name(word);
    verbs += (verbs.empty() ? "" : ", ") + verb->get_name();
  }
  // Only --help comes before the subcommand, and CLI11 has handled it.
  if (word[0] == '-') return "unknown option '" + word + "' (a subcommand comes first: " + verbs + ")";
  if (known) return error.what();
  return "unknown subcommand '" + word + "' (expected one of: " + verbs + ")";
}

// Prints one `error:` line, control characters escaped as print_usage_error does.
int report_failure(const std::string& message) {
  std::cerr << "error: " << nodeflow::printable(message, std::string::npos) << "\n";
  return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  // A write beyond the file-size limit (ulimit -f) then fails with EFBIG, and
  // the save removes its staged file and says why, instead of the process
  // dying silently (serialization/atomic_file.hpp).
  std::signal(SIGXFSZ, SIG_IGN);
  // Library diagnostics must never mix with `check` output on stdout.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "nodeflow", std::make_shared<PrintableSink>(
                      std::make_shared<spdlog::sinks::stderr_color_sink_mt>())));
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{"nodeflow: run, differentiate and check nodeflow graphs", "nodeflow"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", "nodeflow " NODEFLOW_VERSION, "Print the version and exit");
  Arguments args;

  CLI::App* run =
      app.add_subcommand("run", "Inference: writes OUTDIR/<output>.npy for every graph output");
  add_graph_argument(*run, args);
  add_named_files(*run, "-i,--input", args.inputs,
                  "Graph input from a .npy file (repeat per input)");
  add_outdir(*run, args);
  nodeflow::cli::add_max_tensor_bytes(*run, args.executor.max_tensor_bytes);
  nodeflow::cli::add_threads_option(*run, args.executor.threads,
                                    "Threads the kernels may use (default 1)");
  nodeflow::cli::add_seed_option(
      *run, args.seed,
      "Seed of the random ops (default 0); inference's Dropout is the identity, so no output "
      "depends on it today");

  CLI::App* backward = app.add_subcommand(
      "backward",
      "Training-mode forward and backward seeded with -g (zero for outputs without one); "
      "also writes OUTDIR/<name>.grad.npy");
  add_graph_argument(*backward, args);
  add_named_files(*backward, "-i,--input", args.inputs,
                  "Graph input from a .npy file (repeat per input)");
  add_named_files(*backward, "-g,--grad", args.grad_outputs,
                  "Gradient of a graph output from a .npy file (repeat per output)");
  add_outdir(*backward, args);
  nodeflow::cli::add_max_tensor_bytes(*backward, args.executor.max_tensor_bytes);
  nodeflow::cli::add_threads_option(*backward, args.executor.threads,
                                    "Threads the kernels may use (default 1)");
  nodeflow::cli::add_seed_option(
      *backward, args.seed, "Seed of the Dropout masks (default 0; the same seed, the same masks)");

  CLI::App* check = app.add_subcommand(
      "check", "Validate a graph; print nodes, tensor shapes and parameter count");
  add_graph_argument(*check, args);

  CLI::App* convert = app.add_subcommand(
      "convert",
      "Validate GRAPH and write it to OUT: an ONNX model for .onnx, else the document in normal "
      "form (replaced atomically)");
  add_graph_argument(*convert, args);
  convert->add_option("OUT", args.converted,
                      "Graph document, or ONNX model (.onnx), to write (may be GRAPH; - for the "
                      "document on standard output)")->required();

  CLI::App* ops = app.add_subcommand(
      "ops", "List the registered ops: one line each, or their schemas as one JSON document");
  ops->add_flag("--json", args.json,
                "The schemas (inputs, outputs, attributes) as JSON (docs/ops-json.md)");

  nodeflow::cli::TrainingVerbs training;
  add_training_verbs(app, training);
  nodeflow::cli::ServeVerb serve;
  add_serve_verb(app, serve);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    const CLI::App* verb = nullptr;
    for (const CLI::App* candidate :
         {run, backward, check, convert, ops, training.train, training.eval, serve.serve})
      if (candidate->parsed()) verb = candidate;
    if (e.get_exit_code() == 0) {  // --help
      std::cout << (verb ? verb->help("nodeflow") : app.help());
      return 0;
    }
    print_usage_error(app, verb, verb ? std::string(e.what()) : usage_message(app, e, argc, argv));
    return kExitUsage;
  }

  const CLI::App* verb = run->parsed()              ? run
                         : backward->parsed()       ? backward
                         : training.train->parsed() ? training.train
                         : training.eval->parsed()  ? training.eval
                         : convert->parsed()        ? convert
                         : ops->parsed()            ? ops
                         : serve.serve->parsed()    ? serve.serve
                                                    : check;
  try {
    if (nodeflow::cli::run_training_verb(training, std::cout)) return 0;
    if (nodeflow::cli::run_serve_verb(serve, std::cout)) return 0;
    if (verb == convert) {
      nodeflow::cli::convert_graph(args.graph, args.converted, args.read, std::cout);
      return 0;
    }
    if (verb == ops) {
      nodeflow::cli::list_ops(std::cout, args.json);
      return 0;
    }
    if (verb == check) {
      nodeflow::cli::check_graph(args.graph, std::cout, args.read);
      return 0;
    }
    nodeflow::cli::RunRequest request;
    request.graph = args.graph;
    request.inputs = nodeflow::cli::parse_named_files(args.inputs, "-i");
    request.grad_outputs = nodeflow::cli::parse_named_files(args.grad_outputs, "-g");
    request.outdir = args.outdir;
    request.read = args.read;
    request.executor = args.executor;
    request.seed = args.seed;
    if (verb == run)
      nodeflow::cli::run_inference(request);
    else
      nodeflow::cli::run_backward(request);
    return 0;
  } catch (const nodeflow::cli::UsageError& e) {
    print_usage_error(app, verb, e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    return report_failure("out of memory");
  } catch (const std::exception& e) {
    // nodeflow::Error and anything else the standard library throws (e.g.
    // filesystem errors): the message is the diagnosis.
    return report_failure(e.what());
  } catch (...) {
    return report_failure("unknown failure");
  }
}
