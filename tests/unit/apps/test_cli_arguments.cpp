// Pieces of the `nodeflow` command that need no process: NAME=FILE arguments,
// tensor-name -> file-name mapping and the collision check before writing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/arguments.hpp"
#include "apps/commands.hpp"
#include "apps/output_files.hpp"
#include "core/errors.hpp"

namespace nodeflow::cli {
namespace {

TEST(CliArguments, NamedFileSplitsAtFirstEquals) {
  const NamedFile f = parse_named_file("x=dir/a=b.npy", "-i");
  EXPECT_EQ(f.name, "x");
  EXPECT_EQ(f.file, std::filesystem::path("dir/a=b.npy"));
}

TEST(CliArguments, MalformedNamedFileIsUsageError) {
  for (const char* bad : {"x.npy", "=x.npy", "x=", ""})
    EXPECT_THROW(parse_named_file(bad, "-i"), UsageError) << bad;
  EXPECT_THROW(parse_named_files({"x=a.npy", "x=b.npy"}, "-i"), UsageError);
}

TEST(CliFileNames, CharactersOutsideTheSafeSetBecomeUnderscore) {
  EXPECT_EQ(tensor_file_stem("pool:1"), "pool_1");
  EXPECT_EQ(tensor_file_stem("pool/out:0"), "pool_out_0");
  EXPECT_EQ(tensor_file_stem("pool idx"), "pool_idx");
  EXPECT_EQ(tensor_file_stem("image.in-2_B"), "image.in-2_B");
  // One '_' per character, however many UTF-8 bytes it takes (docs/graph-format.md).
  EXPECT_EQ(tensor_file_stem("\xc3\xa9"), "_");
  EXPECT_EQ(tensor_file_stem("a\xe2\x82\xac:b"), "a__b");
  EXPECT_EQ(tensor_file_stem("\xf0\x9f\x98\x80x"), "_x");
  EXPECT_EQ(tensor_file_stem("\x80\x80"), "_");  // stray continuation bytes: one character
}

TEST(CliFileNames, PlanPutsOutputsAndGradientsInOutdir) {
  const OutputPlan plan = plan_output_files("out", {"y", "pool:1"}, {"x", "w"});
  EXPECT_EQ(plan.outputs.at("pool:1"), std::filesystem::path("out/pool_1.npy"));
  EXPECT_EQ(plan.outputs.at("y"), std::filesystem::path("out/y.npy"));
  EXPECT_EQ(plan.grads.at("x"), std::filesystem::path("out/x.grad.npy"));
  EXPECT_EQ(plan.grads.at("w"), std::filesystem::path("out/w.grad.npy"));
}

TEST(CliFileNames, AnOutputListedTwiceIsOneFile) {
  // The graph may list an output twice; it is one tensor (the executor
  // returns it once), so one file, not a collision with itself.
  const OutputPlan plan = plan_output_files("out", {"y", "z", "y"}, {"x", "x"});
  EXPECT_EQ(plan.outputs.size(), 2u);
  EXPECT_EQ(plan.outputs.at("y"), std::filesystem::path("out/y.npy"));
  EXPECT_EQ(plan.grads.size(), 1u);
}

TEST(CliFileNames, OutdirIsMadeEvenWithNothingToWrite) {
  // README: "OUTDIR is created when missing", also for a graph without outputs.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nodeflow_empty_outdir_" + std::to_string(::getpid())) / "sub";
  std::filesystem::remove_all(dir.parent_path());
  write_planned_files(plan_output_files(dir, {}, {}), {}, {});
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove_all(dir.parent_path());
}

TEST(CliConvert, MakesTheDirectoryOfOutOnlyForAValidGraph) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nodeflow_convert_dir_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.json") << "{}";
  EXPECT_THROW(convert_graph(dir / "bad.json", dir / "refused" / "g.json"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "refused"));
  convert_graph(NODEFLOW_EXAMPLES_DIR "/pool_example.json", dir / "new" / "g.json");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "new" / "g.json"));
  std::filesystem::remove_all(dir);
}

TEST(CliFileNames, CollisionsAreRefusedNamingBothTensors) {
  try {
    plan_output_files("out", {"a:b", "a_b"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'a:b'"), std::string::npos) << message;
    EXPECT_NE(message.find("'a_b'"), std::string::npos) << message;
  }
  EXPECT_THROW(plan_output_files("out", {"x.grad"}, {"x"}), Error);
  EXPECT_THROW(plan_output_files("out", {}, {"w:0", "w_0"}), Error);
  // An output and the gradient of the same tensor are different files.
  EXPECT_NO_THROW(plan_output_files("out", {"x"}, {"x"}));
}

TEST(CliFileNames, AnUnwritableDestinationLeavesEveryFileAsItWas) {
  // b.npy cannot be written (a directory stands there); a.npy comes first in
  // the plan and used to be replaced before that was found.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nodeflow_outputs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "b.npy");
  { std::ofstream(dir / "a.npy") << "old"; }
  const OutputPlan plan = plan_output_files(dir, {"a", "b"}, {});
  const TensorMap results{{"a", Tensor::from<float>({1}, {1.0f})},
                          {"b", Tensor::from<float>({1}, {2.0f})}};
  try {
    write_planned_files(plan, results, {});
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("b.npy: it is a directory"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was written"), std::string::npos) << what;
  }
  std::ifstream in(dir / "a.npy");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old");
  std::filesystem::remove_all(dir);
}

TEST(CliFileNames, AFailureWhileWritingLeavesEveryFileAsItWas) {
  // A name the file system refuses (over 255 bytes) is only found when its
  // file is created; a.npy, written before it, used to stay replaced.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nodeflow_outputs_late_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "a.npy") << "old"; }
  const std::string too_long(300, 'z');
  const OutputPlan plan = plan_output_files(dir, {"a", too_long}, {});
  const TensorMap results{{"a", Tensor::from<float>({1}, {1.0f})},
                          {too_long, Tensor::from<float>({1}, {2.0f})}};
  try {
    write_planned_files(plan, results, {});
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing was written"), std::string::npos) << e.what();
  }
  std::ifstream in(dir / "a.npy");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old");
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  std::filesystem::remove_all(dir);
}

TEST(CliFileNames, ANameOfTheLongestFileNameIsWritten) {
  // 251 characters + ".npy" = 255 bytes, NAME_MAX: legal, but its temporary
  // file's name (the name plus a suffix) used to exceed the limit.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nodeflow_outputs_long_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string longest(251, 'z');
  const OutputPlan plan = plan_output_files(dir, {longest}, {});
  write_planned_files(plan, {{longest, Tensor::from<float>({1}, {1.0f})}}, {});
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / (longest + ".npy")));
  std::filesystem::remove_all(dir);
}

TEST(CliFileNames, AnOutputDirectoryThatIsADanglingLinkIsCreatedWhereItPoints) {
  // -o dl, with dl -> real/out not yet made, said "cannot create output
  // directory 'dl': File exists".
  const auto root = std::filesystem::temp_directory_path() /
                    ("nodeflow_outdir_link_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  std::filesystem::create_directory_symlink(root / "real" / "out", root / "dl");
  const OutputPlan plan = plan_output_files(root / "dl", {"a"}, {});
  write_planned_files(plan, {{"a", Tensor::from<float>({1}, {1.0f})}}, {});
  EXPECT_TRUE(std::filesystem::is_regular_file(root / "real" / "out" / "a.npy"));
  EXPECT_TRUE(std::filesystem::is_symlink(root / "dl"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nodeflow::cli

namespace nodeflow::cli {
namespace {

// parse_count, the one parser of the integer options; expected values by hand.
TEST(CliCount, DecimalDigitsWithOptionalUnits) {
  EXPECT_EQ(parse_count("0", false), 0u);
  EXPECT_EQ(parse_count("18446744073709551615", false), UINT64_MAX);
  EXPECT_EQ(parse_count("512MiB", true), 512ull << 20);
  EXPECT_EQ(parse_count("2GB", true), 2000000000ull);
  EXPECT_EQ(parse_count("2gib", true), 2ull << 30);
  EXPECT_EQ(parse_count("7b", true), 7u);
  EXPECT_EQ(parse_count("3k", true), 3000u);
  EXPECT_EQ(parse_count("15EiB", true), 15ull << 60);
  EXPECT_EQ(parse_count("18EB", true), 18000000000000000000ull);
}

TEST(CliCount, AnythingElseIsRefusedNotClamped) {
  for (const char* bad : {"", "18446744073709551616", "36893488147419103232",
                          "99999999999999999999999", "16EiB", "19EB", "0x10", " 5", "5 ", "+5",
                          "-1", "1.5", "1e3", "5XB", "KiB", "5 KiB", "5KiBB"})
    EXPECT_FALSE(parse_count(bad, true).has_value()) << "'" << bad << "'";
  EXPECT_FALSE(parse_count("5KiB", false).has_value());  // units only where documented
}

}  // namespace
}  // namespace nodeflow::cli
