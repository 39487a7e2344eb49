#include "support/fuzz_properties.hpp"

#include <cstring>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"
#include "serialization/onnx.hpp"

namespace nodeflow::testing {
namespace {

[[noreturn]] void violated(const std::string& what) { throw PropertyViolation(what); }

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

// A short document may legitimately ask for gigabytes (an `init` rule); the
// fuzzers run under a 2 GB memory limit, so they read with a smaller budget.
constexpr ReadOptions kFuzzRead{std::uint64_t{64} << 20};

// A refusal's message reaches terminals: no raw control character in it, in
// the sense of docs/graph-format.md ("Names"): U+0000 to U+001F and U+007F.
// U+0080 to U+009F may appear raw: a valid name may hold them, and names are
// printed as they are (printable() still escapes them in rendered values:
// tests/unit/core/test_printable.cpp).
void check_message(const Error& e) {
  const std::string_view message = e.what();
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f)
      violated(std::string("a message holds a raw control character: ") + printable(e.what(), 300));
  }
}

}  // namespace

void check_graph_document(std::string_view text) {
  GraphDef def;
  try {
    def = Graph(parse_graph_def(text, OpRegistry::global(), kFuzzRead)).def();
  } catch (const Error& e) {
    check_message(e);  // refused, as it may be
    return;
  }
  // Accepted: the writer must reproduce it exactly.
  std::string first;
  try {
    first = write_graph_json(def);
  } catch (const Error& e) {
    violated(std::string("accepted graph cannot be written: ") + e.what());
  }
  GraphDef back;
  try {
    back = Graph(parse_graph_def(first, OpRegistry::global(), kFuzzRead)).def();
  } catch (const Error& e) {
    violated(std::string("written graph is refused: ") + e.what());
  }
  if (write_graph_json(back) != first) violated("rewriting the written graph changes its bytes");
  if (back.initializers.size() != def.initializers.size()) violated("initializer count changed");
  for (std::size_t i = 0; i < def.initializers.size(); ++i)
    if (!same_bits(def.initializers[i].value, back.initializers[i].value))
      violated("initializer " + def.initializers[i].name + " changed bits");
}

void check_onnx_model(std::string_view bytes) {
  std::optional<Graph> graph;
  try {
    graph.emplace(load_onnx(bytes, {}, kFuzzRead));
  } catch (const Error& e) {
    check_message(e);  // refused, as it may be
    return;
  }
  std::string first;
  try {
    first = write_onnx(*graph).bytes;
  } catch (const InvalidAttribute&) {
    return;  // a float attribute beyond float32 (read as a double): refused on writing, rightly
  } catch (const Error& e) {
    violated(std::string("accepted model cannot be written: ") + e.what());
  }
  std::optional<Graph> back;
  try {
    back.emplace(load_onnx(first, {}, kFuzzRead));
  } catch (const Error& e) {
    violated(std::string("written model is refused: ") + e.what());
  }
  if (write_onnx(*back).bytes != first) violated("rewriting the written model changes its bytes");
  const auto& a = graph->def().initializers;
  const auto& b = back->def().initializers;
  if (a.size() != b.size()) violated("initializer count changed");
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i].value, b[i].value)) violated("initializer " + a[i].name + " changed bits");
}

void check_npy_bytes(std::span<const std::byte> bytes) {
  Tensor t;
  try {
    t = parse_npy(bytes, "fuzz input");
  } catch (const Error&) {
    return;
  }
  const std::string encoded = encode_npy(t);
  Tensor back;
  try {
    back = parse_npy(std::as_bytes(std::span(encoded.data(), encoded.size())), "re-encoded");
  } catch (const Error& e) {
    violated(std::string("re-encoded .npy is refused: ") + e.what());
  }
  if (!same_bits(t, back)) violated("re-encoded .npy reads back to other values");
  if (encode_npy(back) != encoded) violated("encoding is not stable");
}

}  // namespace nodeflow::testing
