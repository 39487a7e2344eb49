#include "core/errors.hpp"

#include <algorithm>
#include <exception>

#include "core/names.hpp"

namespace nodeflow {

void rethrow_with_context(const std::string& where) {
  try {
    throw;
  } catch (const InvalidGraph& e) {
    throw InvalidGraph(where + e.what());
  } catch (const InvalidAttribute& e) {
    throw InvalidAttribute(where + e.what());
  } catch (const ShapeMismatch& e) {
    throw ShapeMismatch(where + e.what());
  } catch (const UnsupportedDType& e) {
    throw UnsupportedDType(where + e.what());
  } catch (const IoError& e) {
    throw IoError(where + e.what());
  } catch (const RunError& e) {
    throw RunError(where + e.what());
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

}  // namespace

std::string printable(std::string_view s, std::size_t limit, bool ascii_only) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t length = c < 0x80 || ascii_only ? 1 : utf8_sequence_length(s, i);
    if (i + std::max<std::size_t>(length, 1) > limit) break;  // never inside a sequence
    if (length == 0 || c < 0x20 || c == 0x7f || (ascii_only && c > 0x7f)) {
      append_hex_byte(out, c);
      ++i;
      continue;
    }
    // U+0080 ... U+009F, the C1 controls: C2 80 ... C2 9F.
    if (length == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      out += "\\u00";
      out += kHex[static_cast<unsigned char>(s[i + 1]) >> 4];
      out += kHex[static_cast<unsigned char>(s[i + 1]) & 15];
    } else {
      out += s.substr(i, length);
    }
    i += length;
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string context_prefix(const std::string& where, const std::string& inner) {
  for (const char* path : {"attributes.", "inputs[", "outputs[", "specified_outputs_name"})
    if (inner.rfind(path, 0) == 0) return where + ".";
  return where + ": ";
}

}  // namespace nodeflow
