// DeviceArena: grow-only device workspace (see device_arena.hpp).
#include "gpu/runtime/device_arena.hpp"

namespace fftconv {

bool DeviceArena::reserve(std::size_t bytes) {
  if (bytes <= buffer_.bytes()) return false;
  buffer_.release();  // free first so that the old and new blocks never coexist
  buffer_.allocate(arena_align(bytes));
  ++grow_count_;
  return true;
}

}  // namespace fftconv
