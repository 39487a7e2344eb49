#include "training/train_config.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <limits>

#include "serialization/json_support.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow::training {
namespace {

using json_detail::Json;

[[noreturn]] void fail(const std::string& path, const std::string& what, const Json& got) {
  throw InvalidConfig(path + ": expected " + what + ", got " + json_detail::render(got));
}

// Unknown keys are refused so that a typo ("momentun") is never ignored.
void check_keys(const Json& obj, const std::string& path,
                std::initializer_list<std::string_view> known) {
  if (!obj.is_object()) fail(path.empty() ? "configuration" : path, "an object", obj);
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == key;
    if (!ok) {
      std::string names;
      for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      throw InvalidConfig(json_detail::child(path, key) + ": unknown key (known: " + names + ")");
    }
  }
}

const Json* member(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

void read_number(const Json& obj, const std::string& path, std::string_view key, double& out) {
  if (const Json* v = member(obj, key)) {
    if (!v->is_number()) fail(json_detail::child(path, key), "a number", *v);
    out = v->get<double>();
  }
}

void read_int(const Json& obj, const std::string& path, std::string_view key, std::int64_t min,
              std::int64_t& out) {
  if (const Json* v = member(obj, key)) {
    std::int64_t x = 0;
    if (!json_detail::as_int64(*v, x) || x < min)
      fail(json_detail::child(path, key), json_detail::int64_expectation(*v, min), *v);
    out = x;
  }
}

void read_bool(const Json& obj, const std::string& path, std::string_view key, bool& out) {
  if (const Json* v = member(obj, key)) {
    if (!v->is_boolean()) fail(json_detail::child(path, key), "true or false", *v);
    out = v->get<bool>();
  }
}

void read_string(const Json& obj, const std::string& path, std::string_view key, std::string& out) {
  if (const Json* v = member(obj, key)) {
    if (!v->is_string() || v->get_ref<const std::string&>().empty())
      fail(json_detail::child(path, key), "a non-empty string", *v);
    out = v->get<std::string>();
  }
}

// Keys that only some values of `type` read. A key of another type is a
// mistake the user should hear of, not a value silently ignored.
struct KeyUse {
  std::string_view key, users;
  std::initializer_list<std::string_view> types;
};
void refuse_keys_of_other_types(const Json& obj, const std::string& path, std::string_view kind,
                                std::initializer_list<KeyUse> uses) {
  const std::string type = obj.at("type").get<std::string>();
  for (const KeyUse& use : uses)
    if (member(obj, use.key) != nullptr &&
        std::find(use.types.begin(), use.types.end(), type) == use.types.end())
      throw InvalidConfig(path + "." + std::string(use.key) + ": not used by the \"" + type +
                          "\" " + std::string(kind) + " (only by " + std::string(use.users) + ")");
}

OptimizerSettings read_optimizer(const Json& obj) {
  const std::string path = "optimizer";
  check_keys(obj, path,
             {"type", "lr", "momentum", "nesterov", "beta1", "beta2", "eps", "weight_decay"});
  OptimizerSettings s;
  const Json* type = member(obj, "type");
  if (type == nullptr) throw InvalidConfig("optimizer.type: missing (sgd, adam or adamw)");
  if (!type->is_string() || !parse_optimizer_kind(type->get<std::string>(), s.kind))
    fail("optimizer.type", "\"sgd\", \"adam\" or \"adamw\"", *type);
  refuse_keys_of_other_types(obj, path, "optimizer",
                             {{"momentum", "sgd", {"sgd"}},
                              {"nesterov", "sgd", {"sgd"}},
                              {"beta1", "adam and adamw", {"adam", "adamw"}},
                              {"beta2", "adam and adamw", {"adam", "adamw"}},
                              {"eps", "adam and adamw", {"adam", "adamw"}}});
  if (member(obj, "lr") == nullptr)
    throw InvalidConfig("optimizer.lr: missing (the base learning rate)");
  read_number(obj, path, "lr", s.lr);
  read_number(obj, path, "momentum", s.momentum);
  read_bool(obj, path, "nesterov", s.nesterov);
  read_number(obj, path, "beta1", s.beta1);
  read_number(obj, path, "beta2", s.beta2);
  read_number(obj, path, "eps", s.eps);
  read_number(obj, path, "weight_decay", s.weight_decay);
  try {
    validate(s);
  } catch (const InvalidAttribute& e) {
    throw InvalidConfig(e.what());
  }
  return s;
}

ScheduleSettings read_schedule(const Json& obj) {
  const std::string path = "schedule";
  check_keys(obj, path, {"type", "step_size", "milestones", "gamma", "lr_min", "t_max"});
  ScheduleSettings s;
  if (const Json* type = member(obj, "type");
      type == nullptr || !type->is_string() ||
      !parse_schedule_kind(type->get<std::string>(), s.kind))
    fail("schedule.type",
         "\"constant\", \"step\", \"multistep\", \"cosine\" or \"exponential\"",
         type == nullptr ? Json() : *type);
  refuse_keys_of_other_types(obj, path, "schedule",
                             {{"step_size", "step", {"step"}},
                              {"milestones", "multistep", {"multistep"}},
                              {"gamma", "step, multistep and exponential",
                               {"step", "multistep", "exponential"}},
                              {"lr_min", "cosine", {"cosine"}},
                              {"t_max", "cosine", {"cosine"}}});
  read_int(obj, path, "step_size", 1, s.step_size);
  read_number(obj, path, "gamma", s.gamma);
  read_number(obj, path, "lr_min", s.lr_min);
  read_int(obj, path, "t_max", 1, s.t_max);
  if (const Json* ms = member(obj, "milestones")) {
    if (!ms->is_array()) fail("schedule.milestones", "a list of epochs", *ms);
    for (std::size_t i = 0; i < ms->size(); ++i) {
      std::int64_t m = 0;
      if (!json_detail::as_int64((*ms)[i], m))
        fail("schedule.milestones[" + std::to_string(i) + "]", "an integer", (*ms)[i]);
      s.milestones.push_back(m);
    }
  }
  return s;
}

ClipSettings read_clipping(const Json& obj) {
  const std::string path = "gradient_clipping";
  check_keys(obj, path, {"value", "max_norm", "norm_type"});
  ClipSettings s;
  if (member(obj, "value") == nullptr && member(obj, "max_norm") == nullptr)
    throw InvalidConfig(path + ": give value, max_norm or both");
  double x = 0;
  if (member(obj, "value")) {
    read_number(obj, path, "value", x);
    s.value = x;
  }
  if (member(obj, "max_norm")) {
    read_number(obj, path, "max_norm", x);
    s.max_norm = x;
  }
  if (const Json* p = member(obj, "norm_type")) {
    if (!s.max_norm) throw InvalidConfig(path + ".norm_type: only used with max_norm");
    if (p->is_string() && p->get<std::string>() == "inf")
      s.norm_type = std::numeric_limits<double>::infinity();
    else if (p->is_number())
      s.norm_type = p->get<double>();
    else
      fail(path + ".norm_type", "a number >= 1 or \"inf\"", *p);
  }
  try {
    validate(s);
  } catch (const InvalidAttribute& e) {
    throw InvalidConfig(e.what());
  }
  return s;
}

LossScaleSettings read_loss_scaling(const Json& obj) {
  const std::string path = "loss_scaling";
  check_keys(obj, path, {"init_scale", "growth_factor", "backoff_factor", "growth_interval"});
  LossScaleSettings s;
  s.enabled = true;
  read_number(obj, path, "init_scale", s.init_scale);
  read_number(obj, path, "growth_factor", s.growth_factor);
  read_number(obj, path, "backoff_factor", s.backoff_factor);
  read_int(obj, path, "growth_interval", 1, s.growth_interval);
  try {
    validate(s);
  } catch (const InvalidAttribute& e) {
    throw InvalidConfig(e.what());
  }
  return s;
}

}  // namespace

TrainConfig parse_train_config(std::string_view text) {
  Json doc;
  try {
    doc = json_detail::parse_json(text);
  } catch (const InvalidGraph& e) {
    throw InvalidConfig(e.what());
  }
  check_keys(doc, "",
             {"optimizer", "schedule", "batch_size", "epochs", "seed", "threads", "eval_batch_size",
              "log_every", "weight_decay_overrides", "bindings", "gradient_clipping",
              "gradient_accumulation", "loss_scaling", "checkpoint_every"});
  TrainConfig c;
  const Json* opt = member(doc, "optimizer");
  if (opt == nullptr) throw InvalidConfig("optimizer: missing (an object with type and lr)");
  c.optimizer = read_optimizer(*opt);
  read_int(doc, "", "batch_size", 1, c.batch_size);
  read_int(doc, "", "epochs", 1, c.epochs);
  std::int64_t seed = 0;
  read_int(doc, "", "seed", 0, seed);
  c.seed = static_cast<std::uint64_t>(seed);
  std::int64_t threads = c.threads;
  read_int(doc, "", "threads", 1, threads);
  if (threads > 1024) fail("threads", "at most 1024 threads", doc["threads"]);
  c.threads = static_cast<int>(threads);
  read_int(doc, "", "eval_batch_size", 1, c.eval_batch_size);
  read_int(doc, "", "log_every", 0, c.log_every);
  read_int(doc, "", "gradient_accumulation", 1, c.gradient_accumulation);
  read_int(doc, "", "checkpoint_every", 0, c.checkpoint_every);
  if (const Json* clip = member(doc, "gradient_clipping")) c.clipping = read_clipping(*clip);
  if (const Json* ls = member(doc, "loss_scaling")) c.loss_scaling = read_loss_scaling(*ls);
  if (const Json* sched = member(doc, "schedule")) c.schedule = read_schedule(*sched);
  if (c.schedule.kind == ScheduleKind::Cosine && c.schedule.t_max == 0) c.schedule.t_max = c.epochs;
  try {
    validate(c.schedule);
  } catch (const InvalidAttribute& e) {
    throw InvalidConfig(e.what());
  }
  if (const Json* wd = member(doc, "weight_decay_overrides")) {
    if (!wd->is_object())
      fail("weight_decay_overrides", "an object {initializer name: number}", *wd);
    for (const auto& [name, value] : wd->items()) {
      const std::string path = json_detail::child("weight_decay_overrides", name);
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        fail(path, "a number >= 0", value);
      c.weight_decay_overrides[name] = value.get<double>();
    }
  }
  if (const Json* b = member(doc, "bindings")) {
    check_keys(*b, "bindings", {"input", "label", "loss", "prediction"});
    read_string(*b, "bindings", "input", c.bindings.input);
    read_string(*b, "bindings", "label", c.bindings.label);
    read_string(*b, "bindings", "loss", c.bindings.loss);
    read_string(*b, "bindings", "prediction", c.bindings.prediction);
  }
  return c;
}

TrainConfig load_train_config(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, "training configuration");
  try {
    return parse_train_config(text);
  } catch (const InvalidConfig& e) {
    throw InvalidConfig(path.string() + ": " + e.what());
  }
}

}  // namespace nodeflow::training
