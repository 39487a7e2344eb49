#include "core/attributes.hpp"

#include <algorithm>
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

AttrKind kind_of(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

bool in_range(const AttrSpec& s, std::int64_t v) {
  return (!s.min || v >= *s.min) && (!s.max || v <= *s.max) &&
         (s.allowed_ints.empty() ||
          std::find(s.allowed_ints.begin(), s.allowed_ints.end(), v) != s.allowed_ints.end());
}

bool in_float_range(const AttrSpec& s, double v) {
  if (!std::isfinite(v)) return false;
  if (s.min_float && (s.min_float->open ? !(v > s.min_float->value) : !(v >= s.min_float->value)))
    return false;
  return !s.max_float || (s.max_float->open ? v < s.max_float->value : v <= s.max_float->value);
}

std::string number(double v) { return to_string(AttrValue(v)); }

// " in [0, 1)", " >= 0", "".
std::string float_range_words(const AttrSpec& s) {
  const auto& lo = s.min_float;
  const auto& hi = s.max_float;
  if (lo && hi)
    return std::string(" in ") + (lo->open ? "(" : "[") + number(lo->value) + ", " +
           number(hi->value) + (hi->open ? ")" : "]");
  if (lo) return (lo->open ? " > " : " >= ") + number(lo->value);
  if (hi) return (hi->open ? " < " : " <= ") + number(hi->value);
  return "";
}

// "0 or 1", "one of 1, 2, 4".
std::string allowed_words(const std::vector<std::int64_t>& values) {
  std::vector<std::string> shown;
  for (std::int64_t v : values) shown.push_back(std::to_string(v));
  if (shown.size() == 2) return shown[0] + " or " + shown[1];
  return "one of " + join(shown);
}

std::string count_words(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " value" : " values");
}

std::size_t list_size(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::size_t {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::int64_t> || std::is_same_v<X, double> ||
                      std::is_same_v<X, std::string>)
          return 1;
        else
          return x.size();
      },
      v);
}

// The rules on a list's length and the implementation limit, once every value
// has its kind and range.
void check_length(const AttrSpec& spec, const Attributes& attrs, const AttrValue& value) {
  const std::string where = "attributes." + spec.name + ": ";
  const std::size_t n = list_size(value);
  const std::string what = spec.length && !spec.length->what.empty() ? " (" + spec.length->what + ")" : "";
  if (n < spec.min_length)
    throw InvalidAttribute(where + "expected at least " +
                           (spec.min_length == 1 ? std::string("one value") : count_words(spec.min_length)) +
                           what + ", got " + to_string(value));
  if (spec.length && !spec.length->of.empty()) {
    const auto of = attrs.find(spec.length->of);
    if (of != attrs.end() && list_size(of->second) * spec.length->factor != n)
      throw InvalidAttribute(where + "expected " + count_words(list_size(of->second) * spec.length->factor) +
                             what + ", got " + to_string(value));
  }
}

void check_limit(const AttrSpec& spec, const AttrValue& value) {
  if (!spec.limit) return;
  auto check = [&](std::int64_t v) {
    if (v > *spec.limit)
      throw InvalidAttribute("attributes." + spec.name + ": value " + std::to_string(v) +
                             " is too large (at most " + std::to_string(*spec.limit) + ")");
  };
  if (const auto* i = std::get_if<std::int64_t>(&value)) check(*i);
  if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value))
    for (std::int64_t v : *is) check(v);
}

}  // namespace

std::string describe(const AttrSpec& s) {
  switch (s.kind) {
    case AttrKind::Int: {
      if (!s.allowed_ints.empty()) return "an integer " + allowed_words(s.allowed_ints);
      const std::string words = int_words(s, false);
      return (words.rfind("integer", 0) == 0 ? "an " : "a ") + words;
    }
    case AttrKind::Ints: return "a list of " + int_words(s, true);
    case AttrKind::Float: return "a number" + float_range_words(s);
    case AttrKind::Floats: return "a list of numbers" + float_range_words(s);
    case AttrKind::String: return s.allowed.empty() ? "a string" : "one of " + join(s.allowed);
    case AttrKind::Strings: return "a list of strings";
  }
  return "a value";
}

const AttrSpec* find_spec(const std::vector<AttrSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return &s;
  return nullptr;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
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
    const AttrSpec* spec = find_spec(specs, name);
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
    if (const auto* f = std::get_if<double>(&value); f && !in_float_range(*spec, *f)) refuse();
    if (const auto* fs = std::get_if<std::vector<double>>(&value);
        fs && (spec->min_float || spec->max_float))
      for (double x : *fs)
        if (!in_float_range(*spec, x)) refuse();
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
  // Lengths, then limits: a length rule reads the other list whatever its values.
  for (const auto& s : specs)
    if (const auto it = attrs.find(s.name); it != attrs.end()) check_length(s, attrs, it->second);
  for (const auto& s : specs)
    if (const auto it = attrs.find(s.name); it != attrs.end()) check_limit(s, it->second);
}

AttrSpec flag_spec(std::string name, std::string doc) {
  AttrSpec s;
  s.name = std::move(name);
  s.kind = AttrKind::Int;
  s.default_value = AttrValue(std::int64_t{0});
  s.allowed_ints = {0, 1};
  s.doc = std::move(doc);
  return s;
}

AttrSpec float_spec(std::string name, double default_value, std::string doc) {
  AttrSpec s;
  s.name = std::move(name);
  s.kind = AttrKind::Float;
  s.default_value = AttrValue(default_value);
  s.doc = std::move(doc);
  return s;
}

Attributes with_defaults(const std::vector<AttrSpec>& specs, Attributes attrs) {
  for (const auto& s : specs)
    if (s.default_value) attrs.emplace(s.name, *s.default_value);
  return attrs;
}

Attributes checked_attributes(const std::string& op_type, const std::vector<AttrSpec>& specs,
                              const Attributes& given, const AttrCheck& check) {
  validate_attributes(op_type, specs, given);
  Attributes filled = with_defaults(specs, given);
  if (check) check(filled);
  return filled;
}

namespace {

const AttrValue* find_value(const Attributes& a, const std::string& name) {
  const auto it = a.find(name);
  return it == a.end() ? nullptr : &it->second;
}

template <typename T>
const T* typed(const AttrValue* v, const std::string& name) {
  if (!v) return nullptr;
  const T* t = std::get_if<T>(v);
  if (!t) throw InvalidAttribute("attributes." + name + ": wrong kind, got " + to_string(*v));
  return t;
}

template <typename T>
const T& present(const Attributes& a, const std::string& name) {
  const T* t = typed<T>(find_value(a, name), name);
  if (!t)
    throw InvalidAttribute("attributes." + name +
                           ": absent (the node was built from attributes that checked_attributes "
                           "did not fill)");
  return *t;
}

template <typename T>
std::optional<T> optional(const Attributes& a, const std::string& name) {
  const T* t = typed<T>(find_value(a, name), name);
  return t ? std::optional<T>(*t) : std::nullopt;
}

}  // namespace

std::int64_t attr_int(const Attributes& a, const std::string& name) {
  return present<std::int64_t>(a, name);
}
double attr_float(const Attributes& a, const std::string& name) { return present<double>(a, name); }
const std::string& attr_string(const Attributes& a, const std::string& name) {
  return present<std::string>(a, name);
}
const std::vector<std::int64_t>& attr_ints(const Attributes& a, const std::string& name) {
  return present<std::vector<std::int64_t>>(a, name);
}
std::optional<std::int64_t> optional_int(const Attributes& a, const std::string& name) {
  return optional<std::int64_t>(a, name);
}
std::optional<double> optional_float(const Attributes& a, const std::string& name) {
  return optional<double>(a, name);
}
std::optional<std::vector<std::int64_t>> optional_ints(const Attributes& a, const std::string& name) {
  return optional<std::vector<std::int64_t>>(a, name);
}

}  // namespace nodeflow
