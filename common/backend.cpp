// PlanOptions parsing helpers, the Registry and backend selection.
#include "common/backend.hpp"

#include <algorithm>
#include <charconv>
#include <thread>

#include "common/errors.hpp"

namespace fftconv {

std::string_view to_string(DType d) { return d == DType::f32 ? "float32" : "float64"; }
std::string_view to_string(Location l) { return l == Location::host ? "host" : "cuda"; }

namespace {
int64_t parse_tile_dim(std::string_view whole, std::string_view v) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || out < 2 || out > 4096)
    throw InvalidArgument("tile: expected none, auto, N or HxW with sizes in [2, 4096], got '" +
                          std::string(whole) + "'");
  return out;
}
}  // namespace

TileSpec TileSpec::parse(std::string_view s) {
  TileSpec t;
  if (s == "none" || s == "off") return t;
  if (s == "auto") { t.kind = Kind::automatic; return t; }
  t.kind = Kind::fixed;
  auto x = s.find('x');
  if (x == std::string_view::npos) {
    t.fft_h = t.fft_w = parse_tile_dim(s, s);
  } else {
    t.fft_h = parse_tile_dim(s, s.substr(0, x));
    t.fft_w = parse_tile_dim(s, s.substr(x + 1));
  }
  return t;
}

std::string TileSpec::to_string() const {
  switch (kind) {
    case Kind::none: return "none";
    case Kind::automatic: return "auto";
    case Kind::fixed:
      return fft_h == fft_w ? std::to_string(fft_h) : std::to_string(fft_h) + "x" + std::to_string(fft_w);
  }
  return "?";
}

SizePolicy parse_size_policy(std::string_view s) {
  if (s == "pow2") return SizePolicy::pow2;
  if (s == "smooth") return SizePolicy::smooth;
  throw InvalidArgument("tile-sizes: expected pow2, smooth or a list of sizes, got '" + std::string(s) + "'");
}

std::string_view to_string(SizePolicy s) { return s == SizePolicy::pow2 ? "pow2" : "smooth"; }

int hardware_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }

void check_threads(int64_t threads) {
  if (threads < 0) throw InvalidArgument("threads: must be >= 0, got " + std::to_string(threads));
  if (threads > hardware_threads())
    throw InvalidArgument("threads: " + std::to_string(threads) + " exceeds the " + std::to_string(hardware_threads()) +
                          " hardware threads of this machine (0 = OpenMP's default)");
}

bool is_known_extra_key(std::string_view key) {
  // fftw: fftw_planner, fftw_cgemm; tiling planner: tiles_in_flight, accgrad_reduction; cufft: gemm, layout, edges,
  // weights, max_prime, naive; fbfft: kernel, window, launch.
  for (std::string_view k :
       {"fftw_planner", "fftw_cgemm", "tiles_in_flight", "accgrad_reduction", "gemm", "layout", "edges", "weights", "max_prime", "naive", "kernel",
        "window", "launch"})
    if (key == k) return true;
  return false;
}

Support problem_support(const ConvProblem& p) {
  try {
    p.validate();
  } catch (const InvalidProblem& e) {
    return {false, e.what()};
  }
  return {};
}

void Registry::add(std::shared_ptr<const Backend> b) {
  if (find(b->name())) throw InvalidArgument("backend: duplicate name '" + std::string(b->name()) + "'");
  backends_.push_back(std::move(b));
}

const Backend* Registry::find(std::string_view name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

void Registry::add_absent(std::string name, std::string why) { absent_.emplace_back(std::move(name), std::move(why)); }

const Backend& Registry::get(std::string_view name) const {
  if (const Backend* b = find(name)) return *b;
  for (const auto& [absent, why] : absent_)
    if (absent == name) throw Unsupported("backend: '" + absent + "' is " + why);
  std::string known;
  for (const auto& b : backends_) known += (known.empty() ? "" : ", ") + std::string(b->name());
  throw InvalidArgument("backend: unknown name '" + std::string(name) + "' (known: " + known + ")");
}

void require_operands(const Args& a, Pass pass, std::string_view backend) {
  auto need = [&](const void* ptr, const char* name) {
    if (!ptr)
      throw InvalidArgument(std::string(backend) + ": " + name + " is null but " + std::string(to_string(pass)) +
                            " reads it");
  };
  if (pass != Pass::bprop) need(a.input, "input");
  if (pass != Pass::accgrad) need(a.weight, "weight");
  if (pass != Pass::fprop) need(a.grad_output, "grad_output");
  need(a.result, "result");
}

const Backend& select_backend(const Registry& r, const ConvProblem& p, Pass pass, DType dtype,
                              const Location* where) {
  std::string reasons;
  for (const auto& b : r.all()) {
    if (where && b->location() != *where) continue;
    Support a = b->available();
    if (a.ok) a = b->supports(p, pass, dtype);
    if (a.ok) return *b;
    reasons += "; " + std::string(b->name()) + ": " + a.reason;
  }
  throw Unsupported("backend: none supports " + p.to_string() + " " + std::string(to_string(pass)) + " " +
                    std::string(to_string(dtype)) + reasons);
}

}  // namespace fftconv
