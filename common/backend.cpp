// PlanOptions parsing helpers, the option-key checks, the Registry and backend selection.
#include "common/backend.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
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

std::string beside_tune_cache(const std::string& tune_cache, std::string_view name) {
  if (tune_cache.empty() || tune_cache == "none") return {};
  return (std::filesystem::path(tune_cache).parent_path() / name).string();
}

std::string options_key(const PlanOptions& o) {
  std::ostringstream k;
  k << to_string(o.dtype) << "|tile=" << o.tile.to_string() << "|sizes=" << to_string(o.tile_sizes);
  for (int64_t c : o.tile_candidates) k << "," << c;
  k << "|limit=" << o.workspace_limit << "|basis=" << o.basis_h << "x" << o.basis_w << "|math=" << to_string(o.math)
    << "|threads=" << o.threads;
  for (const auto& [key, value] : o.extra) k << "|" << key << "=" << value;
  return k.str();
}

ProductMath parse_product_math(std::string_view s) {
  if (s == "auto") return ProductMath::automatic;
  if (s == "fp32") return ProductMath::fp32;
  if (s == "3xtf32") return ProductMath::tf32x3;
  if (s == "tf32") return ProductMath::tf32;
  throw InvalidArgument("math: expected auto, fp32, 3xtf32 or tf32, got '" + std::string(s) + "'");
}

std::string_view to_string(ProductMath m) {
  switch (m) {
    case ProductMath::automatic: return "auto";
    case ProductMath::fp32: return "fp32";
    case ProductMath::tf32x3: return "3xtf32";
    case ProductMath::tf32: return "tf32";
  }
  return "?";
}

std::string_view to_string(SizePolicy s) { return s == SizePolicy::pow2 ? "pow2" : "smooth"; }

int hardware_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }

void check_threads(int64_t threads) {
  if (threads < 0) throw InvalidArgument("threads: must be >= 0, got " + std::to_string(threads));
  if (threads > hardware_threads())
    throw InvalidArgument("threads: " + std::to_string(threads) + " exceeds the " + std::to_string(hardware_threads()) +
                          " hardware threads of this machine (0 = OpenMP's default)");
}

namespace {
bool accepts(const std::vector<std::string_view>& keys, std::string_view key) {
  for (std::string_view k : keys)
    if (k == key) return true;
  return false;
}

std::string key_list(const std::vector<std::string_view>& keys) {
  std::string out;
  for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out.empty() ? "none" : out;
}
}  // namespace

void check_option_keys(std::string_view backend, const std::map<std::string, std::string>& extra,
                       const std::vector<std::string_view>& accepted) {
  for (const auto& kv : extra)
    if (!accepts(accepted, kv.first))
      throw InvalidArgument(std::string(backend) + ": unknown option '" + kv.first + "' (accepted: " +
                            key_list(accepted) + ")");
}

void check_option_keys(const Backend& b, const PlanOptions& o) { check_option_keys(b.name(), o.extra, b.option_keys()); }

void check_option_keys(const std::vector<const Backend*>& backends, const std::map<std::string, std::string>& extra) {
  if (backends.size() == 1) return check_option_keys(backends.front()->name(), extra, backends.front()->option_keys());
  for (const auto& kv : extra) {
    bool known = false;
    for (const Backend* b : backends) known = known || accepts(b->option_keys(), kv.first);
    if (known) continue;
    std::string names, lists;
    for (const Backend* b : backends) {
      names += (names.empty() ? "" : ", ") + std::string(b->name());
      lists += (lists.empty() ? "" : "; ") + std::string(b->name()) + ": " + key_list(b->option_keys());
    }
    throw InvalidArgument((names.empty() ? "backends" : names) + ": unknown option '" + kv.first + "' (accepted: " + lists + ")");
  }
}

PlanOptions options_for(const Backend& b, PlanOptions o) {
  const std::vector<std::string_view> keys = b.option_keys();
  std::erase_if(o.extra, [&](const auto& kv) { return !accepts(keys, kv.first); });
  return o;
}

std::shared_ptr<const PreparedWeights> Plan::prepare_weights(const void*, void*) const {
  throw Unsupported("prepare_weights: this plan computes no weight spectra (" + describe().substr(0, 80) + ")");
}

void Plan::execute_with(const Args&, const PreparedWeights& prepared) const {
  throw Unsupported("execute_with: this plan cannot read prepared weights (" + prepared.key() + ")");
}

Support problem_support(const ConvProblem& p) {
  try {
    p.validate();
  } catch (const InvalidProblem& e) {
    return {false, e.what()};
  }
  return {};
}

Support dense_problem_support(const ConvProblem& p) {
  Support s = problem_support(p);
  if (!s.ok || p.is_dense()) return s;
  std::string what;
  auto add = [&](bool on, const std::string& text) {
    if (on) what += (what.empty() ? "" : ", ") + text;
  };
  add(p.sh != 1 || p.sw != 1, "stride " + std::to_string(p.sh) + "x" + std::to_string(p.sw));
  add(p.dh != 1 || p.dw != 1, "dilation " + std::to_string(p.dh) + "x" + std::to_string(p.dw));
  add(p.g != 1, std::to_string(p.g) + " groups");
  add(p.bias, "bias");
  add(p.padding == Padding::circular, "circular padding");
  return {false, "computes the dense problem only (stride 1, no dilation, groups or bias, zero or mirror "
                 "padding), not " + what};
}

bool is_depthwise(const ConvProblem& p) {
  return p.g > 1 && p.g == p.f && p.g == p.fo && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && !p.bias &&
         p.padding != Padding::circular;
}

bool is_pointwise(const ConvProblem& p) {
  return problem_support(p).ok && p.is_dense() && p.kh == 1 && p.kw == 1 && p.ph == 0 && p.pw == 0;
}

void require_fp32_products(const PlanOptions& o, std::string_view backend) {
  if (o.math != ProductMath::automatic && o.math != ProductMath::fp32)
    throw Unsupported(std::string(backend) + ": math=" + std::string(to_string(o.math)) +
                      " runs on GPU tensor cores only; this backend computes its products in fp32 (math=auto|fp32)");
}

void require_dense(const ConvProblem& p, std::string_view backend) {
  p.validate();
  if (Support s = dense_problem_support(p); !s.ok) throw Unsupported(std::string(backend) + ": " + s.reason);
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

void require_operands(const Args& a, const ConvProblem& p, Pass pass, std::string_view backend) {
  require_operands(a, pass, backend);
  if (p.bias && pass == Pass::fprop && !a.bias)
    throw InvalidArgument(std::string(backend) + ": bias is null but the problem has bias=1");
  if (p.bias && pass == Pass::accgrad && !a.grad_bias)
    throw InvalidArgument(std::string(backend) + ": grad_bias is null but accgrad of a problem with bias=1 writes it");
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
