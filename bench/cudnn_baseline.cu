// The cuDNN baseline (see cudnn_baseline.hpp): descriptors for NCHW fp32 cross-correlation with zero
// padding, CUDNN_FMA_MATH, and every algorithm enum value of the pass run explicitly.
#include "bench/cudnn_baseline.hpp"

#include <algorithm>
#include <string>

#include "validation/gpu_timing.hpp"
#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"

#ifdef FFTCONV_HAVE_CUDNN
#include <cudnn.h>

#define FFTCONV_CUDNN_CHECK(expr) ::fftconv::check_cudnn((expr), #expr, __FILE__, __LINE__)

namespace fftconv {
namespace {

void check_cudnn(cudnnStatus_t s, const char* expr, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  throw CudaError(std::string("cuDNN call `") + expr + "` failed with " + cudnnGetErrorString(s) + " at " + file +
                  ":" + std::to_string(line));
}

const char* const kFwdNames[] = {"FWD_IMPLICIT_GEMM", "FWD_IMPLICIT_PRECOMP_GEMM", "FWD_GEMM", "FWD_DIRECT",
                                 "FWD_FFT", "FWD_FFT_TILING", "FWD_WINOGRAD", "FWD_WINOGRAD_NONFUSED"};
const char* const kBwdDataNames[] = {"BWD_DATA_0", "BWD_DATA_1", "BWD_DATA_FFT", "BWD_DATA_FFT_TILING",
                                     "BWD_DATA_WINOGRAD", "BWD_DATA_WINOGRAD_NONFUSED"};
const char* const kBwdFilterNames[] = {"BWD_FILTER_0", "BWD_FILTER_1", "BWD_FILTER_FFT", "BWD_FILTER_3",
                                       "BWD_FILTER_WINOGRAD", "BWD_FILTER_WINOGRAD_NONFUSED",
                                       "BWD_FILTER_FFT_TILING"};
static_assert(sizeof(kFwdNames) / sizeof(kFwdNames[0]) == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(sizeof(kBwdDataNames) / sizeof(kBwdDataNames[0]) == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
static_assert(sizeof(kBwdFilterNames) / sizeof(kBwdFilterNames[0]) == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);

int to_int(int64_t v, const char* what) {
  if (v > INT32_MAX) throw Unsupported(std::string("cudnn: ") + what + " = " + std::to_string(v) + " exceeds int");
  return static_cast<int>(v);
}

// Owns the handle and descriptors of one (problem, pass).
struct Descriptors {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors(const ConvProblem& p, cudaStream_t stream, bool tensor_op_math) {
    FFTCONV_CUDNN_CHECK(cudnnCreate(&handle));
    FFTCONV_CUDNN_CHECK(cudnnSetStream(handle, stream));
    FFTCONV_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    FFTCONV_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    FFTCONV_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    FFTCONV_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    FFTCONV_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(p.S, "S"),
                                                   to_int(p.f, "f"), to_int(p.h, "h"), to_int(p.w, "w")));
    FFTCONV_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, to_int(p.fo, "fo"),
                                                   to_int(p.f / p.g, "f/g"), to_int(p.kh, "kh"), to_int(p.kw, "kw")));
    FFTCONV_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, to_int(p.ph, "ph"), to_int(p.pw, "pw"), to_int(p.sh, "sh"),
                                                        to_int(p.sw, "sw"), to_int(p.dh, "dh"), to_int(p.dw, "dw"),
                                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    FFTCONV_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, to_int(p.g, "g")));
    // Strict fp32 (FMA math: no TF32), or tensor-core math allowed (TF32, as PyTorch's default on sm_90).
    FFTCONV_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, tensor_op_math ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    int n = 0, c = 0, h = 0, ww = 0;
    FFTCONV_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &ww));
    if (n != p.S || c != p.fo || h != p.out_h() || ww != p.out_w())
      throw Error("cudnn: output dims " + std::to_string(h) + "x" + std::to_string(ww) + " disagree with " +
                  p.to_string());
    FFTCONV_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, ww));
  }
  ~Descriptors() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
    if (handle) cudnnDestroy(handle);
  }
};

}  // namespace

bool cudnn_built() { return true; }

std::string cudnn_version() {
  const size_t v = cudnnGetVersion();  // major*10000 + minor*100 + patch (cuDNN 9)
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

CudnnReport run_cudnn_algorithms(const ConvProblem& p, Pass pass, const std::vector<DeviceOperands>& sets,
                                 const CudnnRunOptions& opts, void* stream_ptr, const std::vector<std::string>& only) {
  CudnnReport rep;
  if (p.padding != Padding::zero) {
    rep.reason = "cuDNN pads with zeros only (" + std::string(to_string(p.padding)) + " padding unsupported)";
    return rep;
  }
  if (p.bias) {
    rep.reason = "cuDNN's convolution adds no bias (bias=1 unsupported)";
    return rep;
  }
  if (sets.empty()) throw InvalidArgument("cudnn: no operand sets");
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  Descriptors d(p, stream, opts.tensor_op_math);
  rep.supported = true;
  const float one = 1.0f, zero = 0.0f;
  int count = 0;
  switch (pass) {
    case Pass::fprop: FFTCONV_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(d.handle, &rep.max_count));
      count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT; break;
    case Pass::bprop: FFTCONV_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(d.handle, &rep.max_count));
      count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT; break;
    case Pass::accgrad:
      FFTCONV_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(d.handle, &rep.max_count));
      count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT; break;
  }
  for (int a = 0; a < count; ++a) {
    const char* name = pass == Pass::fprop ? kFwdNames[a] : pass == Pass::bprop ? kBwdDataNames[a] : kBwdFilterNames[a];
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    CudnnAlgoResult r;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    size_t ws = 0;
    switch (pass) {
      case Pass::fprop:
        r.algo = kFwdNames[a];
        st = cudnnGetConvolutionForwardWorkspaceSize(d.handle, d.x, d.w, d.conv, d.y,
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(a), &ws);
        break;
      case Pass::bprop:
        r.algo = kBwdDataNames[a];
        st = cudnnGetConvolutionBackwardDataWorkspaceSize(d.handle, d.w, d.y, d.conv, d.x,
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(a), &ws);
        break;
      case Pass::accgrad:
        r.algo = kBwdFilterNames[a];
        st = cudnnGetConvolutionBackwardFilterWorkspaceSize(d.handle, d.x, d.y, d.conv, d.w,
                                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), &ws);
        break;
    }
    if (st != CUDNN_STATUS_SUCCESS) {
      r.status = std::string("workspace query: ") + cudnnGetErrorString(st);
      rep.algos.push_back(r);
      continue;
    }
    r.workspace_bytes = ws;
    DeviceBuffer workspace;
    try {
      workspace.allocate(ws);
    } catch (const OutOfMemory&) {
      r.status = "workspace of " + std::to_string(ws) + " bytes could not be allocated";
      rep.algos.push_back(r);
      continue;
    }
    auto launch = [&](int i) -> cudnnStatus_t {
      const DeviceOperands& o = sets[size_t(i) % sets.size()];
      switch (pass) {
        case Pass::fprop:
          return cudnnConvolutionForward(d.handle, &one, d.x, o.input, d.w, o.weight, d.conv,
                                         static_cast<cudnnConvolutionFwdAlgo_t>(a), workspace.get(), ws, &zero, d.y,
                                         o.result);
        case Pass::bprop:
          return cudnnConvolutionBackwardData(d.handle, &one, d.w, o.weight, d.y, o.grad_output, d.conv,
                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(a), workspace.get(), ws,
                                              &zero, d.x, o.result);
        case Pass::accgrad:
          return cudnnConvolutionBackwardFilter(d.handle, &one, d.x, o.input, d.y, o.grad_output, d.conv,
                                                static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), workspace.get(), ws,
                                                &zero, d.w, o.result);
      }
      return CUDNN_STATUS_BAD_PARAM;
    };
    st = launch(0);  // the first run tells whether the algorithm applies
    if (st != CUDNN_STATUS_SUCCESS) {
      r.status = cudnnGetErrorString(st);
      rep.algos.push_back(r);
      continue;
    }
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (opts.check) r.rel_l2 = opts.check(sets[0].result);
    if (opts.repeat > 0) {
      const GpuTiming t = time_gpu([&](int i) { FFTCONV_CUDNN_CHECK(launch(i)); }, opts.warmup, opts.repeat, stream);
      r.median_ms = t.median_ms;
      r.min_ms = t.min_ms;
    }
    r.ran = true;
    r.status = "ok";
    rep.algos.push_back(r);
    if (r.ran && opts.repeat > 0 && (rep.best < 0 || r.median_ms < rep.algos[size_t(rep.best)].median_ms))
      rep.best = int(rep.algos.size()) - 1;
  }
  if (opts.repeat == 0)  // verification run: "best" is the first that ran
    for (size_t i = 0; i < rep.algos.size() && rep.best < 0; ++i)
      if (rep.algos[i].ran) rep.best = int(i);
  return rep;
}

}  // namespace fftconv

#else  // no cuDNN

namespace fftconv {
bool cudnn_built() { return false; }
std::string cudnn_version() { return "not built (cudnn.h or libcudnn not found at configure time)"; }
CudnnReport run_cudnn_algorithms(const ConvProblem&, Pass, const std::vector<DeviceOperands>&, const CudnnRunOptions&,
                                 void*, const std::vector<std::string>&) {
  CudnnReport r;
  r.reason = "this build has no cuDNN";
  return r;
}
}  // namespace fftconv
#endif
