// Device side of the lowering (Note [lowering], common/lowering.hpp): one thread per destination
// element of each map, the per-channel gradBias reduction, and the LoweringMover of CUDA plans.
// Host-callable without CUDA headers (api/ includes it); streams are cudaStream_t as void*.
#pragma once
#include <memory>

#include "common/lowering.hpp"

namespace fftconv {

// dst = the step's map of src (float32 device tensors; bias only for LoweringStep::output, may be
// nullptr), queued on `stream`. dst may equal src for the output step when output_identity().
void lowering_step_device(LoweringStep step, const LoweringMap& m, const float* src, const float* bias, float* dst,
                          void* stream);
// grad_bias[o] = sum over s, y, x of grad_output[s][o][y][x], accumulated in double (one block per
// channel, a fixed summation order: deterministic).
void lowering_grad_bias_device(const LoweringMap& m, const float* grad_output, float* grad_bias, void* stream);

// Scratch in device arenas of the current device, executions ordered by an event as the backends'
// plans are (not waited on while the stream is captured into a graph).
std::unique_ptr<LoweringMover> make_device_lowering_mover();

}  // namespace fftconv
