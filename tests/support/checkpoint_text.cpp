#include "support/checkpoint_text.hpp"

#include "serialization/json_reader.hpp"
#include "serialization/json_support.hpp"
#include "serialization/json_writer.hpp"

namespace nodeflow::testing {

std::string without_timings(const std::string& text) {
  json_detail::Json doc;
  try {
    doc = json_detail::parse_json(text);
  } catch (const std::exception&) {
    return text;
  }
  if (!doc.is_object() || !doc.contains("training_state")) return text;
  json_detail::Json& state = doc["training_state"];
  if (!state.is_object()) return text;
  state["epoch_seconds"] = 0;
  if (state.contains("history") && state["history"].is_array())
    for (json_detail::Json& epoch : state["history"])
      if (epoch.is_object()) {
        epoch["seconds"] = 0;
        epoch["samples_per_second"] = 0;
      }
  return doc.dump();
}

std::string graph_part(const std::string& text) {
  return write_graph_json(parse_graph_def(text));
}

}  // namespace nodeflow::testing
