// The registry of built-in backends (the only place that knows every backend).
#include "api/fftconv.hpp"

#if HAVE_FFTCONV_REF
#include "ref/backends.hpp"
#endif
#if HAVE_FFTCONV_GPU
#include "gpu/backends.hpp"
#endif

namespace fftconv {

const Registry& builtin_registry() {
  static const Registry r = [] {
    Registry reg;
#if HAVE_FFTCONV_GPU
    for (auto& b : make_gpu_backends()) reg.add(std::move(b));
#else
    for (const char* name : {"fbfft", "cufft"})
      reg.add_absent(name, "not built with CUDA: this build has the CPU backends only (configure with nvcc present, "
                           "or -DFFTCONV_CUDA=ON)");
#endif
#if HAVE_FFTCONV_REF
    for (auto& b : make_ref_backends()) reg.add(std::move(b));
#endif
    return reg;
  }();
  return r;
}

}  // namespace fftconv
