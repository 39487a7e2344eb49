#pragma once
// Shared by the graph-document reader tests: a small valid document to vary,
// and the message of the error a document raises (support/error_of.hpp for
// the error of any other call).
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "serialization/json_reader.hpp"
#include "support/error_of.hpp"

namespace nodeflow::json_reader_test {

inline const std::string kInputs = R"([{"name": "x", "dtype": "float32", "shape": [null, 1, 4, 4]}])";
inline const std::string kNodes =
    R"([{"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "specified_outputs_name": ["y"],
        "attributes": {"kernel_shape": [2, 2]}}])";

/// A document with the given inputs, initializers and nodes (JSON text).
inline std::string doc(const std::string& inputs = kInputs, const std::string& initializers = "[]",
                       const std::string& nodes = kNodes) {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "g", "inputs": )" + inputs +
         R"(, "outputs": ["y"], "initializers": )" + initializers + R"(, "nodes": )" + nodes + "}";
}

/// A document whose one MaxPool node "pool1" has the given attributes object.
inline std::string with_attributes(const std::string& attributes) {
  return doc(kInputs, "[]",
             R"([{"op_type": "MaxPool", "name": "pool1", "inputs": ["x"], "attributes": )" +
                 attributes + "}]");
}

/// A document with one initializer "w".
inline std::string with_initializer(const std::string& dtype, const std::string& shape,
                                    const std::string& data, const std::string& extra = "") {
  return doc(kInputs, R"([{"name": "w", "dtype": ")" + dtype + R"(", "shape": )" + shape +
                          R"(, "data": )" + data + extra + "}]");
}

using testing::error_of;

/// The message of the E that parse_graph_def(text) throws; a test failure if it
/// throws nothing or something else (the failure quotes the document).
template <typename E = InvalidGraph>
std::string error_of(const std::string& text, const OpRegistry& registry = OpRegistry::global()) {
  SCOPED_TRACE("document: " + text.substr(0, 300));
  return error_of<E>([&] { parse_graph_def(text, registry); });
}

}  // namespace nodeflow::json_reader_test
