// DeviceArena: one device allocation that grows only when a larger workspace is asked for and is
// reused across executions; carve() hands out aligned sub-ranges of it for one execution.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

// Rounds n up to a multiple of kArenaAlignment (256 bytes, what cuFFT and cuBLAS like).
inline constexpr std::size_t kArenaAlignment = 256;
constexpr std::size_t arena_align(std::size_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

class DeviceArena {
 public:
  DeviceArena() = default;
  // Ensures capacity() >= bytes; reallocates (old contents lost) only when it must grow.
  // Throws OutOfMemory(bytes) when the allocation fails. Returns true when it reallocated.
  bool reserve(std::size_t bytes);
  // Drops the allocation.
  void release() noexcept { buffer_.release(); }
  std::size_t capacity() const { return buffer_.bytes(); }
  char* base() const { return buffer_.as<char>(); }
  // Number of reallocations so far (for tests of "grows only when needed").
  int64_t grow_count() const { return grow_count_; }

 private:
  DeviceBuffer buffer_;
  int64_t grow_count_ = 0;
};

// Sequential sub-allocation inside an arena (or a size computation when base is nullptr).
class ArenaCursor {
 public:
  explicit ArenaCursor(char* base = nullptr) : base_(base) {}
  // Next `bytes` bytes, aligned; returns nullptr-based offsets when measuring.
  void* take(std::size_t bytes) {
    char* p = base_ ? base_ + used_ : nullptr;
    used_ += arena_align(bytes);
    return p;
  }
  std::size_t used() const { return used_; }

 private:
  char* base_;
  std::size_t used_ = 0;
};

}  // namespace fftconv
