// The API of `nodeflow serve` (docs/server.md), route by route, through a real
// HTTP connection to a server in this process.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "serialization/graph_check.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/op_schema_json.hpp"
#include "support/files.hpp"
#include "support/server_fixture.hpp"
#include "unit/server/server_documents.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

using ServerApi = ServerTest;

TEST_F(ServerApi, OpsIsTheOpsJsonDocument) {
  const auto r = client()->Get("/api/ops");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(body_of(r), Json::parse(op_schemas_json()));
}

TEST_F(ServerApi, CheckReportsTensorsAndParametersOfAValidGraph) {
  const auto r = client()->Post("/api/check", pool_document(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const Json body = body_of(r);
  EXPECT_EQ(body["ok"], true);
  EXPECT_EQ(body["errors"], Json::array());
  EXPECT_EQ(body["parameters"], 1);
  EXPECT_EQ(body["trainable_parameters"], 0);
  // The same tensors `nodeflow check` lists, with null for a run-time dimension.
  const CheckReport report = check_graph([] { return load_graph(pool_document()); });
  ASSERT_EQ(body["tensors"].size(), report.tensors.size());
  EXPECT_EQ(body["tensors"][0], Json({{"name", "image"}, {"dtype", "float32"}, {"shape", {nullptr, 1, 4, 4}}}));
  EXPECT_EQ(body["tensors"][1], Json({{"name", "pooled"}, {"dtype", "float32"}, {"shape", {nullptr, 1, 2, 2}}}));
}

TEST_F(ServerApi, CheckLocatesAnErrorAtItsPathNodeAndAttribute) {
  const Json body = body_of(client()->Post("/api/check", pool_document("[2, 0]"), "application/json"));
  EXPECT_EQ(body["ok"], false);
  ASSERT_EQ(body["errors"].size(), 1u);
  const Json& e = body["errors"][0];
  EXPECT_EQ(e["message"],
            "nodes[0] (pool1).attributes.kernel_shape: expected a list of positive integers, got [2, 0]");
  EXPECT_EQ(e["path"], "nodes[0].attributes.kernel_shape");
  EXPECT_EQ(e["node"], "pool1");
  EXPECT_EQ(e["attribute"], "kernel_shape");
  EXPECT_EQ(body["tensors"], Json::array());
}

TEST_F(ServerApi, CheckReportsAMalformedDocumentAsTheReaderDoes) {
  const Json body = body_of(client()->Post("/api/check", "{\"format\": ", "application/json"));
  EXPECT_EQ(body["ok"], false);
  ASSERT_EQ(body["errors"].size(), 1u);
  EXPECT_EQ(body["errors"][0]["message"].get<std::string>().rfind("invalid JSON: parse error at line 1, column 12", 0), 0u)
      << body["errors"][0]["message"];
  EXPECT_EQ(body["errors"][0]["path"], "");
}

TEST_F(ServerApi, FilesListsGraphsUnderTheRootOnly) {
  write_text(root() / "a.json", pool_document());
  fs::create_directories(root() / "sub" / "deeper");
  write_text(root() / "sub" / "deeper" / "b.onnx", "x");
  write_text(root() / ".hidden.json", "{}");
  fs::create_directories(root() / ".cache");
  write_text(root() / ".cache" / "c.json", "{}");
  write_text(root() / "notes.txt", "no");
  const Json body = body_of(client()->Get("/api/files"));
  EXPECT_EQ(body, Json::parse(R"({"files": [
    {"path": "a.json", "size": )" + std::to_string(fs::file_size(root() / "a.json")) + R"(, "format": "json"},
    {"path": "sub/deeper/b.onnx", "size": 1, "format": "onnx"}]})"));
}

TEST_F(ServerApi, SaveWritesTheNormalFormWithPositionsAndOpenGivesItBack) {
  const auto put = client()->Put("/api/files/models/pool.json", pool_document(), "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(body_of(put), Json::parse(R"({"saved": "models/pool.json", "format": "json", "warnings": []})"));
  const std::string saved = read_bytes(root() / "models" / "pool.json");
  EXPECT_EQ(saved, write_graph_json(parse_graph_def(pool_document())));
  EXPECT_NE(saved.find(R"("position": [10.0, 20.0])"), std::string::npos) << saved;
  EXPECT_NE(saved.find(R"("position": [-5.5, 1000.0])"), std::string::npos) << saved;
  const auto get = client()->Get("/api/files/models/pool.json");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, saved);
}

TEST_F(ServerApi, SaveKeepsWorkInProgressThatCheckRefuses) {
  // A dangling input is the Graph's to refuse, not the document's structure.
  std::string doc = pool_document();
  doc.replace(doc.find(R"(["pooled", "two"])"), 17, R"(["pooled", "nowhere"])");
  const auto put = client()->Put("/api/files/wip.json", doc, "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(client()->Get("/api/files/wip.json")->body, read_bytes(root() / "wip.json"));
  EXPECT_EQ(body_of(client()->Post("/api/check", doc, "application/json"))["ok"], false);
}

TEST_F(ServerApi, SaveAsOnnxAndOpenAsTheJsonDocument) {
  const auto put = client()->Put("/api/files/pool.onnx", pool_document(), "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(body_of(put)["format"], "onnx");
  const Graph saved = load_graph_path(root() / "pool.onnx");
  EXPECT_EQ(saved.def().nodes.size(), 2u);
  const auto get = client()->Get("/api/files/pool.onnx");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, write_graph_json(saved.def()));
}

TEST_F(ServerApi, SaveRefusesAMalformedDocumentAndWritesNothing) {
  write_text(root() / "keep.json", pool_document());
  for (const std::string& bad : {std::string("{\"format\": "), std::string("[1, 2]"), pool_document("[2.5, 2]")}) {
    const auto put = client()->Put("/api/files/keep.json", bad, "application/json");
    ASSERT_TRUE(put);
    EXPECT_EQ(put->status, 400) << bad;
    EXPECT_TRUE(body_of(put).contains("error"));
    EXPECT_EQ(read_bytes(root() / "keep.json"), pool_document());
  }
  const auto onnx = client()->Put("/api/files/new.onnx", pool_document("[2, 0]"), "application/json");
  EXPECT_EQ(onnx->status, 400);
  EXPECT_FALSE(fs::exists(root() / "new.onnx"));
}

TEST_F(ServerApi, OpenRefusesAMissingFileAndOneThatIsNotJson) {
  const auto missing = client()->Get("/api/files/none.json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(body_of(missing)["error"], "no file 'none.json' under the root");
  write_text(root() / "broken.json", "{\"format\"");
  const auto broken = client()->Get("/api/files/broken.json");
  EXPECT_EQ(broken->status, 400);
  EXPECT_EQ(body_of(broken)["error"].get<std::string>().rfind("invalid JSON", 0), 0u);
}

TEST_F(ServerApi, RunGivesTheOutputsInTheInputsForm) {
  Json request = {{"graph", Json::parse(pool_document())}, {"inputs", Json::object()}};
  Json image = {{"dtype", "float32"}, {"shape", {1, 1, 4, 4}}, {"data", Json::array()}};
  for (int i = 0; i < 16; ++i) image["data"].push_back(i);
  request["inputs"]["image"] = image;
  const auto r = client()->Post("/api/run", request.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r), Json::parse(R"({"outputs": {
    "pooled": {"dtype": "float32", "shape": [1, 1, 2, 2], "data": [5.0, 7.0, 13.0, 15.0]},
    "scaled": {"dtype": "float32", "shape": [1, 1, 2, 2], "data": [10.0, 14.0, 26.0, 30.0]}}})"));
}

TEST_F(ServerApi, RunRefusesInputsThatDoNotFit) {
  Json request = {{"graph", Json::parse(pool_document())}, {"inputs", Json::object()}};
  request["inputs"]["image"] = {{"dtype", "float32"}, {"shape", {1, 1, 4, 4}}, {"data", {1, 2}}};
  auto r = client()->Post("/api/run", request.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(body_of(r)["error"].get<std::string>().find("inputs.image.data"), std::string::npos) << r->body;
  request["inputs"]["image"] = {{"dtype", "float32"}, {"shape", {1, 1, 3, 3}}, {"data", Json::array()}};
  for (int i = 0; i < 9; ++i) request["inputs"]["image"]["data"].push_back(i);
  r = client()->Post("/api/run", request.dump(), "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(body_of(r)["error"].get<std::string>().find("image"), std::string::npos) << r->body;
  request["inputs"]["image"] = {{"dtype", "float32"}, {"shape", {100000, 100000}}, {"data", {1}}};
  r = client()->Post("/api/run", request.dump(), "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(body_of(r)["error"].get<std::string>().find("over the limit"), std::string::npos) << r->body;
  request["graph"]["nodes"][0]["op_type"] = "NoSuchOp";
  r = client()->Post("/api/run", request.dump(), "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(body_of(r)["error"].get<std::string>().rfind("graph.nodes[0]", 0), 0u) << r->body;
}

}  // namespace
}  // namespace nodeflow::testing
