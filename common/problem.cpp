// ConvProblem validation and the spec-string parser/printer.
#include "common/problem.hpp"

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

std::string_view to_string(Padding p) { return p == Padding::zero ? "zero" : "mirror"; }

Pass parse_pass(std::string_view s) {
  if (s == "fprop") return Pass::fprop;
  if (s == "bprop") return Pass::bprop;
  if (s == "accgrad" || s == "accGrad") return Pass::accgrad;
  throw InvalidArgument("pass: unknown value '" + std::string(s) + "' (expected fprop, bprop or accgrad)");
}

Padding parse_padding(std::string_view s) {
  if (s == "zero" || s == "zeros") return Padding::zero;
  if (s == "mirror" || s == "reflect") return Padding::mirror;
  throw InvalidProblem("pad: unknown value '" + std::string(s) + "' (expected zero or mirror)");
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
  return double(S) * double(f) * double(fo) * double(kh) * double(kw) * double(out_h()) * double(out_w());
}

int64_t ConvProblem::reduction_length(Pass p) const {
  switch (p) {
    case Pass::fprop: return f * kh * kw;
    case Pass::bprop: return fo * kh * kw;
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
  // Bounds that keep every derived size, in elements and in bytes of complex<double>
  // frequency buffers, inside int64.
  constexpr int64_t kMaxDim = int64_t(1) << 31;
  for (auto [name, v] : {std::pair<const char*, int64_t>{"S", S}, {"f", f}, {"fo", fo}, {"h", h}, {"w", w},
                         {"kh", kh}, {"kw", kw}, {"ph", ph}, {"pw", pw}})
    if (v >= kMaxDim) throw InvalidProblem(std::string(name) + ": too large (" + std::to_string(v) + ")");
  if (kh > padded_h())
    throw InvalidProblem("kh: kernel height " + std::to_string(kh) + " exceeds padded input height " +
                         std::to_string(padded_h()));
  if (kw > padded_w())
    throw InvalidProblem("kw: kernel width " + std::to_string(kw) + " exceeds padded input width " +
                         std::to_string(padded_w()));
  if (padding == Padding::mirror) {
    if (ph >= h)
      throw InvalidProblem("ph: mirror padding " + std::to_string(ph) + " must be < h = " + std::to_string(h));
    if (pw >= w)
      throw InvalidProblem("pw: mirror padding " + std::to_string(pw) + " must be < w = " + std::to_string(w));
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
  // Which key set each field (h, w, kh, kw, ph, pw, S, f, fo, pad): a field set twice, by one key
  // repeated (n=8,n=9) or by two that overlap (n=8,h=9), is an error rather than "the last wins".
  std::string_view set_by[10];
  auto claim = [&](std::string_view key, std::initializer_list<int> fields) {
    static constexpr const char* kField[] = {"h", "w", "kh", "kw", "ph", "pw", "S", "f", "fo", "pad"};
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
    else throw InvalidProblem("problem: unknown key '" + std::string(key) +
                              "' (expected S, f, fo, h, w, kh, kw, ph, pw, n, k, p, pad)");
  }
  p.validate();
  return p;
}

}  // namespace fftconv
