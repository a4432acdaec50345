// Factories of the CUDA backends, in selection order (fbfft first, then cufft).
#pragma once
#include <memory>
#include <vector>

#include "common/backend.hpp"

namespace fftconv {

std::shared_ptr<const Backend> make_cufft_backend();   // gpu/cufft/cufft_backend.cu
std::shared_ptr<const Backend> make_fbfft_backend();   // gpu/fbfft/fbfft_backend.cu
std::vector<std::shared_ptr<const Backend>> make_gpu_backends();

}  // namespace fftconv
