#pragma once
// The op registry as one JSON document (docs/ops-json.md): every op's domain,
// version, inputs, outputs and attribute declarations, and the keys every node
// has. Generated from the schemas alone (core/registry.hpp), so that the
// command line (`nodeflow ops --json`), an editor's palette and a server all
// describe the same ops.
#include <string>

#include "core/registry.hpp"

namespace nodeflow {

/// The document, `"format": "nodeflow.ops"`, version 1, indented by two
/// spaces, ops in op_type order.
std::string op_schemas_json(const OpRegistry& registry = OpRegistry::global());

/// The ONNX domain and version of an op, read from its definition: "ONNX
/// MaxPool-22" is domain "" (ai.onnx) version 22. A definition of another form
/// is domain "nodeflow" and version 0 (none).
struct OpVersion {
  std::string domain;
  int version = 0;
};
OpVersion op_version(const OpSchema& schema);

}  // namespace nodeflow
