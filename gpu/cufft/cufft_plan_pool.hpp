// A process-wide pool of idle cuFFT plans, so that a pipeline planned again (a cached auto or tuner
// choice, the tuner's winner re-made after timing) takes its transforms without re-linking them. Both
// cufft plans (the pipeline and the depthwise plan) make their transforms here (obtain).
#pragma once
#include <cufft.h>

#include <compare>
#include <cstddef>
#include <optional>
#include <utility>

namespace fftconv::cufft_cb {
struct Params;  // gpu/cufft/cufft_callbacks.hpp
}  // namespace fftconv::cufft_cb

namespace fftconv::cufft_pool {

// Note [cuFFT plan pool]
// Making a cuFFT plan with LTO callbacks links the callbacks into cuFFT's kernels (nvJitLink), tens
// to hundreds of ms per plan; a pipeline needs up to three per chunk size. A plan is owned by one
// pipeline at a time (a Lease); when the pipeline goes, its plans wait in the pool, keyed by every
// argument that made them, and the next pipeline asking for the same transform takes one instead of
// making it. Invariants: a pooled plan is never used by two pipelines at once (so its stream, work
// area and callback parameter block need no locking), a plan that failed to build never enters the
// pool, and returning a plan first waits for the device, so the next owner cannot rewrite the
// callback parameter block under a transform still reading it. At most kIdleLimit idle plans are
// kept (least recently returned dropped first). The pool is never destroyed: plans still in it at
// exit go with the process (cufftDestroy after the CUDA runtime has shut down is not safe).

// The LTO callbacks of cufft_callbacks_lto.cu a plan can carry (Note [cufft callbacks]).
enum class Load : int { none = 0, padded = 1, freq_major = 2 };          // R2C real, C2R complex
enum class Store : int { none = 0, clipped = 1, channel_product = 2 };  // C2R real, R2C complex

// Everything that makes a 2-D plan (cufftMakePlanMany64's arguments: n = {nh, nw}, embeds {nh, *_embed_w},
// the callbacks, the device) and the role whose callback parameter block it carries.
struct Key {
  int device = 0;
  int role = 0;             // the owner's role for it (its callbacks read that role's parameters)
  Load load = Load::none;
  Store store = Store::none;
  bool inverse = false;     // C2R (else R2C)
  long long nh = 0, nw = 0;
  long long in_embed_w = 0, in_stride = 0, in_dist = 0;
  long long out_embed_w = 0, out_stride = 0, out_dist = 0;
  long long batch = 0;
  auto operator<=>(const Key&) const = default;
};

inline constexpr int kIdleLimit = 48;

// One owned plan: the handle, its work area size and, when it has callbacks, the device block of
// their parameters (whose address cuFFT took at plan time). Move-only; returns the plan to the pool.
class Lease {
 public:
  Lease() = default;
  Lease(const Key& key, cufftHandle h, std::size_t work_bytes, void* params)
      : key_(key), handle_(h), work_bytes_(work_bytes), params_(params), owned_(true) {}
  ~Lease();
  Lease(Lease&& o) noexcept { *this = std::move(o); }
  Lease& operator=(Lease&& o) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return work_bytes_; }
  cufft_cb::Params* params() const { return static_cast<cufft_cb::Params*>(params_); }  // null without callbacks

 private:
  void release() noexcept;  // back to the pool (or destroyed)
  Key key_;
  cufftHandle handle_ = 0;
  std::size_t work_bytes_ = 0;
  void* params_ = nullptr;
  bool owned_ = false;
};

// An idle plan made with `key`, or none.
std::optional<Lease> take(const Key& key);
// An idle plan made with `key`, else a new one: its callbacks attached with a parameter block of
// their own, no work area allocated (the owner sets one of at least work_bytes()). Throws
// OutOfMemory for the parameter block, CudaError when cuFFT refuses the plan.
Lease obtain(const Key& key);

// Idle plans in the pool now, plans taken from it and plans made by obtain since the process
// started (for tests).
std::size_t idle_count();
std::size_t reuse_count();
std::size_t made_count();

}  // namespace fftconv::cufft_pool
