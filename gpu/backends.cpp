// The CUDA backends in selection order.
#include "gpu/backends.hpp"

namespace fftconv {

std::vector<std::shared_ptr<const Backend>> make_gpu_backends() {
  return {make_fbfft_backend(), make_cufft_backend()};
}

}  // namespace fftconv
