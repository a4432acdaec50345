// Checks shared by the CUDA backends' execute(): operands present, float32, the plan's device
// current, and every pointer device memory of that device. Throws InvalidArgument naming the field.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "common/backend.hpp"
#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

// Throws InvalidArgument when `ptr` is not device-accessible memory of `device`.
inline void require_device_pointer(const void* ptr, const char* name, int device, const char* backend) {
  if (!ptr) return;
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw InvalidArgument(std::string(backend) + ": " + name + " is not a CUDA pointer (" + cudaGetErrorString(e) + ")");
  }
  if (attr.type == cudaMemoryTypeUnregistered || attr.type == cudaMemoryTypeHost)
    throw InvalidArgument(std::string(backend) + ": " + name + " points to host memory; " + backend +
                          " needs device tensors");
  if (attr.type == cudaMemoryTypeDevice && attr.device != device)
    throw InvalidArgument(std::string(backend) + ": " + name + " is on device " + std::to_string(attr.device) +
                          " but the plan was made on device " + std::to_string(device));
}

inline void require_cuda_args(const Args& a, Pass pass, const char* backend, int device) {
  require_operands(a, pass, backend);
  if (a.dtype != DType::f32)
    throw InvalidArgument(std::string(backend) + ": dtype " + std::string(to_string(a.dtype)) +
                          " not supported (f32 only)");
  int dev = -1;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev != device)
    throw InvalidArgument(std::string(backend) + ": current device " + std::to_string(dev) +
                          " differs from the plan's device " + std::to_string(device));
  require_device_pointer(a.input, "input", device, backend);
  require_device_pointer(a.weight, "weight", device, backend);
  require_device_pointer(a.grad_output, "grad_output", device, backend);
  require_device_pointer(a.result, "result", device, backend);
}

}  // namespace fftconv
