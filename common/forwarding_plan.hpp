// ForwardingPlan: a Plan that runs another one, for wrappers that only add to its description.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "common/backend.hpp"

namespace fftconv {

// A plan that runs another one: every call goes to the inner plan; a subclass says what it adds in
// describe() (auto's choice, a measured tile).
class ForwardingPlan : public Plan {
 public:
  explicit ForwardingPlan(std::unique_ptr<Plan> inner) : inner_(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  void execute(const Args& args) const override { inner_->execute(args); }
  std::string describe() const override { return inner_->describe(); }
  std::string candidates() const override { return inner_->candidates(); }
  std::string tile_json() const override { return inner_->tile_json(); }
  StepTimes last_breakdown() const override { return inner_->last_breakdown(); }
  ProductInfo last_products() const override { return inner_->last_products(); }
  std::pair<int64_t, int64_t> fourier_basis() const override { return inner_->fourier_basis(); }
  std::pair<int64_t, int64_t> tile_basis() const override { return inner_->tile_basis(); }
  std::shared_ptr<const PreparedWeights> prepare_weights(const void* weight, void* stream) const override {
    return inner_->prepare_weights(weight, stream);
  }
  void execute_with(const Args& args, const PreparedWeights& prepared) const override {
    inner_->execute_with(args, prepared);
  }

 private:
  std::unique_ptr<Plan> inner_;
};

}  // namespace fftconv
