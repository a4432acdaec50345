// The registry of built-in backends (the only place that knows every backend). Every backend but
// `direct` (which computes every option itself) is wrapped with the lowering of api/lowering.hpp.
#include "api/fftconv.hpp"
#include "api/lowering.hpp"

#include "api/auto_plan.hpp"

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
#else
    for (const char* name : {"fbfft", "cufft"})
      reg.add_absent(name, "not built with CUDA: this build has the CPU backends only (configure with nvcc present, "
                           "or -DFFTCONV_CUDA=ON)");
#endif
#if HAVE_FFTCONV_REF
    for (auto& b : make_ref_backends())
      reg.add(b->name() == "direct" ? std::move(b) : make_lowered_backend(std::move(b), make_host_lowering_mover));
#endif
    return reg;
  }();
  return r;
}

Location default_location() {
  for (const auto& b : builtin_registry().all())
    if (b->location() == Location::cuda && b->available().ok) return Location::cuda;
  return Location::host;
}

const Backend& find_backend(std::string_view name, Location where) {
  if (name == "auto") {
    static const AutoBackend host(builtin_registry(), Location::host), cuda(builtin_registry(), Location::cuda);
    return where == Location::cuda ? cuda : host;
  }
  if (const Backend* b = builtin_registry().find(name)) return *b;
  builtin_registry().get(name);  // throws InvalidArgument listing the known names
  throw InvalidArgument("backend: unknown name '" + std::string(name) + "'");
}

}  // namespace fftconv
