#include "training/checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "core/errors.hpp"
#include "serialization/base64.hpp"
#include "serialization/json_support.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow::training {
namespace {

using json_detail::Json;

constexpr const char* kStateFormat = "nodeflow.training_state";
constexpr std::int64_t kStateVersion = 1;

[[noreturn]] void fail(const std::string& path, const std::string& what, const Json& got) {
  json_detail::expected(path, what, got);
}

// JSON has no NaN or infinity: those travel as strings.
Json double_json(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

const Json& at(const Json& obj, const std::string& path, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InvalidGraph(json_detail::child(path, key) + ": missing");
  return *it;
}

double get_double(const Json& obj, const std::string& path, std::string_view key) {
  const Json& v = at(obj, path, key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail(json_detail::child(path, key), "a number, \"NaN\", \"inf\" or \"-inf\"", v);
}

std::int64_t get_int(const Json& obj, const std::string& path, std::string_view key,
                     std::int64_t min) {
  const Json& v = at(obj, path, key);
  std::int64_t x = 0;
  if (!json_detail::as_int64(v, x) || x < min)
    fail(json_detail::child(path, key), json_detail::int64_expectation(v, min), v);
  return x;
}

std::string get_text(const Json& obj, const std::string& path, std::string_view key) {
  const Json& v = at(obj, path, key);
  if (!v.is_string()) fail(json_detail::child(path, key), "a string", v);
  return v.get<std::string>();
}

Json tensor_json(const Tensor& t) {
  Json shape = Json::array();
  for (const std::int64_t d : t.shape()) shape.push_back(d);
  return Json{{"dtype", std::string(dtype_name(t.dtype()))},
              {"shape", shape},
              {"base64", encode_base64(std::span(t.raw(), t.nbytes()))}};
}

Tensor parse_tensor(const Json& v, const std::string& path) {
  if (!v.is_object()) fail(path, "a tensor {dtype, shape, base64}", v);
  json_detail::check_keys(v, path, {"dtype", "shape", "base64"}, {});
  DType dtype{};
  const std::string name = get_text(v, path, "dtype");
  if (!parse_dtype(name, dtype) || !is_float(dtype))
    fail(json_detail::child(path, "dtype"), "a float dtype", v.at("dtype"));
  const Json& shape_json = v.at("shape");
  if (!shape_json.is_array()) fail(json_detail::child(path, "shape"), "a list of sizes", shape_json);
  Shape shape;
  std::uint64_t count = 1;
  for (const Json& d : shape_json) {
    std::int64_t x = 0;
    if (!json_detail::as_int64(d, x) || x < 0)
      fail(json_detail::child(path, "shape"), "a list of sizes >= 0", shape_json);
    if (x != 0 && count > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(x))
      fail(json_detail::child(path, "shape"), "a shape whose element count fits", shape_json);
    count *= static_cast<std::uint64_t>(x);
    shape.push_back(x);
  }
  std::vector<std::byte> bytes;
  try {
    bytes = decode_base64(get_text(v, path, "base64"));
  } catch (const Error& e) {
    throw InvalidGraph(json_detail::child(path, "base64") + ": " + e.what());
  }
  // The bytes present bound the allocation: a shape alone never allocates.
  if (count > bytes.size() || count * dtype_size(dtype) != bytes.size())
    throw InvalidGraph(json_detail::child(path, "base64") + ": " + std::to_string(bytes.size()) +
                       " bytes, but " + std::string(dtype_name(dtype)) + " " + to_string(shape) +
                       " needs " + std::to_string(count * dtype_size(dtype)));
  Tensor t(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
  return t;
}

Json metrics_json(const EpochMetrics& m) {
  return Json{{"epoch", m.epoch},
              {"lr", double_json(m.lr)},
              {"train_loss", double_json(m.train_loss)},
              {"train_accuracy", double_json(m.train_accuracy)},
              {"test_loss", double_json(m.test_loss)},
              {"test_accuracy", double_json(m.test_accuracy)},
              {"seconds", double_json(m.seconds)},
              {"samples_per_second", double_json(m.samples_per_second)}};
}

EpochMetrics parse_metrics(const Json& v, const std::string& path) {
  if (!v.is_object()) fail(path, "an epoch's metrics", v);
  json_detail::check_keys(v, path,
                          {"epoch", "lr", "train_loss", "train_accuracy", "test_loss",
                           "test_accuracy", "seconds", "samples_per_second"},
                          {});
  EpochMetrics m;
  m.epoch = get_int(v, path, "epoch", 1);
  m.lr = get_double(v, path, "lr");
  m.train_loss = get_double(v, path, "train_loss");
  m.train_accuracy = get_double(v, path, "train_accuracy");
  m.test_loss = get_double(v, path, "test_loss");
  m.test_accuracy = get_double(v, path, "test_accuracy");
  m.seconds = get_double(v, path, "seconds");
  m.samples_per_second = get_double(v, path, "samples_per_second");
  return m;
}

std::string structure_text(const GraphDef& def) {
  GraphDef bare = def;
  bare.initializers.clear();
  // A node's place on the editor's canvas is view state nothing else reads:
  // moving a node does not make the graph another one.
  for (NodeDef& node : bare.nodes) node.position.reset();
  return write_graph_json(bare);
}

}  // namespace

std::string training_state_json(const TrainingState& s) {
  Json order = Json::array();
  if (!s.order.empty()) {
    Tensor t(DType::Int64, {static_cast<std::int64_t>(s.order.size())});
    std::memcpy(t.raw(), s.order.data(), t.nbytes());
    order = encode_base64(std::span(t.raw(), t.nbytes()));
  }
  Json history = Json::array();
  for (const EpochMetrics& m : s.history) history.push_back(metrics_json(m));
  Json optimizer_state = Json::array();
  for (const auto& [name, st] : s.optimizer_state) {
    Json entry{{"name", name}, {"t", st.t}, {"m", tensor_json(st.m)}};
    if (!st.v.empty()) entry["v"] = tensor_json(st.v);
    optimizer_state.push_back(std::move(entry));
  }
  Json doc{{"format", kStateFormat},
                 {"version", kStateVersion},
                 {"seed", s.seed},
                 {"step", s.step},
                 {"epoch", s.epoch},
                 {"epoch_samples", s.epoch_samples},
                 {"order", order},
                 {"shuffle_stream", s.shuffle_stream},
                 {"epoch_loss_sum", double_json(s.epoch_loss_sum)},
                 {"epoch_correct", s.epoch_correct},
                 {"epoch_seconds", double_json(s.epoch_seconds)},
                 {"history", history},
                 {"optimizer", std::string(optimizer_kind_name(s.optimizer))},
                 {"optimizer_state", optimizer_state},
                 {"loss_scale", double_json(s.loss_scale)},
                 {"loss_scale_good_steps", s.loss_scale_good_steps},
                 {"skipped_steps", s.skipped_steps}};
  if (s.order_data != 0) doc["order_data"] = s.order_data;
  return doc.dump();
}

TrainingState parse_training_state(std::string_view text) {
  const std::string path = "training_state";
  const Json doc = json_detail::parse_json(text);
  if (!doc.is_object()) fail(path, "an object", doc);
  if (const auto it = doc.find("format");
      it == doc.end() || !it->is_string() || it->get<std::string>() != kStateFormat)
    fail(json_detail::child(path, "format"), std::string("\"") + kStateFormat + "\"",
         it == doc.end() ? Json() : *it);
  if (get_int(doc, path, "version", 0) != kStateVersion)
    fail(json_detail::child(path, "version"), std::to_string(kStateVersion), doc.at("version"));
  json_detail::check_keys(doc, path,
                          {"format", "version", "seed", "step", "epoch", "epoch_samples", "order",
                           "shuffle_stream", "epoch_loss_sum", "epoch_correct", "epoch_seconds",
                           "history", "optimizer", "optimizer_state", "loss_scale",
                           "loss_scale_good_steps", "skipped_steps"},
                          {"order_data"});
  TrainingState s;
  const Json& seed = doc.at("seed");
  if (!seed.is_number_unsigned()) fail(json_detail::child(path, "seed"), "an integer >= 0", seed);
  s.seed = seed.get<std::uint64_t>();
  s.step = get_int(doc, path, "step", 0);
  s.epoch = get_int(doc, path, "epoch", 0);
  s.epoch_samples = get_int(doc, path, "epoch_samples", 0);
  const Json& order = doc.at("order");
  if (order.is_string()) {
    std::vector<std::byte> bytes;
    try {
      bytes = decode_base64(order.get_ref<const std::string&>());
    } catch (const Error& e) {
      throw InvalidGraph(path + ".order: " + e.what());
    }
    if (bytes.size() % sizeof(std::int64_t) != 0)
      throw InvalidGraph(path + ".order: " + std::to_string(bytes.size()) +
                         " bytes are not a whole number of int64 indices");
    s.order.resize(bytes.size() / sizeof(std::int64_t));
    if (!bytes.empty()) std::memcpy(s.order.data(), bytes.data(), bytes.size());
  } else if (!(order.is_array() && order.empty())) {
    fail(path + ".order", "base64 of int64 indices, or [] before the epoch began", order);
  }
  if (s.epoch_samples > static_cast<std::int64_t>(s.order.size()))
    throw InvalidGraph(path + ".epoch_samples: " + std::to_string(s.epoch_samples) +
                       " is past the epoch's order of " + std::to_string(s.order.size()) +
                       " samples");
  if (const auto it = doc.find("order_data"); it != doc.end()) {
    if (!it->is_number_unsigned())
      fail(json_detail::child(path, "order_data"), "an integer >= 0", *it);
    s.order_data = it->get<std::uint64_t>();
  }
  s.shuffle_stream = get_text(doc, path, "shuffle_stream");
  s.epoch_loss_sum = get_double(doc, path, "epoch_loss_sum");
  s.epoch_correct = get_int(doc, path, "epoch_correct", 0);
  s.epoch_seconds = get_double(doc, path, "epoch_seconds");
  const Json& history = doc.at("history");
  if (!history.is_array()) fail(path + ".history", "a list of epochs' metrics", history);
  for (std::size_t i = 0; i < history.size(); ++i)
    s.history.push_back(parse_metrics(history[i], path + ".history[" + std::to_string(i) + "]"));
  const Json& kind = doc.at("optimizer");
  if (!kind.is_string() || !parse_optimizer_kind(kind.get<std::string>(), s.optimizer))
    fail(path + ".optimizer", "\"sgd\", \"adam\" or \"adamw\"", kind);
  const Json& states = doc.at("optimizer_state");
  if (!states.is_array()) fail(path + ".optimizer_state", "a list of parameter states", states);
  for (std::size_t i = 0; i < states.size(); ++i) {
    const std::string item = path + ".optimizer_state[" + std::to_string(i) + "]";
    const Json& v = states[i];
    if (!v.is_object()) fail(item, "a parameter's state {name, t, m[, v]}", v);
    json_detail::check_keys(v, item, {"name", "t", "m"}, {"v"});
    Optimizer::ParameterState st;
    const std::string name = get_text(v, item, "name");
    st.t = get_int(v, item, "t", 1);
    st.m = parse_tensor(v.at("m"), item + ".m");
    if (v.contains("v")) st.v = parse_tensor(v.at("v"), item + ".v");
    if (!s.optimizer_state.emplace(name, std::move(st)).second)
      throw InvalidGraph(item + ".name: parameter '" + name + "' appears twice");
  }
  s.loss_scale = get_double(doc, path, "loss_scale");
  if (!(std::isfinite(s.loss_scale) && s.loss_scale >= 0))
    fail(path + ".loss_scale", "a finite number >= 0", doc.at("loss_scale"));
  s.loss_scale_good_steps = get_int(doc, path, "loss_scale_good_steps", 0);
  s.skipped_steps = get_int(doc, path, "skipped_steps", 0);
  return s;
}

void save_checkpoint(const std::filesystem::path& path, const GraphDef& def,
                     const TrainingState& state) {
  JsonWriteOptions options;
  options.training_state = training_state_json(state);
  save_graph_file(path, def, options);
}

Checkpoint load_checkpoint(const std::filesystem::path& path, const ReadOptions& options) {
  const std::string text = read_text_file(path, "checkpoint");
  try {
    GraphDocument doc = parse_graph_document(text, OpRegistry::global(), options);
    if (doc.training_state.empty())
      throw InvalidGraph(
          "a graph document without \"training_state\": a trained or untrained graph, not a "
          "checkpoint of nodeflow train (--checkpoint; docs/training-config.md)");
    TrainingState state = parse_training_state(doc.training_state);
    return Checkpoint{Graph(std::move(doc.def)), std::move(state)};
  } catch (const Error& e) {
    throw InvalidGraph("checkpoint " + path.string() + ": " + e.what());
  }
}

void check_same_structure(const GraphDef& given, const GraphDef& checkpoint) {
  std::map<std::string, const Initializer*> saved;
  for (const Initializer& init : checkpoint.initializers) saved[init.name] = &init;
  for (const Initializer& init : given.initializers) {
    const auto it = saved.find(init.name);
    if (it == saved.end())
      throw InvalidGraph("initializer '" + init.name + "' is not in the checkpoint");
    const Initializer& other = *it->second;
    if (other.value.dtype() != init.value.dtype() || other.value.shape() != init.value.shape())
      throw InvalidGraph("initializer '" + init.name + "': " +
                         std::string(dtype_name(init.value.dtype())) + " " +
                         to_string(init.value.shape()) + " here, " +
                         std::string(dtype_name(other.value.dtype())) + " " +
                         to_string(other.value.shape()) + " in the checkpoint");
    if (other.trainable != init.trainable)
      throw InvalidGraph("initializer '" + init.name + "': trainable differs from the checkpoint's");
    saved.erase(it);
  }
  if (!saved.empty())
    throw InvalidGraph("the checkpoint has initializer '" + saved.begin()->first +
                       "', which the graph has not");
  const std::string here = structure_text(given), there = structure_text(checkpoint);
  if (here == there) return;
  // Name the first difference (docs/training-config.md promises it): the
  // first member, and for a list its first differing entry.
  const Json a = json_detail::parse_json(here), b = json_detail::parse_json(there);
  const auto shown_json = [](const Json* v) {
    return v == nullptr ? std::string("nothing") : printable(v->dump(), 200);
  };
  for (const auto& [key, value] : a.items()) {
    const auto other = b.find(key);
    const Json* theirs = other == b.end() ? nullptr : &*other;
    if (theirs != nullptr && value == *theirs) continue;
    std::string what = key;
    const Json* mine = &value;
    if (theirs != nullptr && value.is_array() && theirs->is_array()) {
      std::size_t i = 0;
      while (i < value.size() && i < theirs->size() && value[i] == (*theirs)[i]) ++i;
      what = key + "[" + std::to_string(i) + "]";
      mine = i < value.size() ? &value[i] : nullptr;
      theirs = i < theirs->size() ? &(*theirs)[i] : nullptr;
    }
    throw InvalidGraph("its " + what + " differs from the checkpoint's: " + shown_json(mine) +
                       " here, " + shown_json(theirs) + " in the checkpoint");
  }
  throw InvalidGraph("the checkpoint's graph has members this one has not (" +
                     printable(there, 200) + ")");
}

}  // namespace nodeflow::training
