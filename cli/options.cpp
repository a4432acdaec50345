// PlanFlags (see options.hpp).
#include "cli/options.hpp"

#include <charconv>

#include "common/errors.hpp"

namespace fftconv::cli {

void add_timer_option(CLI::App* cmd, std::string& timer) {
  cmd->add_option("--timer", timer,
                  "GPU timing: graph (the call(s) captured in a CUDA graph, its replays timed back to back: "
                  "GPU time with the shortest launch gaps), stream (calls queued back to back) or calls (each "
                  "call synchronized: includes the host's launch latency)")
      ->capture_default_str();
}

std::size_t parse_bytes(const std::string& s, const char* flag) {
  unsigned long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  std::string_view unit(ptr, s.data() + s.size() - ptr);
  const char u = unit.size() == 1 ? char(unit[0] & ~0x20) : 0;  // upper case
  unsigned shift = unit.empty() ? 0 : u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : 99;
  if (s.empty() || ec != std::errc() || shift == 99 || (shift && v > (~0ull >> shift)))
    throw InvalidArgument(std::string(flag) + ": expected bytes like 1048576, 64M or 2G, got '" + s + "'");
  return std::size_t(v << shift);
}

void parse_tile_sizes(const std::string& s, PlanOptions& o) {
  if (s == "pow2" || s == "smooth") {
    o.tile_sizes = parse_size_policy(s);
    return;
  }
  const auto bad = [&] {
    return InvalidArgument("tile-sizes: expected pow2, smooth or a list of sizes like 8,16,32, got '" + s + "'");
  };
  std::string_view rest = s;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    TileSpec t;
    try {
      t = TileSpec::parse(rest.substr(0, comma));
    } catch (const InvalidArgument&) {
      throw bad();
    }
    if (t.kind != TileSpec::Kind::fixed || t.fft_h != t.fft_w) throw bad();
    o.tile_candidates.push_back(t.fft_h);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (o.tile_candidates.empty()) throw InvalidArgument("tile-sizes: empty list");
}

void PlanFlags::add_to(CLI::App* cmd) {
  cmd->add_option("--tile", tile, "Tiling: none, auto (the planner's choice; on cufft/fbfft with autotune, the fastest of the untiled plan and the planner's two cheapest tiles, less any it models over 4x the cheapest, timed), N or HxW tile FFT size")->capture_default_str();
  cmd->add_option("--tile-sizes", tile_sizes, "Candidate tile sizes for --tile auto: pow2 (8..64), smooth (7-smooth 8..64; fbfft: powers of two 8..128 and its smooth squares up to 120, timed beside the pow2 choice) or a list 8,16,32")
      ->capture_default_str();
  cmd->add_option("--workspace-limit", workspace_limit, "Workspace limit in bytes (K/M/G suffixes), 0 = default")
      ->capture_default_str();
  cmd->add_option("--basis", basis, "Pin the untiled Fourier basis: N or HxW");
  cmd->add_option("--tune-cache", tune_cache, "GPU: JSON file caching autotuner winners; none: in memory only");
  cmd->add_flag("--no-autotune", no_autotune, "GPU: use the heuristic choice instead of timing candidates");
  cmd->add_flag("--breakdown", breakdown, "Time each pipeline step (CUDA events on the GPU, wall clock for fftw)");
  cmd->add_option("--threads", threads,
                  "CPU: OpenMP threads of the plan, 1 to the machine's hardware threads (" +
                      std::to_string(hardware_threads()) + " here; more is an error); 0 = OpenMP's default");
  cmd->add_option("--math", math,
                  "GPU: precision of the frequency-domain products: auto (the faster of fp32 and 3xtf32, timed when "
                  "autotuning), fp32 (cuBLAS CGEMM, CUDA cores), 3xtf32 (fp32-accurate 3xTF32 split on tensor "
                  "cores), tf32 (one TF32 product, about 1e-3 relative error; judged by its own tolerance)")
      ->capture_default_str();
  cmd->add_option("--opt", opts, "Backend-specific pin key=value, repeatable; a key the backend does not accept is an error (`fftconv backends` lists each backend's keys): cufft gemm=strided|batched|loop|3m, layout=transposed|direct|gather, edges=copy|callback, weights=fft|dft (pruned DFT of kernels up to 12x12), max_prime=2|3|5|7|11|13 (largest prime factor of the autotuned bases; default 13), naive=1; fbfft kernel=auto|registers|lanes|fourstep|shuffle|stockham, window=auto|off, fork=auto|on|off (the two forward transforms on two streams; auto: timed), launch=dependent|plain (programmatic dependent launch of the transforms; default dependent), fused=off|on|auto (a tiled fprop on 16x16 or 32x32 tiles in one kernel, the tile spectra in shared memory; default off), products=auto|gemm|smallk (an untiled pass with f <= 4: the CGEMM, or the small-K kernels beside standard-layout transforms; auto: timed); fftw fftw_planner=estimate|measure, fftw_cgemm=auto|eigen (auto: an AVX-512 kernel for the float32 products where built)");
}

PlanOptions PlanFlags::to_options() const {
  PlanOptions o;
  o.tile = TileSpec::parse(tile);
  parse_tile_sizes(tile_sizes, o);
  o.workspace_limit = parse_bytes(workspace_limit, "workspace-limit");
  if (!basis.empty()) {
    TileSpec b = TileSpec::parse(basis);
    if (b.kind != TileSpec::Kind::fixed) throw InvalidArgument("basis: expected N or HxW, got '" + basis + "'");
    o.basis_h = b.fft_h;
    o.basis_w = b.fft_w;
  }
  o.tune_cache = tune_cache;
  o.autotune = !no_autotune;
  o.breakdown = breakdown;
  check_threads(threads);
  o.threads = threads;
  o.math = parse_product_math(math);
  o.extra = parse_extra(opts, "opt");
  return o;
}

std::map<std::string, std::string> parse_extra(const std::vector<std::string>& kvs, const char* flag) {
  std::map<std::string, std::string> extra;
  for (const auto& kv : kvs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InvalidArgument(std::string(flag) + ": expected key=value, got '" + kv + "'");
    extra[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return extra;
}

}  // namespace fftconv::cli
