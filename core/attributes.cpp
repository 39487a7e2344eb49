#include "core/attributes.hpp"

#include <cmath>
#include <sstream>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

std::string range_words(const AttrSpec& s) {
  if (s.min && s.max) return " in [" + std::to_string(*s.min) + ", " + std::to_string(*s.max) + "]";
  if (s.min && *s.min == 1) return "";
  if (s.min) return " >= " + std::to_string(*s.min);
  return "";
}

std::string int_words(const AttrSpec& s, bool plural) {
  std::string noun = plural ? "integers" : "integer";
  if (s.min && !s.max && *s.min == 1) return "positive " + noun;
  if (s.min && !s.max && *s.min == 0) return "non-negative " + noun;
  if (s.min && s.max && *s.min == 0 && *s.max == 1) return plural ? "integers 0 or 1" : "integer 0 or 1";
  return noun + range_words(s);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

bool in_range(const AttrSpec& s, std::int64_t v) {
  return (!s.min || v >= *s.min) && (!s.max || v <= *s.max);
}

AttrKind kind_of(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

}  // namespace

std::string describe(const AttrSpec& s) {
  switch (s.kind) {
    case AttrKind::Int: {
      const std::string words = int_words(s, false);
      return (words.rfind("integer", 0) == 0 ? "an " : "a ") + words;
    }
    case AttrKind::Ints: return "a list of " + int_words(s, true);
    case AttrKind::Float: return "a number";
    case AttrKind::Floats: return "a list of numbers";
    case AttrKind::String: return s.allowed.empty() ? "a string" : "one of " + join(s.allowed);
    case AttrKind::Strings: return "a list of strings";
  }
  return "a value";
}

// Strings come from documents and callers: shown escaped (printable).
std::string to_string(const AttrValue& v) {
  std::ostringstream os;
  os.precision(17);
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::string>) {
          os << '"' << printable(x, 200) << '"';
        } else if constexpr (std::is_same_v<X, std::int64_t> || std::is_same_v<X, double>) {
          os << x;
        } else {
          os << '[';
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) os << ", ";
            if constexpr (std::is_same_v<X, std::vector<std::string>>)
              os << '"' << printable(x[i], 200) << '"';
            else
              os << x[i];
          }
          os << ']';
        }
      },
      v);
  return os.str();
}

void validate_attributes(const std::string& op_type, const std::vector<AttrSpec>& specs,
                         const Attributes& attrs) {
  for (const auto& entry : attrs) {
    // Named references, not a structured binding: clang before 16 (the fuzz
    // build's compiler) cannot capture bindings in the lambda below.
    const std::string& name = entry.first;
    const AttrValue& value = entry.second;
    const AttrSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::vector<std::string> known;
      for (const auto& s : specs) known.push_back(s.name);
      const std::string shown = printable(name, 200);
      throw InvalidAttribute("attributes." + shown + ": unknown attribute '" + shown + "' for " +
                             op_type + " (known: " + (known.empty() ? "none" : join(known)) + ")");
    }
    // The message is built only for a refused value: graphs of many nodes
    // validate every attribute of every node.
    auto refuse = [&] {
      throw InvalidAttribute("attributes." + name + ": expected " + describe(*spec) + ", got " +
                             to_string(value));
    };
    if (kind_of(value) != spec->kind) refuse();
    if (const auto* i = std::get_if<std::int64_t>(&value); i && !in_range(*spec, *i)) refuse();
    if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value))
      for (std::int64_t x : *is)
        if (!in_range(*spec, x)) refuse();
    if (const auto* f = std::get_if<double>(&value); f && !std::isfinite(*f)) refuse();
    if (const auto* s = std::get_if<std::string>(&value); s && !spec->allowed.empty()) {
      bool ok = false;
      for (const auto& a : spec->allowed) ok = ok || a == *s;
      if (!ok) refuse();
    }
  }
  for (const auto& s : specs)
    if (s.required && !attrs.count(s.name))
      throw InvalidAttribute("attributes." + s.name + ": required attribute '" + s.name +
                             "' of " + op_type + " is missing");
}

namespace {
template <typename T>
const T* typed(const Attributes& a, const std::string& name) {
  auto it = a.find(name);
  if (it == a.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (!v) throw InvalidAttribute("attributes." + name + ": wrong kind, got " + to_string(it->second));
  return v;
}
}  // namespace

std::int64_t get_int(const Attributes& a, const std::string& name, std::int64_t fallback) {
  const auto* v = typed<std::int64_t>(a, name);
  return v ? *v : fallback;
}
double get_float(const Attributes& a, const std::string& name, double fallback) {
  const auto* v = typed<double>(a, name);
  return v ? *v : fallback;
}
std::string get_string(const Attributes& a, const std::string& name, const std::string& fallback) {
  const auto* v = typed<std::string>(a, name);
  return v ? *v : fallback;
}
std::vector<std::int64_t> get_ints(const Attributes& a, const std::string& name) {
  const auto* v = typed<std::vector<std::int64_t>>(a, name);
  return v ? *v : std::vector<std::int64_t>{};
}

}  // namespace nodeflow
