#include "core/errors.hpp"

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

std::string context_prefix(const std::string& where, const std::string& inner) {
  for (const char* path : {"attributes.", "inputs[", "outputs[", "specified_outputs_name"})
    if (inner.rfind(path, 0) == 0) return where + ".";
  return where + ": ";
}

}  // namespace nodeflow
