#include "nodes/common/window_axis.hpp"

namespace nodeflow {

const char* auto_pad_name(AutoPad a) {
  switch (a) {
    case AutoPad::SameUpper:
      return "SAME_UPPER";
    case AutoPad::SameLower:
      return "SAME_LOWER";
    case AutoPad::Valid:
      return "VALID";
    case AutoPad::NotSet:
      break;
  }
  return "NOTSET";
}

AutoPad parse_auto_pad(const std::string& s) {
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  return AutoPad::NotSet;
}

}  // namespace nodeflow
