#pragma once
// Numbers inside error messages (the init rules', the training settings').
#include <cstdio>
#include <string>

namespace nodeflow {

/// `v` as printf's %g writes it: six significant digits, no trailing zeros
/// ("0.1", "1e+06", "inf", "nan").
inline std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace nodeflow
