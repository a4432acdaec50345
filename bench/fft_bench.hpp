// `fftconv bench fft`: fbfft against cuFFT on batched R2C / C2R transforms of small sizes, as time
// and as a fraction of the device copy bandwidth measured in the same run (paper Figures 7-8).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "validation/timing.hpp"
#include "gpu/fft/shape_1d.hpp"

namespace fftconv::bench {

enum class DependentLaunch { on, off, compare };
const char* to_string(DependentLaunch d);

struct FftBenchOptions {
  int dims = 2;                                   // 1: n-point transforms; 2: n×n
  std::vector<int> sizes{8, 16, 32, 64};
  std::vector<std::pair<int, int>> rects;         // dims 2 only: these n_h × n_w rectangles too
  std::vector<int64_t> batches{16384, 65536};
  bool inverse = false;                           // C2R instead of R2C
  int repeat = 50;                                // timed repetitions (median and min reported)
  int warmup = 5;
  GpuTimer timer = GpuTimer::calls;               // calls: each call synchronized; stream / graph: per call,
                                                  // 8-64 calls back to back per sample (validation/timing.hpp)
  // fbfft and the copies launched as programmatic dependent launches (on, the library's default;
  // Note [dependent launch]) or not (off); compare: both, in the same run (the fbfft and copy
  // columns launched dependent, fbfft's and the same-size copy's plain launches beside them).
  DependentLaunch dependent_launch = DependentLaunch::on;
  std::vector<fbfft::Shape1d> shapes_1d;          // dims 1 only: these block shapes of the 1-D register /
                                                  // four-step kernels too, verified and timed in the same run
  std::string command_line;                       // recorded in the JSON
};

// True when this build has the CUDA benchmark and a device is present; else *why says which.
bool fft_bench_available(std::string* why);

// The checks run_fft_bench() makes of its options, on the host alone (no device is needed): throws
// InvalidArgument for bad options, Unsupported for sizes without an fbfft kernel.
void check_fft_bench_options(const FftBenchOptions& opts);

// Runs every (size, batch) configuration: verifies fbfft against cuFFT on the same data, times
// both with CUDA events (as o.timer says) after warm-up over rotating buffers larger than L2, prints a table to
// `out`, and returns the JSON document (device, versions, copy bandwidth, rows). *all_ok is false
// when some configuration failed verification. Throws InvalidArgument for bad options,
// Unsupported for sizes without an fbfft kernel, CudaError / OutOfMemory from the device.
std::string run_fft_bench(const FftBenchOptions& opts, std::ostream& out, bool* all_ok);

}  // namespace fftconv::bench
