// For GPU tests (doctest suite "gpu"): is a CUDA device present, and a macro that skips a test
// case with a message when none is.
#pragma once
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::test {

inline bool have_device() { return cuda_device_support().ok; }

}  // namespace fftconv::test

#define FFTCONV_SKIP_WITHOUT_DEVICE(what)                  \
  if (!::fftconv::test::have_device()) {                 \
    MESSAGE("no CUDA device: skipping " what " GPU test"); \
    return;                                              \
  }
