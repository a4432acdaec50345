// One checking macro per CUDA library (runtime, cuFFT, cuBLAS): a failed call throws
// fftconv::CudaError naming the expression, file and line; plus DeviceBuffer, an owning RAII
// device allocation that throws fftconv::OutOfMemory(bytes) when cudaMalloc fails.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/errors.hpp"

namespace fftconv::cuda_detail {

inline const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult(unknown)";
  }
}

[[noreturn]] inline void throw_cuda_error(const char* lib, const std::string& what, const char* expr,
                                          const char* file, int line) {
  throw CudaError(std::string(lib) + " call `" + expr + "` failed with " + what + " at " + file + ":" +
                  std::to_string(line));
}

inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  if (e == cudaErrorMemoryAllocation)
    throw OutOfMemory(std::string("CUDA call `") + expr + "` failed with cudaErrorMemoryAllocation (out of device "
                      "memory) at " + file + ":" + std::to_string(line), 0);
  throw_cuda_error("CUDA", std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")", expr, file,
                   line);
}

inline void check_cufft(cufftResult r, const char* expr, const char* file, int line) {
  if (r == CUFFT_SUCCESS) return;
  if (r == CUFFT_ALLOC_FAILED)
    throw OutOfMemory(std::string("cuFFT call `") + expr + "` failed with CUFFT_ALLOC_FAILED (out of device memory) at " +
                      file + ":" + std::to_string(line), 0);
  throw_cuda_error("cuFFT", std::string(cufft_result_name(r)) + " (" + std::to_string(int(r)) + ")", expr, file,
                   line);
}

inline void check_cublas(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  if (s == CUBLAS_STATUS_ALLOC_FAILED)
    throw OutOfMemory(std::string("cuBLAS call `") + expr + "` failed with CUBLAS_STATUS_ALLOC_FAILED (out of device "
                      "memory) at " + file + ":" + std::to_string(line), 0);
  throw_cuda_error("cuBLAS", std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")", expr,
                   file, line);
}

}  // namespace fftconv::cuda_detail

#define FFTCONV_CUDA_CHECK(expr) ::fftconv::cuda_detail::check_cuda((expr), #expr, __FILE__, __LINE__)
#define FFTCONV_CUFFT_CHECK(expr) ::fftconv::cuda_detail::check_cufft((expr), #expr, __FILE__, __LINE__)
#define FFTCONV_CUBLAS_CHECK(expr) ::fftconv::cuda_detail::check_cublas((expr), #expr, __FILE__, __LINE__)
// Blocks for a grid-stride kernel over n elements with `threads` per block: ceil(n / threads), at
// least 1 and at most max_blocks (the loop covers the rest).
inline unsigned grid_stride_blocks(int64_t n, int threads, int64_t max_blocks = int64_t(1) << 20) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > max_blocks ? max_blocks : b));
}

// Checks the launch of the kernel just issued (configuration errors; not asynchronous faults).
#define FFTCONV_CUDA_CHECK_LAUNCH() FFTCONV_CUDA_CHECK(cudaGetLastError())

namespace fftconv {

// Does this host expose an NVIDIA GPU device node (/dev/nvidia0, /dev/nvidia1, ...)?
inline bool nvidia_device_node_present() {
  for (int i = 0; i < 64; ++i)
    if (access(("/dev/nvidia" + std::to_string(i)).c_str(), F_OK) == 0) return true;
  return false;
}

// Is a CUDA device usable here? The reason says why not. Without a GPU the runtime answers
// cudaErrorNoDevice, or cudaErrorInsufficientDriver when no driver is installed at all: both read
// "no CUDA device". With a device node present, the runtime's own error is given (e.g. a driver
// older than the runtime). Clears the runtime's error state when the query fails.
inline Support cuda_device_support() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && !nvidia_device_node_present()))
      return {false, "no CUDA device"};
    return {false, std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")"};
  }
  if (n == 0) return {false, "no CUDA device"};
  return {};
}

// Is `stream` being captured into a CUDA graph? The plans' execute() then leaves out what a graph
// cannot hold or needs no more: the wait on the previous execute's event (replays of one graph on
// one stream are ordered by the stream; replaying a graph on two streams at once races on the
// plan's workspace and is the caller's bug) and anything that synchronizes.
inline bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  FFTCONV_CUDA_CHECK(cudaStreamIsCapturing(stream, &st));
  return st != cudaStreamCaptureStatusNone;
}

// An owning device allocation of `bytes` bytes (nothing for 0). Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { allocate(bytes); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  // Frees the old allocation, then allocates `bytes`; throws OutOfMemory(bytes) on failure.
  void allocate(std::size_t bytes) {
    release();
    if (bytes == 0) return;
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw OutOfMemory("cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(e), bytes);
    }
    ptr_ = p;
    bytes_ = bytes;
  }
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A device copy of the n host values at `host` (an empty buffer when host is null or n is 0).
template <class T>
DeviceBuffer upload(const T* host, std::size_t n) {
  DeviceBuffer b;
  if (host == nullptr || n == 0) return b;
  b.allocate(n * sizeof(T));
  FFTCONV_CUDA_CHECK(cudaMemcpy(b.get(), host, b.bytes(), cudaMemcpyHostToDevice));
  return b;
}
template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  return upload(v.data(), v.size());
}

// The first n values of type T at device address `device`, copied to the host.
template <class T>
std::vector<T> download(const void* device, std::size_t n) {
  std::vector<T> h(n);
  if (n > 0) FFTCONV_CUDA_CHECK(cudaMemcpy(h.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t n) {
  return download<T>(b.get(), n);
}

}  // namespace fftconv
