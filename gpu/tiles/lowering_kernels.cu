// The lowering's device kernels and mover (see lowering_kernels.hpp).
#include "gpu/tiles/lowering_kernels.hpp"

#include <cuda_runtime.h>

#include <array>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/runtime/fast_div.hpp"

namespace fftconv {

namespace {

constexpr int kThreads = 256;

// ZeroPad: the padding is known to be zero, so the compiler drops the mirror and circular candidates
// of the gathers (fewer registers for the common case).
template <LoweringStep Step, class Div, bool ZeroPad = false>
__global__ void lowering_map(LoweringMap m, LoweringDivisors<Div> d, const float* src, const float* bias, float* dst,
                             int64_t n) {
  if constexpr (ZeroPad) m.outer.padding = Padding::zero;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    if constexpr (Step == LoweringStep::input) dst[e] = lowered_input(m, d, src, e);
    else if constexpr (Step == LoweringStep::weight) dst[e] = lowered_weight(m, src, e);
    else if constexpr (Step == LoweringStep::output) dst[e] = lowered_output(m, src, bias, e);
    else if constexpr (Step == LoweringStep::grad_output) dst[e] = lowered_grad_output(m, src, e);
    else if constexpr (Step == LoweringStep::input_grad) dst[e] = lowered_input_grad(m, d, src, e);
    else dst[e] = lowered_weight_grad(m, src, e);
  }
}

// input and input_grad, the maps over whole activations, divide by multiply-high (IndexDiv) below 2^32
// elements instead of by the GPU's software 64-bit division.
template <LoweringStep Step>
void launch(const LoweringMap& m, const float* src, const float* bias, float* dst, cudaStream_t st) {
  const int64_t n = step_elems(m, Step);
  if (n == 0) return;
  const unsigned blocks = grid_stride_blocks(n, kThreads);
  if constexpr (Step == LoweringStep::input || Step == LoweringStep::input_grad) {
    if (n <= int64_t(UINT32_MAX)) {
      const auto d = lowering_divisors<IndexDiv>(m, IndexDiv::make);
      if (m.outer.padding == Padding::zero)
        lowering_map<Step, IndexDiv, true><<<blocks, kThreads, 0, st>>>(m, d, src, bias, dst, n);
      else
        lowering_map<Step><<<blocks, kThreads, 0, st>>>(m, d, src, bias, dst, n);
      FFTCONV_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  lowering_map<Step><<<blocks, kThreads, 0, st>>>(m, plain_divisors(m), src, bias, dst, n);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

// One block per output channel: each thread sums a strided share of the channel's S planes in
// double, then a tree in shared memory.
__global__ void grad_bias_kernel(const float* g, int64_t S, int64_t fo, int64_t plane, float* gb) {
  __shared__ double part[kThreads];
  const int64_t o = blockIdx.x, n = S * plane;
  double acc = 0;
  for (int64_t e = threadIdx.x; e < n; e += blockDim.x) acc += double(g[((e / plane) * fo + o) * plane + e % plane]);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) gb[o] = float(part[0]);
}

class DeviceMover final : public LoweringMover {
 public:
  DeviceMover() = default;
  DeviceMover(const DeviceMover&) = delete;
  DeviceMover& operator=(const DeviceMover&) = delete;

  void* scratch(int slot, std::size_t bytes) override {
    DeviceArena& a = arenas_.at(std::size_t(slot));
    a.reserve(bytes);
    return a.base();
  }
  void begin(void* stream) override {
    capturing_ = stream_capturing(static_cast<cudaStream_t>(stream));
    fence_.enter(static_cast<cudaStream_t>(stream), capturing_);
  }
  void end(void* stream) override {
    fence_.leave(static_cast<cudaStream_t>(stream), capturing_);
  }
  void step(LoweringStep s, const LoweringMap& m, const void* src, const void* bias, void* dst, DType d,
            void* stream) override {
    if (d != DType::f32) throw Unsupported("lowering: device tensors are float32 only");
    lowering_step_device(s, m, static_cast<const float*>(src), static_cast<const float*>(bias),
                         static_cast<float*>(dst), stream);
  }
  void grad_bias(const LoweringMap& m, const void* g, void* gb, DType d, void* stream) override {
    if (d != DType::f32) throw Unsupported("lowering: device tensors are float32 only");
    lowering_grad_bias_device(m, static_cast<const float*>(g), static_cast<float*>(gb), stream);
  }

 private:
  std::array<DeviceArena, 6> arenas_;
  WorkspaceFence fence_;  // after arenas_: destroyed first, it waits for the work queued on them
  bool capturing_ = false;
};

}  // namespace

void lowering_step_device(LoweringStep step, const LoweringMap& m, const float* src, const float* bias, float* dst,
                          void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  switch (step) {
    case LoweringStep::input: return launch<LoweringStep::input>(m, src, bias, dst, st);
    case LoweringStep::weight: return launch<LoweringStep::weight>(m, src, bias, dst, st);
    case LoweringStep::output: return launch<LoweringStep::output>(m, src, bias, dst, st);
    case LoweringStep::grad_output: return launch<LoweringStep::grad_output>(m, src, bias, dst, st);
    case LoweringStep::input_grad: return launch<LoweringStep::input_grad>(m, src, bias, dst, st);
    case LoweringStep::weight_grad: return launch<LoweringStep::weight_grad>(m, src, bias, dst, st);
  }
}

void lowering_grad_bias_device(const LoweringMap& m, const float* grad_output, float* grad_bias, void* stream) {
  if (m.outer.fo == 0) return;
  grad_bias_kernel<<<unsigned(m.outer.fo), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      grad_output, m.outer.S, m.outer.fo, m.oh * m.ow, grad_bias);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

std::unique_ptr<LoweringMover> make_device_lowering_mover() { return std::make_unique<DeviceMover>(); }

}  // namespace fftconv
