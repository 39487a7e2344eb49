#include "serialization/json_writer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "serialization/base64.hpp"
#include "serialization/json_text.hpp"

namespace nodeflow {
namespace {

using json_text::append_float;
using json_text::append_int;

/// "nodes[3] (pool1)", as the reader and Graph name an element.
std::string element(const std::string& array, std::size_t i, const std::string& name) {
  std::string out = array + "[" + std::to_string(i) + "]";
  std::string quoted;
  if (!name.empty() && json_text::append_string(quoted, name)) out += " (" + name + ")";
  return out;
}

template <typename T>
bool is_finite(T v) {
  if constexpr (std::is_same_v<T, double>)
    return std::isfinite(v);
  else
    return std::isfinite(static_cast<float>(v));  // float16 and bfloat16 widen exactly
}

class DocumentWriter {
 public:
  explicit DocumentWriter(const JsonWriteOptions& options) : options_(options) {}

  /// {"dtype": ..., "shape": [...], "data": ...}: a tensor as an initializer's
  /// dtype, shape and data are written.
  std::string tensor_value(const Tensor& t) {
    out_ += "{\"dtype\": \"";
    out_ += dtype_name(t.dtype());
    out_ += "\", \"shape\": ";
    shape(t.shape());
    out_ += ", \"data\": ";
    visit_dtype(t.dtype(), [&](auto zero) { data<decltype(zero)>(t); });
    out_ += '}';
    return std::move(out_);
  }

  std::string write(const GraphDef& def) {
    out_ += "{\n  \"format\": \"nodeflow.graph\",\n  \"version\": 1,\n  \"name\": ";
    string(def.name, "name");
    out_ += ",\n  \"inputs\": [";
    for (std::size_t i = 0; i < def.inputs.size(); ++i) {
      begin_item(i);
      input(def.inputs[i], element("inputs", i, def.inputs[i].name));
    }
    end_items(def.inputs.size());
    out_ += ",\n  \"outputs\": ";
    string_list(def.outputs, "outputs");
    out_ += ",\n  \"initializers\": [";
    for (std::size_t i = 0; i < def.initializers.size(); ++i) {
      begin_item(i);
      initializer(def.initializers[i], element("initializers", i, def.initializers[i].name));
    }
    end_items(def.initializers.size());
    out_ += ",\n  \"nodes\": [";
    for (std::size_t i = 0; i < def.nodes.size(); ++i) {
      begin_item(i);
      node(def.nodes[i], element("nodes", i, def.nodes[i].name));
    }
    end_items(def.nodes.size());
    if (!options_.training_state.empty()) {
      out_ += ",\n  \"training_state\": ";
      out_ += options_.training_state;
    }
    out_ += "\n}\n";
    return std::move(out_);
  }

 private:
  void begin_item(std::size_t i) { out_ += i ? ",\n    " : "\n    "; }
  void end_items(std::size_t n) { out_ += n ? "\n  ]" : "]"; }

  void string(const std::string& s, const std::string& path) {
    if (!json_text::append_string(out_, s))
      throw InvalidGraph(path + ": expected UTF-8 text (JSON cannot carry other bytes)");
  }

  void string_list(const std::vector<std::string>& list, const std::string& path) {
    out_ += '[';
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i) out_ += ", ";
      string(list[i], path + "[" + std::to_string(i) + "]");
    }
    out_ += ']';
  }

  void key(const char* name) {
    out_ += ", \"";
    out_ += name;
    out_ += "\": ";
  }

  void shape(const Shape& dims) {
    out_ += '[';
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i) out_ += ", ";
      if (dims[i] == kDynamicDim)
        out_ += "null";
      else
        append_int(out_, dims[i]);
    }
    out_ += ']';
  }

  void input(const GraphInput& in, const std::string& where) {
    out_ += "{\"name\": ";
    string(in.name, where + ".name");
    key("dtype");
    out_ += '"';
    out_ += dtype_name(in.info.dtype);
    out_ += '"';
    key("shape");
    shape(in.info.shape);
    out_ += '}';
  }

  void initializer(const Initializer& init, const std::string& where) {
    if (init.value.empty()) throw InvalidGraph(where + ".data: initializer has no value");
    out_ += "{\"name\": ";
    string(init.name, where + ".name");
    key("dtype");
    out_ += '"';
    out_ += dtype_name(init.value.dtype());
    out_ += '"';
    key("shape");
    shape(init.value.shape());
    key("trainable");
    out_ += init.trainable ? "true" : "false";
    key("data");
    visit_dtype(init.value.dtype(), [&](auto zero) { data<decltype(zero)>(init.value); });
    out_ += '}';
  }

  template <typename T>
  void data(const Tensor& t) {
    const std::span<const T> values = t.values<T>();
    bool inline_numbers = values.size() <= options_.inline_limit;
    if constexpr (!std::is_integral_v<T>)
      for (const T v : values) inline_numbers = inline_numbers && is_finite(v);
    if (!inline_numbers) {
      base64(t);
      return;
    }
    out_ += '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) out_ += ", ";
      if constexpr (std::is_integral_v<T>)
        append_int(out_, static_cast<std::int64_t>(values[i]));
      else
        append_float(out_, values[i]);
    }
    out_ += ']';
  }

  void base64(const Tensor& t) {
    std::span<const std::byte> bytes(t.raw(), t.nbytes());
    std::vector<std::byte> swapped;
    if constexpr (std::endian::native == std::endian::big) {
      // The document holds little-endian bytes whatever the machine.
      swapped.assign(bytes.begin(), bytes.end());
      const std::size_t item = dtype_size(t.dtype());
      for (std::size_t i = 0; i < swapped.size(); i += item)
        std::reverse(swapped.begin() + static_cast<std::ptrdiff_t>(i),
                     swapped.begin() + static_cast<std::ptrdiff_t>(i + item));
      bytes = swapped;
    }
    out_ += "{\"base64\": \"";
    out_ += encode_base64(bytes);
    out_ += "\"}";
  }

  void node(const NodeDef& n, const std::string& where) {
    out_ += "{\"op_type\": ";
    string(n.op_type, where + ".op_type");
    key("name");
    string(n.name, where + ".name");
    key("inputs");
    string_list(n.inputs, where + ".inputs");
    if (n.specified_outputs_name) {
      key("specified_outputs_name");
      string_list(*n.specified_outputs_name, where + ".specified_outputs_name");
    }
    if (!n.attributes.empty()) {
      key("attributes");
      out_ += '{';
      bool first = true;
      for (const auto& [name, value] : n.attributes) {
        if (!first) out_ += ", ";
        first = false;
        const std::string path = where + ".attributes." + name;
        string(name, where + ".attributes");
        out_ += ": ";
        attribute(value, path);
      }
      out_ += '}';
    }
    if (!n.training) {
      key("training");
      out_ += "false";
    }
    if (n.lda_coeff != 1.0) {
      detail::check_lda_coeff(n.lda_coeff, where);
      key("lda_coeff");
      append_float(out_, n.lda_coeff);
    }
    if (n.position) {
      key("position");
      out_ += '[';
      finite((*n.position)[0], where + ".position[0]");
      out_ += ", ";
      finite((*n.position)[1], where + ".position[1]");
      out_ += ']';
    }
    out_ += '}';
  }

  void finite(double v, const std::string& path) {
    if (!std::isfinite(v))
      throw InvalidAttribute(path + ": expected a finite number (JSON has no NaN or infinity)");
    append_float(out_, v);
  }

  void attribute(const AttrValue& value, const std::string& path) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      append_int(out_, *i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      finite(*d, path);
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      string(*s, path);
    } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value)) {
      out_ += '[';
      for (std::size_t k = 0; k < is->size(); ++k) {
        if (k) out_ += ", ";
        append_int(out_, (*is)[k]);
      }
      out_ += ']';
    } else if (const auto* ds = std::get_if<std::vector<double>>(&value)) {
      out_ += '[';
      for (std::size_t k = 0; k < ds->size(); ++k) {
        if (k) out_ += ", ";
        finite((*ds)[k], path + "[" + std::to_string(k) + "]");
      }
      out_ += ']';
    } else {
      string_list(std::get<std::vector<std::string>>(value), path);
    }
  }

  const JsonWriteOptions& options_;
  std::string out_;
};

}  // namespace

std::string write_graph_json(const GraphDef& def, const JsonWriteOptions& options) {
  return DocumentWriter(options).write(def);
}

void save_graph_file(const std::filesystem::path& path, const GraphDef& def,
                     const JsonWriteOptions& options, const WriteProgress& progress) {
  // The whole document is rendered before the file is touched: an invalid
  // graph leaves no trace on disk.
  const std::string text = write_graph_json(def, options);
  write_file_atomically(path, text, progress);
}

std::string write_tensor_json(const Tensor& tensor, const JsonWriteOptions& options) {
  return DocumentWriter(options).tensor_value(tensor);
}

}  // namespace nodeflow
