// The _fftconv extension module: error translation (C++ errors become ValueError, MemoryError,
// RuntimeError with the same message) and the registration of every binding area.
#include <new>

#include "bindings.hpp"
#include "common/errors.hpp"

namespace nb = nanobind;

NB_MODULE(_fftconv, m) {
  m.doc() = "fftconv C++ library bindings (use the fftconv package, not this module directly)";

  // Unsupported: a valid request a backend cannot serve. A ValueError, so `except ValueError`
  // catches every argument problem; the subclass lets callers tell it apart.
  // Held for the life of the process (never decref'd after the interpreter is gone).
  static PyObject* unsupported =
      nb::exception<fftconv::Unsupported>(m, "UnsupportedError", PyExc_ValueError).release().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const fftconv::InvalidProblem& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const fftconv::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const fftconv::Unsupported& e) {
      PyErr_SetString(unsupported, e.what());
    } catch (const fftconv::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const fftconv::CudaError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const fftconv::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

#if FFTCONV_PY_CUDA
  m.attr("cuda_built") = true;
#else
  m.attr("cuda_built") = false;
#endif

  fftconv::py::bind_problem(m);
  fftconv::py::bind_plan(m);
  fftconv::py::bind_tiling(m);
}
