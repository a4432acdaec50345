// A backend wrapped with the lowering of Note [lowering] (common/lowering.hpp): dense problems go
// straight to the backend, every other problem (stride, dilation, groups, bias, circular padding)
// runs as the dense problem(s) the backend computes, with the data movement around them.
#pragma once
#include <functional>
#include <memory>

#include "common/backend.hpp"
#include "common/lowering.hpp"

namespace fftconv {

// Makes the mover of one plan (host loops, or device kernels for CUDA backends).
using LoweringMoverFactory = std::function<std::unique_ptr<LoweringMover>()>;

// `inner` with the lowering around it; same name, location and availability. PlanOptions::extra key
// "stride" picks the stride treatment: auto (default), polyphase or subsample.
std::shared_ptr<const Backend> make_lowered_backend(std::shared_ptr<const Backend> inner, LoweringMoverFactory movers);

// The host mover: OpenMP loops over the maps of common/lowering.hpp, float32 and float64.
std::unique_ptr<LoweringMover> make_host_lowering_mover();

// The lowering a plan of `inner` would use for (p, pass, dtype): stride treatment from `stride`
// ("auto" | "polyphase" | "subsample"), groups native where inner supports them (Note [stride
// choice]); `why` receives the reason. Throws InvalidArgument for a bad `stride`.
LoweringMap choose_lowering(const Backend& inner, const ConvProblem& p, Pass pass, DType dtype,
                            std::string_view stride, std::string* why = nullptr);

}  // namespace fftconv
