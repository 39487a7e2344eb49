#include "support/fuzz_properties.hpp"

#include <cstring>
#include <string>

#include "core/errors.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"

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

}  // namespace

void check_graph_document(std::string_view text) {
  GraphDef def;
  try {
    def = Graph(parse_graph_def(text, OpRegistry::global(), kFuzzRead)).def();
  } catch (const Error& e) {
    // Refused, as it may be; but the message reaches terminals.
    const std::string_view message = e.what();
    for (std::size_t i = 0; i < message.size(); ++i) {
      const auto c = static_cast<unsigned char>(message[i]);
      const bool c1 = c == 0xc2 && i + 1 < message.size() &&
                      static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
                      static_cast<unsigned char>(message[i + 1]) <= 0x9f;
      if (c < 0x20 || c == 0x7f || c1)
        violated(std::string("a message holds a raw control character: ") +
                 printable(e.what(), 300));
    }
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
