#include "core/errors.hpp"

#include <algorithm>
#include <exception>

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

std::string printable(std::string_view s, std::size_t limit, bool ascii_only) {
  std::size_t n = std::min(limit, s.size());
  if (!ascii_only)
    while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  std::string out;
  for (char ch : s.substr(0, n)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || (ascii_only && c > 0x7f)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  if (n < s.size()) out += "...";
  return out;
}

std::string context_prefix(const std::string& where, const std::string& inner) {
  for (const char* path : {"attributes.", "inputs[", "outputs[", "specified_outputs_name"})
    if (inner.rfind(path, 0) == 0) return where + ".";
  return where + ": ";
}

}  // namespace nodeflow
