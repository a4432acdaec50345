// The idle cuFFT plans of the process (Note [cuFFT plan pool]).
#include "gpu/cufft/cufft_plan_pool.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

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

Lease adopt(const Key& key, cufftHandle h, std::size_t work_bytes, void* params) {
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    ++pool().made;
  }
  return Lease(key, h, work_bytes, params);
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
