// `fftconv bench fft`: fbfft against cuFFT on batched small R2C/C2R transforms (paper Figs 7-8);
// prints a table, optionally writes JSON; exit 2 without a CUDA build or device, 1 on a failed check.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "validation/timing.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/backend.hpp"
#include "common/errors.hpp"
#include "gpu/fft/shape_1d.hpp"
#ifdef FFTCONV_HAVE_CUDA
#include "bench/fft_bench.hpp"
#endif

namespace fftconv::cli {

namespace {

struct BenchFftArgs {
  int dims = 2;
  std::vector<int> sizes{8, 16, 32, 64};
  std::vector<std::string> rects;
  std::vector<int64_t> batches{16384, 65536};
  bool inverse = false;
  int repeat = 50;
  std::string timer = "calls";
  std::vector<std::string> shapes_1d;
  std::string dependent_launch = "on";
  std::string json;
};

// "HxW" (two sides in 2..128; TileSpec's HxW syntax) as {H, W}; throws InvalidArgument naming --rects.
std::pair<int, int> parse_rect(const std::string& text) {
  const std::string bad = "--rects: bad size '" + text + "' (expected HxW with sides in 2..128, e.g. 42x54)";
  TileSpec t;
  try {
    t = TileSpec::parse(text);
  } catch (const InvalidArgument&) {
    throw InvalidArgument(bad);
  }
  auto side_ok = [](int64_t n) { return n >= 2 && n <= 128; };
  if (text.find('x') == std::string::npos || t.kind != TileSpec::Kind::fixed || !side_ok(t.fft_h) || !side_ok(t.fft_w))
    throw InvalidArgument(bad);
  return {static_cast<int>(t.fft_h), static_cast<int>(t.fft_w)};
}

int run(const BenchFftArgs& a, const std::string& command) {
  const GpuTimer timer = parse_gpu_timer(a.timer);  // bad input is reported before the device check
  std::vector<fbfft::Shape1d> shapes;
  for (const std::string& s : a.shapes_1d) shapes.push_back(fbfft::parse_shape_1d(s, "--shapes-1d"));
  if (!shapes.empty() && a.dims != 1)
    throw InvalidArgument("--shapes-1d: applies to 1-D transforms only (--dims 1), got --dims " + std::to_string(a.dims));
  std::vector<std::pair<int, int>> rects;
  for (const std::string& r : a.rects) rects.push_back(parse_rect(r));
  if (!rects.empty() && a.dims != 2)
    throw InvalidArgument("--rects: applies to 2-D transforms only (--dims 2), got --dims " + std::to_string(a.dims));
#ifdef FFTCONV_HAVE_CUDA
  bench::FftBenchOptions o;
  o.dims = a.dims;
  o.sizes = a.sizes;
  o.rects = rects;
  o.batches = a.batches;
  o.inverse = a.inverse;
  o.repeat = a.repeat;
  o.timer = timer;
  o.shapes_1d = shapes;
  o.dependent_launch = a.dependent_launch == "off"       ? bench::DependentLaunch::off
                       : a.dependent_launch == "compare" ? bench::DependentLaunch::compare
                                                         : bench::DependentLaunch::on;
  o.command_line = command;
  bench::check_fft_bench_options(o);  // sizes without a kernel and bad batches fail before the device check
  if (arguments_only()) return kExitOk;
  std::string why;
  if (!bench::fft_bench_available(&why)) {
    std::fprintf(stderr, "fftconv bench fft: %s\n", why.c_str());
    return kExitBadInput;
  }
  bool ok = true;
  const std::string doc = bench::run_fft_bench(o, std::cout, &ok);
  if (!a.json.empty()) write_json_file(a.json, doc, "--json");
  if (!ok) {
    std::fprintf(stderr, "fftconv bench fft: fbfft disagreed with cuFFT in at least one configuration\n");
    return kExitCheckFailed;
  }
  return kExitOk;
#else
  if (arguments_only()) return kExitOk;
  (void)a;
  (void)command;
  (void)timer;
  (void)shapes;
  (void)rects;
  std::fprintf(stderr, "fftconv bench fft: this build has no CUDA support (configure with nvcc and FFTCONV_CUDA)\n");
  return kExitBadInput;
#endif
}

}  // namespace

void add_bench_fft_command(CLI::App& bench, int* exit_code) {
  auto args = std::make_shared<BenchFftArgs>();
  CLI::App* cmd = bench.add_subcommand("fft", "fbfft vs cuFFT: batched R2C (or --inverse C2R) transforms, time and GB/s, beside two copy kernels timed the same way "
                                    "(the same-size copy reads and writes half the transform's bytes each; the same-shape copy reads its input "
                                    "bytes and writes its output bytes)");
  cmd->add_option("--dims", args->dims, "1 (n-point) or 2 (n x n)")->check(CLI::IsMember({1, 2}));
  CLI::Option* sizes = cmd->add_option("--sizes", args->sizes, "transform sizes n (n-point, or n x n with --dims 2) of the form 2^a 3^b 5^c 7^d: 1-D up to 256, 2-D up to 128")->delimiter(',');
  cmd->add_option("--rects", args->rects, "with --dims 2, also these rectangles HxW (sides 2..128 of the form 2^a 3^b 5^c 7^d), e.g. 42x54,45x128")->delimiter(',');
  cmd->add_option("--batches", args->batches, "batch sizes")->delimiter(',');
  cmd->add_flag("--inverse", args->inverse, "time the inverse C2R instead of the forward R2C");
  cmd->add_option("--repeat", args->repeat, "timed repetitions per configuration");
  add_timer_option(cmd, args->timer);
  cmd->add_option("--shapes-1d", args->shapes_1d,
                  "with --dims 1, also verify and time these block shapes of fbfft's 1-D register / four-step kernels "
                  "(an experiment knob; the fbfft columns use the automatic shape): 'plain' (32 pairs, no prefetch, no fill) or comma-separated pairs=4|8|16|32 (four-step pairs per block), prefetch "
                  "(load the next group while computing), fill (small sizes: shrink blocks until one full wave), groups=2|4|8 "
                  "(cut the grid so that each block loops over at least that many groups); "
                  "e.g. --shapes-1d plain pairs=16,prefetch");
  cmd->add_option("--dependent-launch", args->dependent_launch,
                  "launch fbfft and the copies as programmatic dependent launches (on, the library's default: "
                  "each call's launch overlaps the end of the call before it), plainly (off), or both in the same run "
                  "(compare: the plain launches are printed and written beside the dependent ones)")
      ->check(CLI::IsMember({"on", "off", "compare"}));
  cmd->add_option("--json", args->json, "write the results (device, versions, rows) as JSON to this path");
  cmd->callback([args, exit_code, sizes]() {
    if (!args->rects.empty() && sizes->count() == 0) args->sizes.clear();  // --rects alone: only the rectangles
    const std::string command = command_line("fftconv bench fft");
    *exit_code = run(*args, command);
  });
}

}  // namespace fftconv::cli
