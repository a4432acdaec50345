// The cp.async helpers (sm_80+) of the fbfft kernels and of the products' copies path.
#pragma once
#include <cuda_runtime.h>

namespace fftconv {

// Asynchronous global -> shared copies (cp.async, sm_80+) of Bytes = 4, 8 or 16 bytes (16: through
// L2 only); when !valid the destination is zero-filled and nothing is read (src must still be a
// mapped address). They let a thread have all its loads in flight at once without holding them in
// registers; complete them with cp_async_wait_all() before the barrier that publishes the data.
template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem_dst, const void* src, bool valid) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp_async: 4, 8 or 16 bytes");
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(Bytes), "r"(valid ? Bytes : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// Groups: cp_async_commit() closes the group of the copies issued since the last one;
// cp_async_wait_group<N>() waits until at most N groups are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace fftconv
