// SpareSlot: one item kept for reuse between a plan and the objects it hands out.
#pragma once

#include <mutex>
#include <utility>

namespace fftconv {

// The memory of released prepared weight spectra goes back to the plan that made them, through a
// slot that the plan and its spectra share (a shared_ptr, so either may outlive the other): the next
// prepare_weights() takes it instead of mapping and clearing as much memory again. take() hands the
// item over and leaves the slot empty (a default Item); give() replaces what the slot holds.
// Thread-safe: spectra may be released on any thread.
template <class Item>
class SpareSlot {
 public:
  Item take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(item_, Item{});
  }
  void give(Item&& item) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    item_ = std::move(item);
  }

 private:
  std::mutex mutex_;
  Item item_{};
};

}  // namespace fftconv
