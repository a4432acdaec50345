// CufftPipeline: one configuration (basis, CGEMM strategy, batch chunk) of the paper's Table 1
// pipeline for one (problem, pass): pad -> batched R2C -> transpose to frequency-major -> one complex
// product per frequency (cuBLAS) -> transpose back -> batched C2R -> clip/fold and scale (or, with
// SpectrumLayout::direct, the transforms themselves read and write the frequency-major layout; with
// cuFFT callbacks, the transforms pad, clip or gather the spectra themselves: Note [cufft callbacks]).
// It owns its cuFFT plans, its cuBLAS handle and the callbacks' small parameter block, never buffers:
// run() carves those from a workspace.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/problem.hpp"
#include "gpu/cufft/cufft_plan_pool.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/step_timer.hpp"
#include "gpu/runtime/stream_fork.hpp"
#include "tiling/tile_plan.hpp"

namespace fftconv {

// How the per-frequency complex products are issued (paper Section 3.3).
enum class GemmStrategy { batched, strided, loop, gemm3m };
std::string_view to_string(GemmStrategy g);                 // "batched" | "strided" | "loop" | "3m"
GemmStrategy parse_gemm_strategy(std::string_view s);       // throws InvalidArgument naming extra["gemm"]
inline constexpr GemmStrategy kAllGemmStrategies[] = {GemmStrategy::strided, GemmStrategy::batched,
                                                      GemmStrategy::loop, GemmStrategy::gemm3m};

// Where the spectra go between the transforms and the products (paper Table 1's TRANS steps):
//   transposed — R2C writes [plane][freq] in place and a transposition kernel makes [freq][plane]
//                (and back before C2R): the paper's pipeline;
//   direct     — cuFFT's advanced layout writes [freq][plane] itself (output stride = planes,
//                distance 1) and C2R reads it the same way: no transpositions, strided FFT stores;
//   gather     — transposed on the way in; on the way back C2R reads the products' [freq][plane]
//                through a load callback (no TRANS C).
// Which is faster depends on cuFFT's kernels for the size; the autotuner times all three.
enum class SpectrumLayout { transposed, direct, gather };
std::string_view to_string(SpectrumLayout l);               // "transposed" | "direct" | "gather"
SpectrumLayout parse_spectrum_layout(std::string_view s);   // throws InvalidArgument naming extra["layout"]

// How the operands reach the basis and the results leave it:
//   copy     — a padding kernel writes each operand into the FFT buffer, a clip kernel crops the result;
//   callback — cuFFT's R2C load callback reads the unpadded tensor (zeros or reflection around it) and
//              the C2R store callback writes only the kept window (untiled plans; the mirror-padded
//              bprop result keeps its fold kernel). Note [cufft callbacks].
enum class EdgeMode { copy, callback };
std::string_view to_string(EdgeMode e);                     // "copy" | "callback"
EdgeMode parse_edge_mode(std::string_view s);               // throws InvalidArgument naming extra["edges"]

// How the weight side reaches or leaves the frequency domain (Note [pruned weight transforms]):
//   fft — like the other operands (pad, R2C, transposition; accGrad: C2R and clip): Table 1;
//   dft — the direct DFT of the kh×kw window straight into the frequency-major layout (fprop, bprop),
//         and accGrad's gradient evaluated only at its kh×kw window from the frequency-major products:
//         fbfft's pruned window kernels, for kernels of at most fbfft::kMaxWindow per side, untiled.
enum class WeightTransform { fft, dft };
std::string_view to_string(WeightTransform w);              // "fft" | "dft"
WeightTransform parse_weight_transform(std::string_view s); // throws InvalidArgument naming extra["weights"]
// Whether WeightTransform::dft can run (p, pass) untiled; otherwise *why (when given) says why not.
bool weight_dft_supported(const ConvProblem& p, int64_t nh, int64_t nw, std::string* why = nullptr);

// cuBLAS workspace handed to cublasSetWorkspace: the 32 MiB NVIDIA recommends on Hopper, or a
// small one when a workspace limit is tight and in every tiled plan (Note [cufft tiles]).
inline constexpr std::size_t kCublasWorkspaceLarge = std::size_t(32) << 20;
inline constexpr std::size_t kCublasWorkspaceSmall = std::size_t(1) << 20;

// Note [weight-side batches]
// The weight side of a pass (fprop/bprop: the f·fo weight planes' R2C; accgrad: the gradient's C2R) is
// not batched over samples, so one transform of all f·fo planes sizes the FFT scratch and cuFFT's work
// area as much as the spectra themselves: on a tile basis far above the layer's need (OverFeat's
// 512→1024 channels, 12×12 input, forced 64×64 tiles) that took 3 × 9 GB. The pipeline transforms the
// weight side whole when its spectra fit max(kWeightBatchBytes, the largest chunk transform), else in
// batches of that many planes, each transformed in the scratch and transposed into (or out of) its
// columns of the frequency-major spectra (weights padded by the copy or the load callback of the edge
// mode); only those spectra keep their full size.
inline constexpr std::size_t kWeightBatchBytes = std::size_t(256) << 20;

struct PipelineConfig {
  int64_t nh = 0, nw = 0;                     // Fourier basis (>= padded input size)
  GemmStrategy gemm = GemmStrategy::strided;
  int64_t chunk = 0;                          // samples (tiled: (image, tile) items) per chunk
  std::size_t cublas_workspace = kCublasWorkspaceLarge;
  SpectrumLayout layout = SpectrumLayout::transposed;
  EdgeMode edges = EdgeMode::copy;
  WeightTransform weights = WeightTransform::fft;
  ProductMath math = ProductMath::fp32;       // the products' precision (Note [product precision]); strided only
  int64_t weight_batch = 0;                   // weight-side planes per transform; 0: automatic (Note [weight-side batches])
  std::string to_string() const;
};

class CufftPipeline {
 public:
  // Creates the cuFFT plans (no auto-allocated work area) and a cuBLAS handle. Throws Unsupported
  // when a size does not fit the library's int parameters or a callback's 32-bit offsets, CudaError
  // on library failure.
  // With a tiled `tiles` (the shared planner's plan for p and pass, frequency reduction for accgrad)
  // the pipeline runs the tiles as its batch (Note [cufft tiles]); cfg's basis must be the tile basis.
  CufftPipeline(const ConvProblem& p, Pass pass, const PipelineConfig& cfg, const TilePlan* tiles = nullptr);
  ~CufftPipeline();
  CufftPipeline(const CufftPipeline&) = delete;
  CufftPipeline& operator=(const CufftPipeline&) = delete;

  // Exact bytes run() carves from its workspace (buffers + cuFFT work area + cuBLAS workspace).
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  // The workspace of the untiled pipeline of (p, pass) on an nh×nw basis with the whole batch in one
  // chunk, the weights by FFT and the large cuBLAS workspace, less cuFFT's work area (known only with
  // the plans): what a tiled plan's chunks are measured against (Note [device in-flight rule]).
  static std::size_t untiled_buffer_bytes(const ConvProblem& p, Pass pass, int64_t nh, int64_t nw);
  // Breakdown of workspace_bytes() for describe().
  std::string workspace_summary() const;
  // Real-equivalent flops of one run()'s products (8 per complex multiply-add, every chunk).
  double product_flops() const { return 8.0 * double(freqs_) * double(p_.f) * double(p_.fo) * double(units_); }
  // How the operands enter and the result leaves the transforms, for describe().
  std::string edges_summary() const;
  const PipelineConfig& config() const { return cfg_; }
  bool tiled() const { return tiled_; }
  const TilePlan& tiles() const { return tiles_; }
  // What the chunks split: S samples, or S·tiles (image, tile) items when tiled.
  int64_t units() const { return units_; }
  // Planes of the weight side (fprop/bprop: the weights, accgrad: the weight gradient) and how many
  // of them one cuFFT transform takes (all of them unless split: Note [weight-side batches]).
  int64_t weight_planes() const { return weight_planes_; }
  int64_t weight_batch() const { return weight_batch_; }

  // Which transform a cuFFT plan serves: the two operands' R2C and the result's C2R.
  enum Role : int { kOperandA = 0, kOperandB = 1, kResult = 2 };

  // Enqueues one execution on `stream`; `workspace` holds >= workspace_bytes() device bytes.
  // Device pointers in args. timer may be nullptr.
  void run(const Args& args, cudaStream_t stream, void* workspace, StepTimer* timer) const;

 private:
  class Execution;  // one run(): its buffers and steps (cufft_pipeline.cu)
  cufftHandle fft_plan(int64_t batch, Role role) const;
  // The callback parameter block of that plan (null without the plan or its callbacks).
  cufft_cb::Params* params_block(int64_t batch, Role role) const;
  void make_fft_plan(int64_t batch, Role role);
  // Operands that fill the basis exactly (no padding, untiled) are read in place: no PAD step.
  bool reads_in_place(Role operand) const { return operand == kOperandA ? in_place_a_ : in_place_b_; }
  // The role of the weight side's transform: B's R2C (fprop, bprop) or the result's C2R (accgrad).
  Role weight_role() const { return pass_ == Pass::accgrad ? kResult : kOperandB; }
  // Whether the weight side is transformed in several batches (then through [plane][freq] and the
  // transposition kernel, never the direct layout; accgrad's C2R without its gather and clip callbacks).
  bool weight_split() const { return weight_batch_ < weight_planes_; }
  // The inverse transform's normalization, 1/(nh*nw), applied by the clip (kernel or callback).
  float inverse_scale() const { return float(1.0 / (double(cfg_.nh) * double(cfg_.nw))); }
  // Writes the callbacks' parameter block for units s0 .. s0+sc (stream-ordered, one tiny kernel).
  void write_callback_params(const Args& args, int64_t s0, int64_t sc, void* spectra_c, cudaStream_t stream) const;

  ConvProblem p_;
  Pass pass_;
  PipelineConfig cfg_;
  bool tiled_ = false;
  TilePlan tiles_;
  int64_t units_ = 0;
  int64_t fw_ = 0, freqs_ = 0, ld_ = 0;
  int64_t weight_planes_ = 0, weight_batch_ = 0;  // 0 with weights=dft (no cuFFT transform)
  std::map<std::pair<int64_t, int>, cufft_pool::Lease> fft_plans_;  // (batch, role) -> plan (pooled)
  bool edge_callbacks_ = false;    // R2C pads through a load callback
  bool in_place_a_ = false, in_place_b_ = false;  // R2C reads the operand's tensor itself
  bool clip_callback_ = false;     // C2R clips through a store callback
  bool gather_callback_ = false;   // C2R reads [freq][plane] through a load callback
  bool weight_dft_ = false;        // WeightTransform::dft: no cuFFT plan for the weight side
  std::unique_ptr<StreamFork> fork_;  // fprop/bprop with weights=dft: the DFT's stream (Note [forked transforms])
  std::size_t fft_work_bytes_ = 0;
  std::size_t scratch_bytes_ = 0, a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0, ptr_bytes_ = 0;
  std::size_t workspace_bytes_ = 0;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace fftconv
