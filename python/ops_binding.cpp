// nodeflow.ops(): the op schemas, the document of `nodeflow ops --json`
// (docs/ops-json.md) as Python objects.
#include "python/bindings.hpp"
#include "serialization/op_schema_json.hpp"

namespace nodeflow::python {

void bind_ops(py::module_& m) {
  m.def(
      "ops", [] { return py::module_::import("json").attr("loads")(op_schemas_json()); },
      "The op schemas (docs/ops-json.md): the document of `nodeflow ops --json` as a dict");
}

}  // namespace nodeflow::python
