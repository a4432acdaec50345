// The idle cuFFT plans of the process (Note [cuFFT plan pool]).
#include "gpu/cufft/cufft_plan_pool.hpp"

#include <cuda_runtime.h>
#include <cufftXt.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "common/errors.hpp"
#include "gpu/cufft/cufft_callbacks.hpp"
#include "gpu/cufft/cufft_callbacks_fatbin.h"  // generated: kCufftCallbacksFatbin (gpu/CMakeLists.txt)
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::cufft_pool {
namespace {

struct Idle {
  cufftHandle handle;
  std::size_t work_bytes;
  void* params;
  uint64_t returned;  // order of return, for dropping the least recent
};

struct Pool {
  std::mutex mutex;
  std::multimap<Key, Idle> idle;
  uint64_t clock = 0;
  std::size_t reused = 0;
  std::size_t made = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed (Note [cuFFT plan pool])
  return *p;
}

void destroy(cufftHandle h, void* params) {
  cufftDestroy(h);
  if (params) cudaFree(params);
}

}  // namespace

Lease::~Lease() { release(); }

void Lease::release() noexcept {
  if (!owned_) return;
  owned_ = false;
  // The last transform that read this plan's callback parameters must be done before another
  // pipeline may rewrite them; a device in an error state gets the plan destroyed instead.
  if (cudaDeviceSynchronize() != cudaSuccess) {
    (void)cudaGetLastError();
    return destroy(handle_, params_);
  }
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.idle.emplace(key_, Idle{handle_, work_bytes_, params_, ++p.clock});
  while (p.idle.size() > std::size_t(kIdleLimit)) {
    auto oldest = p.idle.begin();
    for (auto it = p.idle.begin(); it != p.idle.end(); ++it)
      if (it->second.returned < oldest->second.returned) oldest = it;
    destroy(oldest->second.handle, oldest->second.params);
    p.idle.erase(oldest);
  }
}

Lease& Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release();
    key_ = o.key_, handle_ = o.handle_, work_bytes_ = o.work_bytes_, params_ = o.params_, owned_ = o.owned_;
    o.owned_ = false;
  }
  return *this;
}

std::optional<Lease> take(const Key& key) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.idle.find(key);
  if (it == p.idle.end()) return std::nullopt;
  const Idle e = it->second;
  p.idle.erase(it);
  ++p.reused;
  return std::optional<Lease>(std::in_place, key, e.handle, e.work_bytes, e.params);
}

Lease obtain(const Key& key) {
  if (auto pooled = take(key)) return std::move(*pooled);
  // A new plan; until it is whole, the guard destroys what exists.
  struct Parts {
    cufftHandle h = 0;
    bool created = false;
    void* params = nullptr;
    ~Parts() {
      if (created) cufftDestroy(h);
      if (params) cudaFree(params);
    }
  } parts;
  FFTCONV_CUFFT_CHECK(cufftCreate(&parts.h));
  parts.created = true;
  FFTCONV_CUFFT_CHECK(cufftSetAutoAllocation(parts.h, 0));
  // cuFFT keeps the address of the plan's parameter block (written by write_callback_params).
  void* info = nullptr;
  if (key.load != Load::none || key.store != Store::none) {
    if (const cudaError_t e = cudaMalloc(&parts.params, sizeof(cufft_cb::Params)); e != cudaSuccess) {
      (void)cudaGetLastError();
      throw OutOfMemory(std::string("cufft: callback parameters: ") + cudaGetErrorString(e), sizeof(cufft_cb::Params));
    }
    info = parts.params;
  }
  auto attach = [&](const char* symbol, cufftXtCallbackType type) {
    FFTCONV_CUFFT_CHECK(cufftXtSetJITCallback(parts.h, symbol, kCufftCallbacksFatbin, sizeof(kCufftCallbacksFatbin),
                                              type, &info));
  };
  if (key.load == Load::padded) attach("fftconv_cb_load_padded", CUFFT_CB_LD_REAL);
  if (key.load == Load::freq_major) attach("fftconv_cb_load_freq_major", CUFFT_CB_LD_COMPLEX);
  if (key.store == Store::clipped) attach("fftconv_cb_store_clipped", CUFFT_CB_ST_REAL);
  if (key.store == Store::channel_product) attach("fftconv_cb_store_channel_product", CUFFT_CB_ST_COMPLEX);
  long long n[2] = {key.nh, key.nw}, in_embed[2] = {key.nh, key.in_embed_w}, out_embed[2] = {key.nh, key.out_embed_w};
  std::size_t work = 0;
  FFTCONV_CUFFT_CHECK(cufftMakePlanMany64(parts.h, 2, n, in_embed, key.in_stride, key.in_dist, out_embed,
                                          key.out_stride, key.out_dist, key.inverse ? CUFFT_C2R : CUFFT_R2C,
                                          key.batch, &work));
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    ++pool().made;
  }
  Lease lease(key, parts.h, work, parts.params);  // owns the handle and the parameter block from here on
  parts.created = false, parts.params = nullptr;
  return lease;
}

std::size_t idle_count() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().idle.size();
}

std::size_t reuse_count() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().reused;
}

std::size_t made_count() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().made;
}

}  // namespace fftconv::cufft_pool
