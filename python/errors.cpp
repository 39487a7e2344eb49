// Library errors as Python exceptions with the library's message:
// nodeflow.Error and one subclass per class of core/errors.hpp (and the
// training configuration's InvalidConfig).
#include "core/errors.hpp"

#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "python/bindings.hpp"
#include "training/train_config.hpp"

namespace nodeflow::python {
namespace {

/// A library error class and its Python type.
struct Mapped {
  bool (*is)(const Error&);
  py::object type;
};

template <typename E>
bool is_a(const Error& e) {
  if constexpr (std::is_same_v<E, Error>)
    return true;  // every error (a null test of a reference would be a warning)
  else
    return dynamic_cast<const E*>(&e) != nullptr;
}

// Filled once at import, read by the translator; never destroyed (it would
// outlive the interpreter at exit). The base class nodeflow.Error comes first.
std::vector<Mapped>& mapped() {
  static auto* m = new std::vector<Mapped>();
  return *m;
}

/// Adds nodeflow.<name>, a subclass of nodeflow.Error (of Exception for Error itself).
template <typename E>
void map(py::module_& m, const char* name, const char* doc) {
  const py::handle base = mapped().empty() ? py::handle(PyExc_Exception) : mapped().front().type;
  py::object type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      (std::string("nodeflow.") + name).c_str(), doc, base.ptr(), nullptr));
  if (!type) throw py::error_already_set();
  m.attr(name) = type;
  mapped().push_back({&is_a<E>, type});
}

}  // namespace

void bind_errors(py::module_& m) {
  map<Error>(m, "Error", "Base of every nodeflow error (core/errors.hpp).");
  map<InvalidGraph>(m, "InvalidGraph", "The graph document or its wiring is wrong.");
  map<InvalidAttribute>(m, "InvalidAttribute",
                        "An attribute or setting has a wrong type or value.");
  map<ShapeMismatch>(m, "ShapeMismatch", "Shapes do not fit.");
  map<UnsupportedDType>(m, "UnsupportedDType",
                        "A dtype the operator or the request does not support.");
  map<IoError>(m, "IoError", "Reading or writing a file failed.");
  map<RunError>(m, "RunError", "A failure while running a valid graph.");
  map<training::InvalidConfig>(m, "InvalidConfig", "The training configuration is wrong.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      // The most derived class mapped: the last match, the base matching every error.
      const Mapped* found = nullptr;
      for (const Mapped& c : mapped())
        if (c.is(e)) found = &c;
      PyErr_SetString(found->type.ptr(), e.what());
    }
  });
}

}  // namespace nodeflow::python
