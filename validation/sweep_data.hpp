// Where a validation sweep keeps the operands, result and reference of one (problem, pass):
//   host   — std::vectors; any backend runs (a CUDA backend gets device copies for each run).
//   device — device buffers, for sweeps whose backends are all CUDA backends: operands drawn on the
//            device, the gpu64 reference written on the device, errors and inner products reduced
//            there; only a few sums cross the bus. Buffers grow only when a larger problem needs it.
// Both draw the same seeded operands (common/counter_rng.hpp) and judge with the same verdict
// (verdict.hpp), so a record reproduces on either side from its spec and data_seed.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "common/backend.hpp"
#include "common/problem.hpp"
#include "validation/verdict.hpp"

namespace fftconv {

// The three inner products of Note [adjoint tolerance] and the scale they are compared at. With a
// bias b, fprop is affine: lhs = <fprop(x, w, b), g> - <b, gradBias(g)> is its linear part.
struct AdjointSums {
  double lhs = 0;    // <fprop(x, w), g>
  double mid = 0;    // <x, bprop(g, w)>
  double rhs = 0;    // <w, accgrad(x, g)>
  double scale = 0;  // max of the three products of norms
  double ms = 0;     // wall time of the three execute() calls
  // max(|lhs-mid|, |lhs-rhs|) / scale; +inf when a sum is not finite; 0 when scale is 0.
  double error() const;
};

class SweepData {
 public:
  virtual ~SweepData() = default;
  virtual const char* where() const = 0;  // "host" or "device"
  // The current operands and the result buffer (host or device pointers, as where() says; operands
  // the pass does not read are null), the result freshly poisoned with NaN, the poison complete: for
  // work that is not a Plan (the cuDNN baseline of the benchmarks). judge() then judges what was
  // written there.
  virtual Args poisoned_args() = 0;
  // Fresh operands of (p, pass) drawn with `seed`; the result buffer is sized for the pass.
  virtual void make(const ConvProblem& p, Pass pass, uint64_t seed) = 0;
  // Computes and keeps the float64 reference by `kind`: direct, fftw64 (CPU) or gpu64 (device).
  virtual void reference(const std::string& kind) = 0;
  // Poisons the result with NaN, runs `plan` (made by `b`) on the operands, returns the wall time of
  // execute() in ms (device work synchronized).
  virtual double run(const Backend& b, const Plan& plan) = 0;
  // The last run's result against the reference.
  virtual Verdict judge(int64_t basis_elems, ProductMath products = ProductMath::fp32) = 0;
  // Runs plans[0..2] (fprop, bprop, accgrad of p, made by `b`) on fresh x, w, g drawn from `seed`
  // and returns the adjoint sums. Sized from p alone: it needs no make() first (a resumed sweep
  // whose pass records of p are all present goes straight to the adjoint check).
  virtual AdjointSums adjoint(const Backend& b, const ConvProblem& p, const std::array<const Plan*, 3>& plans,
                              uint64_t seed) = 0;
};

std::unique_ptr<SweepData> make_host_sweep_data();
// Throws Unsupported in a build without CUDA or on a machine without a device.
std::unique_ptr<SweepData> make_device_sweep_data();

}  // namespace fftconv
