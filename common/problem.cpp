// ConvProblem validation and the spec-string parser/printer.
#include "common/problem.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <vector>

#include "common/errors.hpp"

namespace fftconv {

std::string_view to_string(Pass p) {
  switch (p) {
    case Pass::fprop: return "fprop";
    case Pass::bprop: return "bprop";
    case Pass::accgrad: return "accgrad";
  }
  return "?";
}

std::string_view to_string(Padding p) {
  switch (p) {
    case Padding::zero: return "zero";
    case Padding::mirror: return "mirror";
    case Padding::circular: return "circular";
  }
  return "?";
}

Pass parse_pass(std::string_view s) {
  if (s == "fprop") return Pass::fprop;
  if (s == "bprop") return Pass::bprop;
  if (s == "accgrad" || s == "accGrad") return Pass::accgrad;
  throw InvalidArgument("pass: unknown value '" + std::string(s) + "' (expected fprop, bprop or accgrad)");
}

Padding parse_padding(std::string_view s) {
  if (s == "zero" || s == "zeros") return Padding::zero;
  if (s == "mirror" || s == "reflect") return Padding::mirror;
  if (s == "circular") return Padding::circular;
  throw InvalidProblem("pad: unknown value '" + std::string(s) + "' (expected zero, mirror or circular)");
}

// Note [wrapped padding]
// A circular convolution of size N reproduces the zero-padded linear one wherever every index that
// wraps around reads a zero on both sides. With the input at offset p of the basis and its kept
// window at offset 0 (fprop, accgrad) or p (bprop), the indices of a pass run over [-p, n + p) of
// the input's frame, so a wrapped index lands in the other side's padding when N >= n + p: the p
// zeros of one side serve both edges, and n + 2p is not needed. The basis still holds the output
// (n + 2p - k + 1, larger when p >= k) and the kernel. Mirror and circular padding have no zeros to
// share: the padded side. Same-padded large kernels gain most: RepLKNet's 31x31 at 56x56 needs 71
// per side (basis 72) instead of 86 (basis 90), 0.64x the samples.
namespace {
int64_t wrapped_side(int64_t n, int64_t p, int64_t k_extent, int64_t out, Padding mode) {
  if (mode != Padding::zero) return n + 2 * p;
  return std::max({n + p, out, k_extent});
}
}  // namespace
int64_t ConvProblem::wrapped_h() const {
  return wrapped_side(h, ph, kernel_extent_h(), padded_h() - kernel_extent_h() + 1, padding);
}
int64_t ConvProblem::wrapped_w() const {
  return wrapped_side(w, pw, kernel_extent_w(), padded_w() - kernel_extent_w() + 1, padding);
}

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw InvalidProblem(std::string(what) + ": size overflows 64-bit (" + std::to_string(a) + " * " +
                         std::to_string(b) + ")");
  return r;
}

int64_t ConvProblem::result_elems(Pass p) const {
  switch (p) {
    case Pass::fprop: return output_elems();
    case Pass::bprop: return input_elems();
    case Pass::accgrad: return weight_elems();
  }
  return 0;
}

double ConvProblem::madds() const {
  return double(S) * double(f / g) * double(fo) * double(kh) * double(kw) * double(out_h()) * double(out_w());
}

int64_t ConvProblem::reduction_length(Pass p) const {
  switch (p) {
    case Pass::fprop: return (f / g) * kh * kw;
    case Pass::bprop: return (fo / g) * kh * kw;
    case Pass::accgrad: return S * out_h() * out_w();
  }
  return 0;
}

namespace {
void require_positive(std::string_view name, int64_t v) {
  if (v < 1) throw InvalidProblem(std::string(name) + ": must be >= 1, got " + std::to_string(v));
}
}  // namespace

void ConvProblem::validate() const {
  require_positive("S", S);
  require_positive("f", f);
  require_positive("fo", fo);
  require_positive("h", h);
  require_positive("w", w);
  require_positive("kh", kh);
  require_positive("kw", kw);
  if (ph < 0) throw InvalidProblem("ph: must be >= 0, got " + std::to_string(ph));
  if (pw < 0) throw InvalidProblem("pw: must be >= 0, got " + std::to_string(pw));
  require_positive("sh", sh);
  require_positive("sw", sw);
  require_positive("dh", dh);
  require_positive("dw", dw);
  require_positive("g", g);
  // Bounds that keep every derived size, in elements and in bytes of complex<double>
  // frequency buffers, inside int64.
  constexpr int64_t kMaxDim = int64_t(1) << 31;
  for (auto [name, v] : {std::pair<const char*, int64_t>{"S", S}, {"f", f}, {"fo", fo}, {"h", h}, {"w", w},
                         {"kh", kh}, {"kw", kw}, {"ph", ph}, {"pw", pw}, {"sh", sh}, {"sw", sw}, {"dh", dh},
                         {"dw", dw}, {"g", g}})
    if (v >= kMaxDim) throw InvalidProblem(std::string(name) + ": too large (" + std::to_string(v) + ")");
  if (f % g != 0)
    throw InvalidProblem("g: " + std::to_string(g) + " groups do not divide f = " + std::to_string(f));
  if (fo % g != 0)
    throw InvalidProblem("g: " + std::to_string(g) + " groups do not divide fo = " + std::to_string(fo));
  if (kernel_extent_h() > padded_h()) {
    if (dh == 1)
      throw InvalidProblem("kh: kernel height " + std::to_string(kh) + " exceeds padded input height " +
                           std::to_string(padded_h()));
    throw InvalidProblem("dh: dilated kernel height " + std::to_string(kernel_extent_h()) + " (kh=" +
                         std::to_string(kh) + ", dh=" + std::to_string(dh) + ") exceeds padded input height " +
                         std::to_string(padded_h()));
  }
  if (kernel_extent_w() > padded_w()) {
    if (dw == 1)
      throw InvalidProblem("kw: kernel width " + std::to_string(kw) + " exceeds padded input width " +
                           std::to_string(padded_w()));
    throw InvalidProblem("dw: dilated kernel width " + std::to_string(kernel_extent_w()) + " (kw=" +
                         std::to_string(kw) + ", dw=" + std::to_string(dw) + ") exceeds padded input width " +
                         std::to_string(padded_w()));
  }
  if (padding == Padding::mirror) {
    if (ph >= h)
      throw InvalidProblem("ph: mirror padding " + std::to_string(ph) + " must be < h = " + std::to_string(h));
    if (pw >= w)
      throw InvalidProblem("pw: mirror padding " + std::to_string(pw) + " must be < w = " + std::to_string(w));
  }
  if (padding == Padding::circular) {  // PyTorch's limit: the padding wraps around at most once
    if (ph > h)
      throw InvalidProblem("ph: circular padding " + std::to_string(ph) + " must be <= h = " + std::to_string(h));
    if (pw > w)
      throw InvalidProblem("pw: circular padding " + std::to_string(pw) + " must be <= w = " + std::to_string(w));
  }
  // Every tensor (and its padded, fp64 complex frequency image) must have a byte size that fits in int64.
  constexpr int64_t kBytesMargin = 64;  // complex<double> plus a factor 4 of basis growth
  checked_mul(checked_mul(checked_mul(checked_mul(S, f, "input"), padded_h(), "input"), padded_w(), "input"),
              kBytesMargin, "input");
  checked_mul(checked_mul(checked_mul(checked_mul(S, fo, "output"), padded_h(), "output"), padded_w(), "output"),
              kBytesMargin, "output");
  checked_mul(checked_mul(checked_mul(checked_mul(fo, f, "weight"), padded_h(), "weight"), padded_w(), "weight"),
              kBytesMargin, "weight");
}

std::string ConvProblem::to_string() const {
  std::string s = "S=" + std::to_string(S) + ",f=" + std::to_string(f) + ",fo=" + std::to_string(fo) +
                  ",h=" + std::to_string(h) + ",w=" + std::to_string(w) + ",kh=" + std::to_string(kh) +
                  ",kw=" + std::to_string(kw) + ",ph=" + std::to_string(ph) + ",pw=" + std::to_string(pw) +
                  ",pad=" + std::string(fftconv::to_string(padding));
  // The options of torch.nn.functional.conv2d, printed only when they differ from the default so
  // that the spec of a dense problem is what it always was.
  if (sh != 1 || sw != 1) s += ",sh=" + std::to_string(sh) + ",sw=" + std::to_string(sw);
  if (dh != 1 || dw != 1) s += ",dh=" + std::to_string(dh) + ",dw=" + std::to_string(dw);
  if (g != 1) s += ",g=" + std::to_string(g);
  if (bias) s += ",bias=1";
  return s;
}

ConvProblem ConvProblem::preset(std::string_view name) {
  ConvProblem p;
  p.S = 128;
  if (name == "L1") { p.f = 3;   p.fo = 96;  p.h = p.w = 128; p.kh = p.kw = 11; }
  else if (name == "L2") { p.f = 64;  p.fo = 64;  p.h = p.w = 64;  p.kh = p.kw = 9; }
  else if (name == "L3") { p.f = 128; p.fo = 128; p.h = p.w = 32;  p.kh = p.kw = 9; }
  else if (name == "L4") { p.f = 128; p.fo = 128; p.h = p.w = 16;  p.kh = p.kw = 7; }
  else if (name == "L5") { p.f = 384; p.fo = 384; p.h = p.w = 13;  p.kh = p.kw = 3; }
  else throw InvalidProblem("problem: unknown preset '" + std::string(name) + "' (expected L1..L5)");
  return p;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int64_t parse_int(std::string_view key, std::string_view v) {
  int64_t out = 0;
  if (v.empty()) throw InvalidProblem(std::string(key) + ": missing value");
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec == std::errc::result_out_of_range)
    throw InvalidProblem(std::string(key) + ": value '" + std::string(v) + "' overflows 64-bit");
  if (ec != std::errc() || ptr != v.data() + v.size())
    throw InvalidProblem(std::string(key) + ": expected an integer, got '" + std::string(v) + "'");
  return out;
}
}  // namespace

ConvProblem ConvProblem::parse(std::string_view spec) {
  ConvProblem p;
  std::vector<std::string_view> parts;
  std::string_view rest = spec;
  while (true) {
    auto pos = rest.find(',');
    parts.push_back(trim(rest.substr(0, pos)));
    if (pos == std::string_view::npos) break;
    rest.remove_prefix(pos + 1);
  }
  if (parts.size() == 1 && parts[0].empty()) throw InvalidProblem("problem: empty spec string");
  bool first = true;
  // Which key set each field (h, w, kh, kw, ph, pw, S, f, fo, pad, sh, sw, dh, dw, g, bias): a field set twice, by one key
  // repeated (n=8,n=9) or by two that overlap (n=8,h=9), is an error rather than "the last wins".
  std::string_view set_by[16];
  auto claim = [&](std::string_view key, std::initializer_list<int> fields) {
    static constexpr const char* kField[] = {"h", "w", "kh", "kw", "ph", "pw", "S", "f", "fo", "pad",
                                                 "sh", "sw", "dh", "dw", "g", "bias"};
    for (int f : fields) {
      if (set_by[f].empty()) continue;
      if (set_by[f] == key) throw InvalidProblem("problem: key '" + std::string(key) + "' appears twice in '" +
                                                 std::string(spec) + "'");
      throw InvalidProblem("problem: key '" + std::string(key) + "' sets " + kField[f] + ", already set by '" +
                           std::string(set_by[f]) + "' in '" + std::string(spec) + "'");
    }
    for (int f : fields) set_by[f] = key;
  };
  for (std::string_view part : parts) {
    if (part.empty()) throw InvalidProblem("problem: empty field in spec '" + std::string(spec) + "'");
    auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      if (!first)
        throw InvalidProblem("problem: field '" + std::string(part) + "' needs key=value (presets come first)");
      p = preset(part);
      first = false;
      continue;
    }
    first = false;
    std::string_view key = trim(part.substr(0, eq)), val = trim(part.substr(eq + 1));
    if (key == "pad") {
      claim(key, {9});
      p.padding = parse_padding(val);
      continue;
    }
    int64_t v = parse_int(key, val);
    if (key == "bias") {
      claim(key, {15});
      if (v != 0 && v != 1) throw InvalidProblem("bias: expected 0 or 1, got '" + std::string(val) + "'");
      p.bias = v == 1;
      continue;
    }
    if (key == "S") claim(key, {6}), p.S = v;
    else if (key == "f") claim(key, {7}), p.f = v;
    else if (key == "fo") claim(key, {8}), p.fo = v;
    else if (key == "h") claim(key, {0}), p.h = v;
    else if (key == "w") claim(key, {1}), p.w = v;
    else if (key == "kh") claim(key, {2}), p.kh = v;
    else if (key == "kw") claim(key, {3}), p.kw = v;
    else if (key == "ph") claim(key, {4}), p.ph = v;
    else if (key == "pw") claim(key, {5}), p.pw = v;
    else if (key == "n") claim(key, {0, 1}), p.h = p.w = v;
    else if (key == "k") claim(key, {2, 3}), p.kh = p.kw = v;
    else if (key == "p") claim(key, {4, 5}), p.ph = p.pw = v;
    else if (key == "sh") claim(key, {10}), p.sh = v;
    else if (key == "sw") claim(key, {11}), p.sw = v;
    else if (key == "s") claim(key, {10, 11}), p.sh = p.sw = v;
    else if (key == "dh") claim(key, {12}), p.dh = v;
    else if (key == "dw") claim(key, {13}), p.dw = v;
    else if (key == "d") claim(key, {12, 13}), p.dh = p.dw = v;
    else if (key == "g") claim(key, {14}), p.g = v;
    else throw InvalidProblem("problem: unknown key '" + std::string(key) +
                              "' (expected S, f, fo, h, w, kh, kw, ph, pw, n, k, p, pad, sh, sw, s, dh, dw, d, g, bias)");
  }
  p.validate();
  return p;
}

}  // namespace fftconv
