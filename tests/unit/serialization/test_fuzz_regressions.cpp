// Replays every input kept in tests/regression/ (past fuzz crashes and
// hand-made hostile inputs) through the fuzz targets' checks: each must be
// refused with a nodeflow::Error or accepted with exact round trips, without
// crashing. Files named *accepted* must be accepted, so the round-trip checks
// really run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "serialization/json_reader.hpp"
#include "serialization/npy.hpp"
#include "serialization/onnx.hpp"
#include "support/fuzz_properties.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressionDir = fs::path(NODEFLOW_CONFORMANCE_DIR).parent_path() / "regression";

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> files_in(const std::string& target) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kRegressionDir / target)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool expected_accepted(const fs::path& p) {
  return p.filename().string().find("accepted") != std::string::npos;
}

TEST(FuzzRegressions, GraphDocuments) {
  const auto files = files_in("graph_json");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string text = read_bytes(file);
    EXPECT_NO_THROW(testing::check_graph_document(text));
    if (expected_accepted(file)) {
      EXPECT_NO_THROW(load_graph(text));
    }
  }
}

TEST(FuzzRegressions, OnnxModels) {
  const auto files = files_in("onnx");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string bytes = read_bytes(file);
    EXPECT_NO_THROW(testing::check_onnx_model(bytes));
    if (expected_accepted(file)) {
      EXPECT_NO_THROW(load_onnx(bytes, {}));
    } else {
      EXPECT_THROW(load_onnx(bytes, {}), Error);
    }
  }
}

TEST(FuzzRegressions, NpyFiles) {
  const auto files = files_in("npy");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string bytes = read_bytes(file);
    const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
    EXPECT_NO_THROW(testing::check_npy_bytes(span));
    if (expected_accepted(file)) {
      EXPECT_NO_THROW(parse_npy(span, file.string()));
    }
  }
}

}  // namespace
}  // namespace nodeflow
