// Factories of the CPU backends (direct, im2col, fftw) in selection order.
#pragma once
#include <memory>
#include <vector>

#include "common/backend.hpp"

namespace fftconv {

std::shared_ptr<const Backend> make_direct_backend();   // ref/direct_backend.cpp
std::shared_ptr<const Backend> make_im2col_backend();   // ref/im2col.cpp
std::shared_ptr<const Backend> make_fftw_backend();     // ref/fftw_backend.cpp
// fftw, im2col, direct.
std::vector<std::shared_ptr<const Backend>> make_ref_backends();

}  // namespace fftconv
