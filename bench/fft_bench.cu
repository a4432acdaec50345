// `fftconv bench fft` (see fft_bench.hpp): fbfft vs cuFFT R2C/C2R on the same data and layout,
// CUDA-event timing over rotating buffers, device-side verification, copy-bandwidth baseline.
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/fft_bench.hpp"
#include "bench/fft_bench_kernels.cuh"
#include "validation/gpu_timing.hpp"
#include "validation/timing.hpp"
#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_graph.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/fft/fbfft.hpp"

namespace fftconv::bench {
namespace {

using fbfft::ForwardArgs;
using fbfft::InverseArgs;

// Buffers rotated across repetitions so that each one starts cold in L2: at least 256 MB of them,
// up to 64 slots (the most calls one graph-timed sample captures). With 32 the smallest
// configuration (1-D n = 8 at 16,384 planes, 1.2 MB a slot) rotated through 38 MB, which the
// H100's 50 MB L2 holds; 64 slots make it 75 MB.
constexpr std::size_t kRotateMinBytes = std::size_t(256) << 20;
constexpr int kMaxSlots = 64;

struct CufftPlan {
  cufftHandle h = 0;
  CufftPlan() = default;
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  ~CufftPlan() {
    if (h) cufftDestroy(h);
  }
};

struct Stats {
  double median_ms = 0, min_ms = 0;  // per call
  std::string timer;                 // how the samples were taken: calls, stream, graph or "stream (no graph: why)"
};

// Times fn(i) (i counts calls, so the caller can rotate buffers) with CUDA events: `warmup` untimed
// calls, then `repeat` timed samples, each synchronized before the next. Under GpuTimer::calls a
// sample is one call; under stream it is `per_sample` calls queued back to back and divided by
// per_sample; under graph those per_sample calls are captured once into a CUDA graph whose replays
// are the samples (a capture that fails falls back to stream and says why in Stats::timer).
template <class Fn>
Stats time_events(Fn&& fn, int warmup, int repeat, cudaStream_t stream, GpuTimer mode = GpuTimer::calls,
                  int per_sample = 1) {
  int next = 0;
  for (int i = 0; i < warmup; ++i) fn(next++);
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (mode == GpuTimer::calls) per_sample = 1;
  Stats out;
  out.timer = to_string(mode);
  std::unique_ptr<CudaGraph> graph;
  if (mode == GpuTimer::graph) {
    graph = std::make_unique<CudaGraph>([&] { for (int j = 0; j < per_sample; ++j) fn(j); }, stream);
    if (!graph->ok()) {
      out.timer = "stream (no graph: " + graph->why() + ")";
      graph.reset();
    }
  }
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const std::vector<double> t = event_times([&](int) {
      if (graph)
        graph->launch(stream);
      else
        for (int j = 0; j < per_sample; ++j) fn(next++);
    }, 0, 1, stream);
    ms.push_back(t[0] / per_sample);
  }
  const Timing t = summarize(std::move(ms));
  out.median_ms = t.median_ms;
  out.min_ms = t.min_ms;
  return out;
}

// Calls per timed sample under the stream and graph timers: about 2 ms of work per sample (from a
// synchronized call's time), at least 8 calls and at most 64.
int calls_per_sample(GpuTimer mode, double call_ms) {
  if (mode == GpuTimer::calls) return 1;
  return std::clamp(int(std::ceil(2.0 / std::max(call_ms, 1e-4))), 8, 64);
}

__global__ void empty_kernel() {}

// The smallest time this harness can report per call: an empty one-block kernel timed the same
// way. A transform of B bytes cannot take less than about this plus B / copy bandwidth, which is
// why small batches cannot reach a large fraction of the copy bandwidth.
double launch_floor_ms(int repeat, cudaStream_t stream, GpuTimer mode) {
  return time_events([&](int) {
    empty_kernel<<<1, 32, 0, stream>>>();
    FFTCONV_CUDA_CHECK_LAUNCH();
  }, 3, repeat, stream, mode, 64).median_ms;
}

// Device copy bandwidth (bytes read + written per second) of a large D2D cudaMemcpy (about a
// millisecond per copy, so the launch gap is below 1% under every timer; timed as calls).
double copy_bandwidth_gbps(int repeat, cudaStream_t stream) {
  std::size_t free_b = 0, total_b = 0;
  FFTCONV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t bytes = std::min<std::size_t>(std::size_t(1) << 30, free_b / 4);
  DeviceBuffer a(bytes), b(bytes);
  FFTCONV_CUDA_CHECK(cudaMemsetAsync(a.get(), 0, bytes, stream));
  const Stats s = time_events(
      [&](int) { FFTCONV_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream)); }, 3,
      std::max(5, repeat / 2), stream);
  return 2.0 * double(bytes) / (s.median_ms * 1e6);
}

nlohmann::json device_json() {
  int dev = 0, driver = 0, runtime = 0, cufft_ver = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  FFTCONV_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  FFTCONV_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FFTCONV_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  FFTCONV_CUFFT_CHECK(cufftGetVersion(&cufft_ver));
  return {{"name", p.name},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"sm_count", p.multiProcessorCount},
          {"l2_bytes", p.l2CacheSize},
          {"memory_bytes", p.totalGlobalMem},
          {"cuda_driver", driver},
          {"cuda_runtime", runtime},
          {"cufft", cufft_ver}};
}

std::string timestamp_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Verification tolerance for two fp32 FFTs of N points: 8 * 2^-24 * log2(N) normwise.
double verify_tolerance(int n_h, int n_w) { return 8.0 * std::ldexp(1.0, -24) * std::max(1.0, std::log2(double(n_h) * n_w)); }

struct Config {
  int n_h, n_w;
  int64_t batch;
  bool inverse;
};

// Each copy is timed with 1, 2 and 4 pieces per thread and the fastest is kept: four suit large
// copies, while a small one with four pieces per thread runs fewer blocks than there are SMs.
struct CopyStats {
  Stats st;
  int pieces_per_thread;
};

// One configuration measured: rotating (real, spectra) slots filled with uniform data, cuFFT's
// plans and reference result, and fbfft's arguments. The steps run in the order of run(), which
// matters: later steps overwrite slots that earlier ones verify against.
class ConfigRun {
 public:
  ConfigRun(const Config& c, const FftBenchOptions& o, double copy_gbps, cudaStream_t stream, bool* ok)
      : c_(c), o_(o), copy_gbps_(copy_gbps), stream_(stream), ok_(ok) {}

  nlohmann::json run(uint64_t seed, std::ostream& out) {
    allocate(seed);
    make_cufft_plans();
    make_fbfft_args();
    reference();
    family_ = fbfft::resolve_kernel(c_.n_h, c_.n_w, fbfft::Kernel::automatic, fbfft::Layout::standard, c_.inverse);
    verified_ = verify(fbfft::Kernel::automatic, &rel_, &non_finite_);
    // Every family and cuFFT are timed with the same number of calls per sample, sized from three
    // synchronized calls of the automatic family.
    per_sample_ = calls_per_sample(
        o_.timer, time_events([&](int i) { run_fbfft(i, fbfft::Kernel::automatic); }, 1, 3, stream_).median_ms);
    fb_ = time_fbfft(fbfft::Kernel::automatic);
    cu_ = time_cufft();
    if (c_.inverse)  // the spectra cuFFT may have overwritten, for the other families' verification
      FFTCONV_CUDA_CHECK(
          cudaMemcpyAsync(cplx_[0].get(), check_cplx_.get(), cplx_bytes_, cudaMemcpyDeviceToDevice, stream_));
    nlohmann::json others = other_families(), shapes = shapes_1d();
    nlohmann::json plain = o_.dependent_launch == DependentLaunch::compare ? plain_launches() : nlohmann::json(nullptr);
    measure_copies(plain);
    print_line(out);
    nlohmann::json row = json();
    row["fbfft_other_families"] = std::move(others);
    row["fbfft_shapes_1d"] = std::move(shapes);
    row["plain_launches"] = std::move(plain);
    return row;
  }

 private:
  double bytes() const { return double(real_bytes_ + cplx_bytes_); }

  void allocate(uint64_t seed) {
    const int nw2 = c_.n_w / 2 + 1;
    real_elems_ = c_.batch * c_.n_h * c_.n_w;
    cplx_elems_ = c_.batch * c_.n_h * nw2;
    real_bytes_ = std::size_t(real_elems_) * sizeof(float);
    cplx_bytes_ = std::size_t(cplx_elems_) * sizeof(float2);
    std::size_t free_b = 0, total_b = 0;
    FFTCONV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t slot = real_bytes_ + cplx_bytes_;
    slots_ = int(std::min<std::size_t>(kMaxSlots, (kRotateMinBytes + slot - 1) / slot));
    slots_ = std::max(1, std::min<int>(slots_, int((free_b / 2) / (slot * 1)) - 2));
    real_.resize(slots_);
    cplx_.resize(slots_);
    for (int s = 0; s < slots_; ++s) {
      real_[s].allocate(real_bytes_);
      cplx_[s].allocate(cplx_bytes_);
      fill_uniform(real_[s].as<float>(), real_elems_, seed + s, stream_);
    }
    check_real_.allocate(real_bytes_);
    check_cplx_.allocate(cplx_bytes_);
  }

  void make_cufft_plans() {
    const int nw2 = c_.n_w / 2 + 1;
    int dims[2] = {c_.n_h, c_.n_w};
    const int rank = c_.n_h == 1 ? 1 : 2;
    int* n = rank == 1 ? dims + 1 : dims;
    FFTCONV_CUFFT_CHECK(cufftPlanMany(&r2c_.h, rank, n, nullptr, 1, c_.n_h * c_.n_w, nullptr, 1, c_.n_h * nw2,
                                      CUFFT_R2C, int(c_.batch)));
    FFTCONV_CUFFT_CHECK(cufftSetStream(r2c_.h, stream_));
    if (c_.inverse) {
      FFTCONV_CUFFT_CHECK(cufftPlanMany(&c2r_.h, rank, n, nullptr, 1, c_.n_h * nw2, nullptr, 1, c_.n_h * c_.n_w,
                                        CUFFT_C2R, int(c_.batch)));
      FFTCONV_CUFFT_CHECK(cufftSetStream(c2r_.h, stream_));
    }
  }

  // Whole contiguous planes in and out, in the standard layout.
  void make_fbfft_args() {
    fa_.batch = ia_.batch = c_.batch;
    fa_.n_h = ia_.n_h = c_.n_h;
    fa_.n_w = ia_.n_w = c_.n_w;
    fa_.in_h = ia_.out_h = c_.n_h;
    fa_.in_w = ia_.out_w = c_.n_w;
    fa_.in_ld = ia_.out_ld = c_.n_w;
    fa_.in_plane_stride = ia_.out_plane_stride = int64_t(c_.n_h) * c_.n_w;
    fa_.dependent_launch = ia_.dependent_launch = o_.dependent_launch != DependentLaunch::off;
  }

  // One fbfft call on rotating slot i with kernel family k.
  void run_fbfft(int i, fbfft::Kernel k) {
    if (!c_.inverse) {
      fa_.kernel = k;
      fa_.input = real_[i % slots_].as<float>();
      fa_.output = cplx_[i % slots_].as<float2>();
      fbfft::forward(fa_, stream_);
    } else {
      ia_.kernel = k;
      ia_.input = cplx_[i % slots_].as<float2>();
      ia_.output = real_[i % slots_].as<float>();
      fbfft::inverse(ia_, stream_);
    }
  }

  // cuFFT's result on slot 0, the reference each family is verified against.
  void reference() {
    if (!c_.inverse) {
      FFTCONV_CUFFT_CHECK(cufftExecR2C(r2c_.h, real_[0].as<float>(), check_cplx_.as<cufftComplex>()));
      return;
    }
    for (int s = 0; s < slots_; ++s)  // Hermitian spectra of real data in every slot
      FFTCONV_CUFFT_CHECK(cufftExecR2C(r2c_.h, real_[s].as<float>(), cplx_[s].as<cufftComplex>()));
    FFTCONV_CUDA_CHECK(cudaMemcpyAsync(check_cplx_.get(), cplx_[0].get(), cplx_bytes_, cudaMemcpyDeviceToDevice, stream_));
    FFTCONV_CUFFT_CHECK(cufftExecC2R(c2r_.h, check_cplx_.as<cufftComplex>(), check_real_.as<float>()));
    // C2R may overwrite its input: restore the copy of slot 0's spectra
    FFTCONV_CUDA_CHECK(cudaMemcpyAsync(check_cplx_.get(), cplx_[0].get(), cplx_bytes_, cudaMemcpyDeviceToDevice, stream_));
  }

  // Family k on slot 0, its output poisoned with NaN first, compared with the reference on the device.
  bool verify(fbfft::Kernel k, double* rel_out, int64_t* non_finite) {
    ErrorSums err;
    if (!c_.inverse) {
      FFTCONV_CUDA_CHECK(cudaMemsetAsync(cplx_[0].get(), 0xff, cplx_bytes_, stream_));
      run_fbfft(0, k);
      err = compare_on_device(reinterpret_cast<const float*>(cplx_[0].get()), check_cplx_.as<float>(), 2 * cplx_elems_,
                              stream_);
    } else {
      FFTCONV_CUDA_CHECK(cudaMemsetAsync(real_[0].get(), 0xff, real_bytes_, stream_));
      run_fbfft(0, k);
      err = compare_on_device(real_[0].as<float>(), check_real_.as<float>(), real_elems_, stream_);
    }
    *rel_out = err.ref_sq > 0 ? std::sqrt(err.diff_sq / err.ref_sq) : std::sqrt(err.diff_sq);
    *non_finite = err.non_finite;
    const bool good = err.non_finite == 0 && *rel_out <= verify_tolerance(c_.n_h, c_.n_w);
    if (!good) *ok_ = false;
    return good;
  }

  Stats time_fbfft(fbfft::Kernel k) {
    return time_events([&](int i) { run_fbfft(i, k); }, o_.warmup, o_.repeat, stream_, o_.timer, per_sample_);
  }

  // cuFFT C2R may overwrite its input; it runs after fbfft, on the same buffers.
  Stats time_cufft() {
    if (c_.inverse)
      return time_events([&](int i) {
        FFTCONV_CUFFT_CHECK(cufftExecC2R(c2r_.h, cplx_[i % slots_].as<cufftComplex>(), real_[i % slots_].as<float>()));
      }, o_.warmup, o_.repeat, stream_, o_.timer, per_sample_);
    return time_events([&](int i) {
      FFTCONV_CUFFT_CHECK(cufftExecR2C(r2c_.h, real_[i % slots_].as<float>(), cplx_[i % slots_].as<cufftComplex>()));
    }, o_.warmup, o_.repeat, stream_, o_.timer, per_sample_);
  }

  // fbfft by family k in a 1-D block shape, verified and timed like the automatic family (same
  // buffers, same run): one JSON row, to which the caller adds its label.
  nlohmann::json measure(fbfft::Kernel k, const std::optional<fbfft::Shape1d>& shape) {
    fa_.shape_1d = ia_.shape_1d = shape;
    double rel_k = 0;
    int64_t nf_k = 0;
    const bool ok_k = verify(k, &rel_k, &nf_k);
    const Stats st = time_fbfft(k);
    fa_.shape_1d = ia_.shape_1d = std::nullopt;
    const double gbps = bytes() / (st.median_ms * 1e6);
    return {{"median_ms", st.median_ms}, {"min_ms", st.min_ms}, {"gbps", gbps}, {"copy_fraction", gbps / copy_gbps_},
            {"speedup", cu_.median_ms / st.median_ms}, {"rel_l2_vs_cufft", rel_k}, {"non_finite", nf_k}, {"verified", ok_k},
            {"timer", st.timer}, {"kernel", fbfft::kernel_attributes(c_.n_h, c_.n_w, c_.inverse, k, fbfft::Layout::standard, shape, c_.batch)}};
  }

  // The other kernel families of the same size, where there are: the measurements behind the
  // automatic choice (find_launcher in fbfft.cu).
  nlohmann::json other_families() {
    nlohmann::json others = nlohmann::json::array();
    for (fbfft::Kernel k : {fbfft::Kernel::shuffle, fbfft::Kernel::registers, fbfft::Kernel::fourstep}) {
      if (k == family_ || !fbfft::supported(c_.n_h, c_.n_w, k)) continue;
      nlohmann::json row = measure(k, std::nullopt);
      row["family"] = fbfft::to_string(k);
      char buf[160];
      std::snprintf(buf, sizeof buf, " (%s %.4f ms, %.2fx cuFFT%s)", fbfft::to_string(k), row["median_ms"].get<double>(),
                    row["speedup"].get<double>(), row["verified"].get<bool>() ? "" : ", FAILED");
      others_line_ += buf;
      others.push_back(std::move(row));
    }
    return others;
  }

  // The requested 1-D block shapes of the automatic family (Note [1-D block shapes]): the
  // measurements behind the automatic shape.
  nlohmann::json shapes_1d() {
    nlohmann::json shapes = nlohmann::json::array();
    for (const fbfft::Shape1d& shape : o_.shapes_1d) {
      nlohmann::json row = measure(family_, shape);
      row["shape"] = fbfft::to_string(shape);
      char buf[160];
      std::snprintf(buf, sizeof buf, " {%s %.4f ms, %.1f%%, %.2fx cuFFT%s}", fbfft::to_string(shape).c_str(),
                    row["median_ms"].get<double>(), 100 * row["copy_fraction"].get<double>(), row["speedup"].get<double>(),
                    row["verified"].get<bool>() ? "" : ", FAILED");
      shapes_line_ += buf;
      shapes.push_back(std::move(row));
    }
    return shapes;
  }

  // --dependent-launch compare: the automatic family launched plainly, verified and timed like the
  // dependent launches (the baseline of Note [dependent launch], same buffers, same run).
  nlohmann::json plain_launches() {
    fa_.dependent_launch = ia_.dependent_launch = false;
    nlohmann::json plain = {{"fbfft", measure(fbfft::Kernel::automatic, std::nullopt)}};
    fa_.dependent_launch = ia_.dependent_launch = true;
    const nlohmann::json& fp = plain["fbfft"];
    char buf[128];
    std::snprintf(buf, sizeof buf, " <plain launches: fbfft %.4f ms, %.1f%%, %.2fx cuFFT%s", fp["median_ms"].get<double>(),
                  100 * fp["copy_fraction"].get<double>(), fp["speedup"].get<double>(), fp["verified"].get<bool>() ? "" : ", FAILED");
    plain_line_ = buf;
    return plain;
  }

  // The same-size copy (shaped = false: spectra slots to spectra slots) or the same-shape one (the
  // transform's input slots to its output slots), writing half the rotation ahead of what it reads.
  CopyStats time_copy(bool dependent, bool shaped) {
    const bool from_real = shaped && !c_.inverse, to_real = shaped && c_.inverse;
    const std::vector<DeviceBuffer>& srcs = from_real ? real_ : cplx_;
    std::vector<DeviceBuffer>& dsts = to_real ? real_ : cplx_;
    DeviceBuffer& dst_one_slot = to_real ? check_real_ : check_cplx_;
    const int64_t n_in = shaped ? in_pieces_ : same_pieces_, n_out = shaped ? out_pieces_ : same_pieces_;
    CopyStats best{};
    for (int k : {1, 2, 4}) {
      const Stats st = time_events([&](int i) {
        void* dst = slots_ > 1 ? dsts[(i + slots_ / 2) % slots_].get() : dst_one_slot.get();
        copy_device(static_cast<float4*>(dst), n_out, static_cast<const float4*>(srcs[i % slots_].get()), n_in, stream_,
                    dependent, k);
      }, o_.warmup, o_.repeat, stream_, o_.timer, per_sample_);
      if (best.pieces_per_thread == 0 || st.median_ms < best.st.median_ms) best = {st, k};
    }
    return best;
  }

  // Two copies timed the same way: how close to the (large-copy) copy bandwidth a kernel of this
  // size gets at all. The same-size copy reads and writes half the transform's bytes each; the
  // same-shape copy reads the transform's input bytes and writes its output bytes (R2C writes more
  // than it reads, C2R reads more: a read costs more than a write, which goes only to L2). Each
  // writes half the rotation ahead of what it reads, so that neither side is still in L2; they run
  // last because they overwrite slots (and, with one slot, the references) that the verifications
  // use. Under --dependent-launch compare the same-size copy is also timed with plain launches.
  void measure_copies(nlohmann::json& plain) {
    same_pieces_ = int64_t((real_bytes_ + cplx_bytes_) / 32);  // 16-byte pieces each way (<= cplx_bytes)
    same_bytes_ = std::size_t(same_pieces_) * 16;
    in_pieces_ = int64_t((c_.inverse ? cplx_bytes_ : real_bytes_) / 16);
    out_pieces_ = int64_t((c_.inverse ? real_bytes_ : cplx_bytes_) / 16);
    const bool dependent = o_.dependent_launch != DependentLaunch::off;
    same_ = time_copy(dependent, false);
    shape_ = time_copy(dependent, true);
    if (o_.dependent_launch != DependentLaunch::compare) return;
    const CopyStats cpc = time_copy(false, false);
    const Stats& cp = cpc.st;
    const double cp_gbps = 2.0 * double(same_bytes_) / (cp.median_ms * 1e6);
    plain["same_size_copy"] = {{"median_ms", cp.median_ms}, {"min_ms", cp.min_ms}, {"copy_fraction", cp_gbps / copy_gbps_},
                               {"timer", cp.timer}, {"pieces_per_thread", cpc.pieces_per_thread}};
    char buf[64];
    std::snprintf(buf, sizeof buf, "; copy %.4f ms, %.1f%%>", cp.median_ms, 100 * cp_gbps / copy_gbps_);
    plain_line_ += buf;
  }

  double shape_gbps() const { return 16.0 * double(in_pieces_ + out_pieces_) / (shape_.st.median_ms * 1e6); }
  double same_gbps() const { return 2.0 * double(same_bytes_) / (same_.st.median_ms * 1e6); }

  // The configuration's line of the table.
  void print_line(std::ostream& out) const {
    const Stats &fb = fb_, &cu = cu_;
    const double fb_gbps = bytes() / (fb.median_ms * 1e6), cu_gbps = bytes() / (cu.median_ms * 1e6);
    char line[400];
    std::snprintf(line, sizeof line, "%4dx%-4d %8lld %-3s | %9.4f %9.4f | %9.4f %9.4f | %7.1f %5.1f%% | %7.1f %5.1f%% | %5.2fx | %.2e %s | %s",
                  c_.n_h, c_.n_w, (long long)c_.batch, c_.inverse ? "inv" : "fwd", fb.median_ms, fb.min_ms, cu.median_ms,
                  cu.min_ms, fb_gbps, 100 * fb_gbps / copy_gbps_, cu_gbps, 100 * cu_gbps / copy_gbps_,
                  cu.median_ms / fb.median_ms, rel_, verified_ ? "ok" : "FAILED", fbfft::to_string(family_));
    char same_line[128];
    std::snprintf(same_line, sizeof same_line, " [same-size copy %.4f ms, %.1f%%; same-shape copy %.4f ms, %.1f%%]",
                  same_.st.median_ms, 100 * same_gbps() / copy_gbps_, shape_.st.median_ms, 100 * shape_gbps() / copy_gbps_);
    out << line << same_line << plain_line_ << others_line_ << shapes_line_;
    for (const Stats* st : {&fb, &cu})
      if (st->timer != to_string(o_.timer)) out << " [" << (st == &fb ? "fbfft" : "cufft") << " timed as " << st->timer << "]";
    out << std::endl;
  }

  // The configuration's JSON row (without the other families, the 1-D shapes and the plain launches).
  nlohmann::json json() const {
    const Stats &fb = fb_, &cu = cu_, &same = same_.st, &shape = shape_.st;
    const double fb_gbps = bytes() / (fb.median_ms * 1e6), cu_gbps = bytes() / (cu.median_ms * 1e6);
    const std::string attrs =
        fbfft::kernel_attributes(c_.n_h, c_.n_w, c_.inverse, family_, fbfft::Layout::standard, std::nullopt, c_.batch);
    return {{"n_h", c_.n_h},
            {"n_w", c_.n_w},
            {"batch", c_.batch},
            {"direction", c_.inverse ? "inverse" : "forward"},
            {"bytes", bytes()},
            {"rotating_buffers", slots_},
            {"calls_per_sample", per_sample_},
            {"fbfft", {{"median_ms", fb.median_ms}, {"min_ms", fb.min_ms}, {"gbps", fb_gbps}, {"copy_fraction", fb_gbps / copy_gbps_}, {"timer", fb.timer}}},
            {"cufft", {{"median_ms", cu.median_ms}, {"min_ms", cu.min_ms}, {"gbps", cu_gbps}, {"copy_fraction", cu_gbps / copy_gbps_}, {"timer", cu.timer}}},
            {"same_size_copy", {{"bytes_read_and_written", 2 * same_bytes_}, {"median_ms", same.median_ms}, {"min_ms", same.min_ms},
                                {"copy_fraction", same_gbps() / copy_gbps_}, {"timer", same.timer}, {"pieces_per_thread", same_.pieces_per_thread}}},
            {"same_shape_copy", {{"bytes_read", 16 * in_pieces_}, {"bytes_written", 16 * out_pieces_}, {"median_ms", shape.median_ms},
                                 {"min_ms", shape.min_ms}, {"copy_fraction", shape_gbps() / copy_gbps_}, {"timer", shape.timer},
                                 {"pieces_per_thread", shape_.pieces_per_thread}}},
            {"speedup", cu.median_ms / fb.median_ms},
            {"rel_l2_vs_cufft", rel_},
            {"non_finite", non_finite_},
            {"verified", verified_},
            {"fbfft_kernel", attrs},
            {"fbfft_family", fbfft::to_string(family_)}};
  }

  const Config& c_;
  const FftBenchOptions& o_;
  double copy_gbps_;
  cudaStream_t stream_;
  bool* ok_;  // cleared by a failed verification
  int64_t real_elems_ = 0, cplx_elems_ = 0;
  std::size_t real_bytes_ = 0, cplx_bytes_ = 0;
  int slots_ = 1;
  std::vector<DeviceBuffer> real_, cplx_;  // the rotating slots
  DeviceBuffer check_real_, check_cplx_;    // cuFFT's reference result
  CufftPlan r2c_, c2r_;
  ForwardArgs fa_;
  InverseArgs ia_;
  fbfft::Kernel family_ = fbfft::Kernel::automatic;  // the automatic family, resolved
  double rel_ = 0;
  int64_t non_finite_ = 0;
  bool verified_ = false;
  int per_sample_ = 1;
  Stats fb_, cu_;
  int64_t same_pieces_ = 0, in_pieces_ = 0, out_pieces_ = 0;  // the copies' 16-byte pieces
  std::size_t same_bytes_ = 0;
  CopyStats same_{}, shape_{};
  std::string others_line_, shapes_line_, plain_line_;
};

nlohmann::json run_config(const Config& c, const FftBenchOptions& o, double copy_gbps, cudaStream_t stream,
                          uint64_t seed, std::ostream& out, bool* ok) {
  return ConfigRun(c, o, copy_gbps, stream, ok).run(seed, out);
}

}  // namespace

const char* to_string(DependentLaunch d) {
  switch (d) {
    case DependentLaunch::off: return "off";
    case DependentLaunch::compare: return "compare";
    default: return "on";
  }
}

bool fft_bench_available(std::string* why) {
  const Support s = cuda_device_support();
  if (!s.ok && why) *why = s.reason;
  return s.ok;
}

namespace {

// The (n_h, n_w) shapes of a run: --sizes (n × n, or n-point: 1 × n), then --rects.
std::vector<std::pair<int, int>> bench_shapes(const FftBenchOptions& o) {
  std::vector<std::pair<int, int>> shapes;
  for (int n : o.sizes) shapes.push_back({o.dims == 2 ? n : 1, n});
  shapes.insert(shapes.end(), o.rects.begin(), o.rects.end());
  return shapes;
}

}  // namespace

void check_fft_bench_options(const FftBenchOptions& o) {
  if (o.dims != 1 && o.dims != 2) throw InvalidArgument("bench fft: --dims must be 1 or 2, got " + std::to_string(o.dims));
  if (o.repeat < 1) throw InvalidArgument("bench fft: --repeat must be >= 1, got " + std::to_string(o.repeat));
  if ((o.sizes.empty() && o.rects.empty()) || o.batches.empty())
    throw InvalidArgument("bench fft: --sizes (or --rects) and --batches must not be empty");
  if (!o.shapes_1d.empty() && o.dims != 1)
    throw InvalidArgument("bench fft: --shapes-1d applies to 1-D transforms only (--dims 1), got --dims " + std::to_string(o.dims));
  if (!o.rects.empty() && o.dims != 2)
    throw InvalidArgument("bench fft: --rects applies to 2-D transforms only (--dims 2), got --dims " + std::to_string(o.dims));
  for (auto [n_h, n_w] : bench_shapes(o))
    if (!fbfft::supported(n_h, n_w))
      throw Unsupported("bench fft: fbfft has no kernel for size " +
                        (n_h == 1 ? std::to_string(n_w) : std::to_string(n_h) + "x" + std::to_string(n_w)));
  for (int64_t b : o.batches)
    if (b < 1 || b > (int64_t(1) << 30)) throw InvalidArgument("bench fft: batch " + std::to_string(b) + " out of range [1, 2^30]");
}

std::string run_fft_bench(const FftBenchOptions& o, std::ostream& out, bool* all_ok) {
  check_fft_bench_options(o);
  const std::vector<std::pair<int, int>> shapes = bench_shapes(o);
  *all_ok = true;
  const CudaStream owned_stream;
  const cudaStream_t stream = owned_stream.get();
  nlohmann::json doc;
  doc["benchmark"] = "fft";
  doc["command"] = o.command_line;
  doc["date"] = timestamp_utc();
  doc["device"] = device_json();
  doc["dims"] = o.dims;
  doc["direction"] = o.inverse ? "inverse" : "forward";
  doc["repeat"] = o.repeat;
  doc["warmup"] = o.warmup;
  doc["timer"] = to_string(o.timer);
  doc["layout"] = "standard batch x n_h x (n_w/2+1), no padding, out-of-place";
  doc["dependent_launch"] = to_string(o.dependent_launch);
  const double copy = copy_bandwidth_gbps(o.repeat, stream);
  doc["copy_gbps"] = copy;
  const double floor_ms = launch_floor_ms(o.repeat, stream, o.timer);
  doc["launch_floor_ms"] = floor_ms;
  out << "device " << doc["device"]["name"].get<std::string>() << ", copy bandwidth " << copy
      << " GB/s (read+write), launch floor " << floor_ms * 1e3 << " us (empty kernel, same timing); timer "
      << to_string(o.timer) << (o.timer == GpuTimer::calls ? " (each call synchronized)" : " (per call, calls back to back)")
      << "; dependent launch " << to_string(o.dependent_launch) << "\n";
  out << "     size    batch dir | fbfft med   min(ms) | cufft med   min(ms) | fbfft GB/s %copy | cufft GB/s %copy | speedup | rel_l2 | fbfft family [copy kernels: same size; same shape] <plain launches> (other families) {1-D block shapes}\n";
  const uint64_t seed = std::random_device{}();
  doc["seed"] = seed;
  nlohmann::json rows = nlohmann::json::array();
  for (auto [n_h, n_w] : shapes)
    for (int64_t b : o.batches) rows.push_back(run_config({n_h, n_w, b, o.inverse}, o, copy, stream, seed, out, all_ok));
  doc["rows"] = rows;
  return doc.dump(2);
}

}  // namespace fftconv::bench
