// Training through `nodeflow serve` (docs/server.md, "Training"): a run on
// the tiny dataset streamed as Server-Sent Events, stopped, saved; and the
// requests it refuses before starting.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "serialization/graph_file.hpp"
#include "support/files.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/server_fixture.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

using ServerTraining = ServerTest;

Json train_request(std::int64_t epochs, const std::string& save_as = "") {
  Json r = {{"graph", Json::parse(linear_classifier_json(R"("init": {"rule": "zeros"})"))},
            {"config", {{"optimizer", {{"type", "sgd"}, {"lr", 0.5}}},
                        {"epochs", epochs}, {"batch_size", 8}, {"eval_batch_size", 16}, {"log_every", 0}}},
            {"data", "tiny"}};
  if (!save_as.empty()) r["save_as"] = save_as;
  return r;
}

struct Event {
  std::string name;
  Json data;
};

// The events of a run's stream until it ends; `on_event` sees each as it comes.
std::vector<Event> read_events(httplib::Client& c, const std::string& run,
                               const std::function<void(const Event&)>& on_event = {}) {
  std::vector<Event> events;
  std::string buffer;
  const auto r = c.Get("/api/train/" + run + "/events", [&](const char* data, std::size_t n) {
    buffer.append(data, n);
    for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
      const std::string block = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      Event e;
      std::size_t at = 0;
      while (at < block.size()) {
        const std::size_t eol = std::min(block.find('\n', at), block.size());
        const std::string line = block.substr(at, eol - at);
        if (line.rfind("event: ", 0) == 0) e.name = line.substr(7);
        if (line.rfind("data: ", 0) == 0) e.data = Json::parse(line.substr(6));
        at = eol + 1;
      }
      if (e.name.empty()) continue;  // a comment (keep-alive)
      if (on_event) on_event(e);
      events.push_back(std::move(e));
    }
    return true;
  });
  EXPECT_TRUE(r) << httplib::to_string(r.error());
  if (r) {
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  }
  return events;
}

std::string start_run(httplib::Client& c, const Json& request) {
  const auto r = c.Post("/api/train", request.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 200) << r->body;
  return ServerTest::body_of(r).value("run", "");
}

TEST_F(ServerTraining, DatasetsAreListedByTheirDataName) {
  EXPECT_EQ(body_of(client()->Get("/api/datasets")),
            Json::parse(R"({"datasets": [{"name": "tiny", "description": "64 lit-block digits",
                            "available": true, "problem": null}]})"));
}

TEST_F(ServerTraining, ARunStreamsProgressThenSavesTheTrainedGraph) {
  auto c = client();
  const std::string run = start_run(*c, train_request(3, "runs/trained.json"));
  ASSERT_EQ(run, "1");
  const std::vector<Event> events = read_events(*c, run);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().name, "state");
  EXPECT_EQ(events.back().name, "done");
  std::size_t progress = 0;
  for (const Event& e : events) {
    if (e.name != "progress") continue;
    ++progress;
    for (const char* key : {"epoch", "epochs", "batch", "batches", "step", "loss", "accuracy", "lr",
                            "samples_per_s", "eta_s"})
      EXPECT_TRUE(e.data.contains(key)) << key << " in " << e.data;
    EXPECT_EQ(e.data["epochs"], 3);
    EXPECT_EQ(e.data["batches"], 6);  // 48 samples in batches of 8
    EXPECT_EQ(e.data["lr"], 0.5);
    EXPECT_GE(e.data["eta_s"].get<double>(), 0.0);
    EXPECT_GT(e.data["samples_per_s"].get<double>(), 0.0);
  }
  EXPECT_GE(progress, 1u);
  const Json& done = events.back().data;
  EXPECT_EQ(done["state"], "done");
  EXPECT_EQ(done["saved"], "runs/trained.json");
  ASSERT_EQ(done["history"].size(), 3u);
  EXPECT_EQ(done["history"][2]["epoch"], 3);
  // The lit block is the class: learnt at once.
  EXPECT_EQ(done["history"][2]["test_accuracy"], 1.0);
  EXPECT_EQ(done["progress"]["step"], 18);

  const Graph trained = load_graph_path(root() / "runs" / "trained.json");
  EXPECT_NE(trained.initializer("W")->value.values<float>()[0 * 784 + 0], 0.0f);
  const Json status = body_of(c->Get("/api/train/" + run));
  EXPECT_EQ(status["state"], "done");
  EXPECT_EQ(status, done);
  const auto graph = c->Get("/api/train/" + run + "/graph");
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->body, read_bytes(root() / "runs" / "trained.json"));
  const auto saved = c->Post("/api/train/" + run + "/save", R"({"path": "copy.onnx"})", "application/json");
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->status, 200) << saved->body;
  EXPECT_TRUE(fs::is_regular_file(root() / "copy.onnx"));
}

TEST_F(ServerTraining, StopEndsARunAfterTheStepUnderWayAndSavesIt) {
  auto c = client();
  const std::string run = start_run(*c, train_request(100000, "stopped.json"));
  ASSERT_FALSE(run.empty());
  // A second run waits for the first.
  const auto busy = c->Post("/api/train", train_request(1).dump(), "application/json");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 409);
  bool stop_sent = false;
  auto stopper = client();
  const std::vector<Event> events = read_events(*c, run, [&](const Event& e) {
    if (e.name == "progress" && !stop_sent) {
      stop_sent = true;
      const auto r = stopper->Post("/api/train/" + run + "/stop", "", "application/json");
      EXPECT_TRUE(r && r->status == 200);
    }
  });
  ASSERT_TRUE(stop_sent);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().name, "done");
  EXPECT_EQ(events.back().data["state"], "stopped");
  EXPECT_EQ(events.back().data["saved"], "stopped.json");
  // Stopped long before the 100000 epochs, after the step under way.
  EXPECT_GE(events.back().data["history"].size(), 1u);
  EXPECT_LT(events.back().data["history"].size(), 1000u);
  EXPECT_TRUE(fs::is_regular_file(root() / "stopped.json"));
  EXPECT_EQ(start_run(*c, train_request(1)), "2");
  read_events(*c, "2");
}

TEST_F(ServerTraining, AFailingRunEndsWithAnErrorEvent) {
  server::ServerOptions o = options();
  server::DatasetEntry broken = tiny_dataset();
  broken.name = "broken";
  broken.load = []() -> server::SplitDataset { throw IoError("digits/3.json: not JSON"); };
  o.datasets.push_back(broken);
  start(o);
  auto c = client();
  Json request = train_request(2, "never.json");
  request["data"] = "broken";
  const std::string run = start_run(*c, request);
  const std::vector<Event> events = read_events(*c, run);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().name, "error");
  EXPECT_EQ(events.back().data["state"], "failed");
  EXPECT_EQ(events.back().data["error"], "digits/3.json: not JSON");
  EXPECT_FALSE(fs::exists(root() / "never.json"));
  EXPECT_EQ(c->Get("/api/train/" + run + "/graph")->status, 409);
}

TEST_F(ServerTraining, RequestsThatCannotTrainAreRefusedBeforeStarting) {
  auto c = client();
  const auto refused = [&](Json request, const std::string& start, int status = 400) {
    const auto r = c->Post("/api/train", request.dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(body_of(r)["error"].get<std::string>().rfind(start, 0), 0u) << r->body;
  };
  Json r = train_request(1);
  r["data"] = "imagenet";
  refused(r, "data: expected the name of a dataset (tiny)");
  r = train_request(1);
  r["config"]["optimizer"]["momentum"] = -1;
  refused(r, "config.optimizer.momentum");
  r = train_request(1);
  r["config"]["bindings"] = {{"input", "pixels"}};
  refused(r, "config.bindings");
  r = train_request(1);
  r["graph"]["nodes"][1]["inputs"][0] = "nowhere";
  refused(r, "graph.nodes[1] (fc).inputs[0]");
  refused(train_request(1, "../out.json"), "path '../out.json'");
  r = train_request(1);
  r.erase("data");
  refused(r, "request body: missing required key 'data'");
  EXPECT_EQ(c->Get("/api/train/1")->status, 404);
  EXPECT_EQ(c->Post("/api/train/1/stop", "", "application/json")->status, 404);
}

TEST_F(ServerTraining, ADatasetThatIsMissingIsNamed) {
  server::ServerOptions o = options();
  o.datasets = server::default_datasets({"mnist:" + (root() / "no-digits").string()});
  start(o);
  const Json list = body_of(client()->Get("/api/datasets"))["datasets"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["name"], "mnist");
  EXPECT_EQ(list[0]["available"], false);
  Json r = train_request(1);
  r["data"] = "mnist";
  const auto res = client()->Post("/api/train", r.dump(), "application/json");
  EXPECT_EQ(res->status, 409);
  EXPECT_NE(body_of(res)["error"].get<std::string>().find("the mnist files are not in"), std::string::npos);
}

}  // namespace
}  // namespace nodeflow::testing
