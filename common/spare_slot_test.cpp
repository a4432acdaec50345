// SpareSlot: what give() puts back, take() hands over once; concurrent releases keep one item.
#include "common/spare_slot.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <thread>
#include <vector>

using namespace fftconv;

TEST_CASE("spare slot: take hands over what give put back, then nothing") {
  SpareSlot<std::unique_ptr<int>> slot;
  CHECK(slot.take() == nullptr);
  slot.give(std::make_unique<int>(7));
  slot.give(std::make_unique<int>(8));  // replaces the 7
  const std::unique_ptr<int> got = slot.take();
  REQUIRE(got != nullptr);
  CHECK(*got == 8);
  CHECK(slot.take() == nullptr);
}

TEST_CASE("spare slot: releases from several threads leave exactly one item") {
  SpareSlot<std::unique_ptr<int>> slot;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&slot, t] {
      for (int i = 0; i < 1000; ++i) {
        slot.give(std::make_unique<int>(t * 1000 + i));
        (void)slot.take();
        slot.give(std::make_unique<int>(-1));
      }
    });
  for (std::thread& th : threads) th.join();
  const std::unique_ptr<int> last = slot.take();
  REQUIRE(last != nullptr);
  CHECK(*last == -1);
  CHECK(slot.take() == nullptr);
}
