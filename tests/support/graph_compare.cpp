#include "support/graph_compare.hpp"

#include <cstring>

namespace nodeflow::testing {
namespace {

std::string describe(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + " " + to_string(t.shape());
}

}  // namespace

::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  if (a.empty() != b.empty()) return ::testing::AssertionFailure() << "one tensor is absent";
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << describe(a) << " vs " << describe(b);
  if (a.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0) {
    std::size_t i = 0;
    while (a.raw()[i] == b.raw()[i]) ++i;
    return ::testing::AssertionFailure()
           << "bytes differ from offset " << i << " (element " << i / dtype_size(a.dtype()) << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_graph_def(const GraphDef& a, const GraphDef& b) {
  auto fail = [](const std::string& where) {
    return ::testing::AssertionFailure() << where << " differs";
  };
  if (a.name != b.name) return fail("name");
  if (a.inputs.size() != b.inputs.size()) return fail("inputs count");
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i].name != b.inputs[i].name || a.inputs[i].info.dtype != b.inputs[i].info.dtype ||
        a.inputs[i].info.shape != b.inputs[i].info.shape)
      return fail("inputs[" + std::to_string(i) + "]");
  if (a.outputs != b.outputs) return fail("outputs");
  if (a.initializers.size() != b.initializers.size()) return fail("initializers count");
  for (std::size_t i = 0; i < a.initializers.size(); ++i) {
    const Initializer& x = a.initializers[i];
    const Initializer& y = b.initializers[i];
    const std::string where = "initializers[" + std::to_string(i) + "] (" + x.name + ")";
    if (x.name != y.name || x.trainable != y.trainable) return fail(where);
    if (auto r = same_bits(x.value, y.value); !r)
      return ::testing::AssertionFailure() << where << ": " << r.message();
  }
  if (a.nodes.size() != b.nodes.size()) return fail("nodes count");
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeDef& x = a.nodes[i];
    const NodeDef& y = b.nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "] (" + x.name + ")";
    if (x.op_type != y.op_type || x.name != y.name || x.inputs != y.inputs) return fail(where);
    if (x.specified_outputs_name != y.specified_outputs_name)
      return fail(where + ".specified_outputs_name");
    if (x.attributes != y.attributes) return fail(where + ".attributes");
    if (x.training != y.training) return fail(where + ".training");
    if (std::memcmp(&x.lda_coeff, &y.lda_coeff, sizeof(double)) != 0)
      return fail(where + ".lda_coeff");
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_tensors(const std::map<std::string, Tensor>& a,
                                        const std::map<std::string, Tensor>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " tensors";
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end()) return ::testing::AssertionFailure() << "'" << name << "' missing";
    if (auto r = same_bits(t, it->second); !r)
      return ::testing::AssertionFailure() << name << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace nodeflow::testing
