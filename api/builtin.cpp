// The registry of built-in backends (the only place that knows every backend). Every backend but
// `direct` (which computes every option itself) is wrapped with the lowering of api/lowering.hpp.
#include "api/fftconv.hpp"
#include "api/lowering.hpp"

#if HAVE_FFTCONV_REF
#include "ref/backends.hpp"
#endif
#if HAVE_FFTCONV_GPU
#include "gpu/backends.hpp"
#include "gpu/tiles/lowering_kernels.hpp"
#endif

namespace fftconv {

const Registry& builtin_registry() {
  static const Registry r = [] {
    Registry reg;
#if HAVE_FFTCONV_GPU
    for (auto& b : make_gpu_backends()) reg.add(make_lowered_backend(std::move(b), make_device_lowering_mover));
#endif
#if HAVE_FFTCONV_REF
    for (auto& b : make_ref_backends())
      reg.add(b->name() == "direct" ? std::move(b) : make_lowered_backend(std::move(b), make_host_lowering_mover));
#endif
    return reg;
  }();
  return r;
}

}  // namespace fftconv
