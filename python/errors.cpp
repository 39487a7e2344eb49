// Library errors as Python exceptions with the library's message:
// nodeflow.Error and one subclass per class of core/errors.hpp (and the
// training configuration's InvalidConfig).
#include "core/errors.hpp"

#include <exception>

#include "python/bindings.hpp"
#include "training/train_config.hpp"

namespace nodeflow::python {
namespace {

// Set once at import, read by the translator.
struct ErrorTypes {
  py::object base, invalid_graph, invalid_attribute, shape_mismatch, unsupported_dtype, io_error,
      run_error, invalid_config;
};

ErrorTypes& types() {
  static ErrorTypes* t = new ErrorTypes();  // never destroyed: outlives the interpreter's exit
  return *t;
}

py::object subclass(py::module_& m, const char* name, const py::object& base, const char* doc) {
  py::object type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      (std::string("nodeflow.") + name).c_str(), doc, base.ptr(), nullptr));
  if (!type) throw py::error_already_set();
  m.attr(name) = type;
  return type;
}

}  // namespace

void bind_errors(py::module_& m) {
  ErrorTypes& t = types();
  const py::object exception = py::reinterpret_borrow<py::object>(PyExc_Exception);
  t.base = subclass(m, "Error", exception, "Base of every nodeflow error (core/errors.hpp).");
  t.invalid_graph =
      subclass(m, "InvalidGraph", t.base, "The graph document or its wiring is wrong.");
  t.invalid_attribute =
      subclass(m, "InvalidAttribute", t.base, "An attribute or setting has a wrong type or value.");
  t.shape_mismatch = subclass(m, "ShapeMismatch", t.base, "Shapes do not fit.");
  t.unsupported_dtype = subclass(m, "UnsupportedDType", t.base,
                                 "A dtype the operator or the request does not support.");
  t.io_error = subclass(m, "IoError", t.base, "Reading or writing a file failed.");
  t.run_error = subclass(m, "RunError", t.base, "A failure while running a valid graph.");
  t.invalid_config = subclass(m, "InvalidConfig", t.base, "The training configuration is wrong.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    const ErrorTypes& e = types();
    try {
      std::rethrow_exception(p);
    } catch (const InvalidGraph& x) {
      PyErr_SetString(e.invalid_graph.ptr(), x.what());
    } catch (const InvalidAttribute& x) {
      PyErr_SetString(e.invalid_attribute.ptr(), x.what());
    } catch (const ShapeMismatch& x) {
      PyErr_SetString(e.shape_mismatch.ptr(), x.what());
    } catch (const UnsupportedDType& x) {
      PyErr_SetString(e.unsupported_dtype.ptr(), x.what());
    } catch (const IoError& x) {
      PyErr_SetString(e.io_error.ptr(), x.what());
    } catch (const RunError& x) {
      PyErr_SetString(e.run_error.ptr(), x.what());
    } catch (const training::InvalidConfig& x) {
      PyErr_SetString(e.invalid_config.ptr(), x.what());
    } catch (const Error& x) {
      PyErr_SetString(e.base.ptr(), x.what());
    }
  });
}

}  // namespace nodeflow::python
