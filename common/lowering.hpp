// The exact rewrite of a conv2d problem with stride, dilation, groups, bias or circular padding into
// runs of the dense stride-1 problem the FFT backends compute (Note [lowering]): its geometry, and the
// per-element maps of its data movement, shared by the host (api/lowering.cpp) and the device
// (gpu/tiles/lowering_kernels.cu). constexpr so that device code uses them (--expt-relaxed-constexpr).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/backend.hpp"
#include "common/padding.hpp"
#include "common/problem.hpp"

namespace fftconv {

// Note [lowering]
// A problem P (input x, weight w) becomes `runs` executions of one dense problem I (inputs x', w'):
//  - padding: when the gather pads (circular padding, or polyphase), x' holds the padded input and I
//    has p = 0; bprop returns the adjoint (every padded position adds onto its source element);
//  - dilation: w' holds the dilated kernel (dh·(kh-1)+1 rows, zeros between the taps); accgrad reads
//    the taps back;
//  - stride by polyphase (space-to-depth): x'[s][(c,a,b)][i][j] = xpad[s][c][i·sh+a][j·sw+b] and
//    w'[o][(c,a,b)][u][v] = wd[o][c][u·sh+a][v·sw+b] (0 outside), with phases a < min(sh, kernel
//    extent): a stride-1 problem with f·phases input channels and a ceil(extent/sh) kernel whose
//    out_h·out_w outputs are exactly P's, so no output is computed and then discarded. I's input has
//    out_h + kh' - 1 rows: rows past the padded input meet only zero taps;
//  - stride by subsampling: I is the stride-1 problem, P's output is every sh-th row of I's (bprop
//    and accgrad spread gradOutput onto I's grid with zeros between);
//  - groups: I has the channels of one group and runs once per group on the group's slices, in
//    group-major layouts x'[group][s][...] (weight and gradWeight rows of a group are contiguous
//    already); a backend that computes groups itself gets them in I (native groups, one run).
//    Per-group runs keep the multiply-adds of P; a block-diagonal dense weight would multiply
//    them (and the weight's memory) by g, 512x for a depthwise 512-channel layer;
//  - bias: added to the output by the output map; gradBias is gradOutput summed per channel.
// Every map is a gather (each destination element reads its sources), so the device kernels need
// no atomics and the adjoint maps are exact transposes of the forward ones.

enum class StrideLowering { none, polyphase, subsample };
std::string_view to_string(StrideLowering s);
StrideLowering parse_stride_lowering(std::string_view s);  // "polyphase" | "subsample"; InvalidArgument

struct LoweringMap {
  ConvProblem outer, inner;         // P and I (I is dense, or dense with native groups)
  StrideLowering stride = StrideLowering::none;
  bool explicit_pad = false;        // x' holds the padded input (I has p = 0)
  int64_t step_h = 1, step_w = 1;   // rows/columns of xpad between neighbours of x' (sh, sw for polyphase)
  int64_t phases_h = 1, phases_w = 1;
  int64_t sub_h = 1, sub_w = 1;     // subsampling of I's output (sh, sw for subsample)
  int64_t runs = 1;                 // executions of I (g when groups are run one by one)
  int64_t f_run = 1;                // P's input channels per run (f / runs)
  // Sizes as plain data for device code (ConvProblem's functions are host functions).
  int64_t oh = 1, ow = 1, hp = 1, wp = 1, weight_channels = 1;  // P: output, padded input, f/g
  int64_t ohi = 1, owi = 1, inner_weight_channels = 1;          // I: output, fi/gi

  // Elements of x' (all runs), w', and I's output / gradOutput (all runs).
  int64_t input_elems() const { return runs * inner.S * inner.f * inner.h * inner.w; }
  int64_t weight_elems() const { return outer.fo * inner_weight_channels * inner.kh * inner.kw; }
  int64_t output_elems() const { return runs * inner.S * inner.fo * ohi * owi; }
  // Offsets of run r's slices in x', w' and I's output.
  int64_t input_run(int64_t r) const { return r * inner.S * inner.f * inner.h * inner.w; }
  int64_t weight_run(int64_t r) const { return r * inner.fo * inner_weight_channels * inner.kh * inner.kw; }
  int64_t output_run(int64_t r) const { return r * inner.S * inner.fo * ohi * owi; }
  // Whether a map is the identity (the lowering then hands the user's tensor to I).
  bool input_identity() const { return !explicit_pad && phases_h * phases_w == 1 && (runs == 1 || outer.S == 1); }
  bool weight_identity() const { return phases_h * phases_w == 1 && outer.dh == 1 && outer.dw == 1; }
  bool output_identity() const { return sub_h == 1 && sub_w == 1 && (runs == 1 || outer.S == 1); }
  // What the rewrite does, for Plan::describe().
  std::string summary() const;
};

// The map of p with the given stride treatment (none is taken when the stride is 1) and groups run
// natively by I (native_groups) or one by one. Throws InvalidProblem for an invalid p.
LoweringMap make_lowering(const ConvProblem& p, StrideLowering stride, bool native_groups);

// The data movements of the lowering. src/dst are the tensors named; every map writes all of dst.
enum class LoweringStep {
  input,        // x (S×f×h×w)          -> x'  (input_elems)
  weight,       // w (fo×f/g×kh×kw)     -> w'  (weight_elems)
  output,       // I's output           -> output (S×fo×oh×ow), plus bias when given
  grad_output,  // gradOutput           -> I's gradOutput (output_elems)
  input_grad,   // I's gradInput (x')   -> gradInput (S×f×h×w)
  weight_grad,  // I's gradWeight (w')  -> gradWeight (fo×f/g×kh×kw)
};
// Elements the step writes.
int64_t step_elems(const LoweringMap& m, LoweringStep step);

// The flat destination index of the input and input_grad maps split into its coordinates by
// runtime sizes. Div is PlainDiv (int64 division: the host loops) or the device kernels' 32-bit
// multiply-high division (IndexDiv, gpu/runtime/fast_div.hpp; the GPU has no 64-bit integer divide
// and runs it as a software routine); split() takes the last digit off a mixed-radix index.
struct PlainDiv {
  int64_t d = 1;
  constexpr int64_t div(int64_t x) const { return x / d; }
};
template <class Div>
constexpr int64_t split(int64_t& x, const Div& by) {
  const int64_t q = by.div(x), r = x - q * by.d;
  x = q;
  return r;
}
template <class Div>
struct LoweringDivisors {
  Div in_w, in_h, phases_w, phases_h, f_run, S;  // x' as [runs][S][f_run][phases_h][phases_w][I.h][I.w]
  Div w, h, f, step_h, step_w;                  // P's input as [S][f][h][w], f as [runs][f_run]
};
template <class Div, class Make>
constexpr LoweringDivisors<Div> lowering_divisors(const LoweringMap& m, Make make) {
  return {make(m.inner.w), make(m.inner.h), make(m.phases_w), make(m.phases_h), make(m.f_run), make(m.outer.S),
          make(m.outer.w), make(m.outer.h), make(m.outer.f), make(m.step_h), make(m.step_w)};
}
inline LoweringDivisors<PlainDiv> plain_divisors(const LoweringMap& m) {
  return lowering_divisors<PlainDiv>(m, [](int64_t d) { return PlainDiv{d}; });
}

// One element of each map. T is float or double; e indexes the destination.
template <class T, class Div>
constexpr T lowered_input(const LoweringMap& m, const LoweringDivisors<Div>& d, const T* x, int64_t e) {
  const ConvProblem& P = m.outer;
  const int64_t j = split(e, d.in_w), i = split(e, d.in_h), b = split(e, d.phases_w), a = split(e, d.phases_h);
  const int64_t cl = split(e, d.f_run), s = split(e, d.S), run = e;
  const int64_t c = run * m.f_run + cl;
  int64_t r = i * m.step_h + a, col = j * m.step_w + b;
  if (m.explicit_pad) {
    if (r >= m.hp || col >= m.wp) return T(0);
    r = padded_source(r, P.h, P.ph, P.padding);
    col = padded_source(col, P.w, P.pw, P.padding);
    if (r < 0 || col < 0) return T(0);
  }
  return x[((s * P.f + c) * P.h + r) * P.w + col];
}

template <class T>
constexpr T lowered_weight(const LoweringMap& m, const T* w, int64_t e) {
  const ConvProblem& I = m.inner;
  const ConvProblem& P = m.outer;
  const int64_t vi = e % I.kw, ui = (e / I.kw) % I.kh, ci = (e / (I.kw * I.kh)) % m.inner_weight_channels;
  const int64_t o = e / (I.kw * I.kh * m.inner_weight_channels);
  const int64_t b = ci % m.phases_w, a = (ci / m.phases_w) % m.phases_h, cl = ci / (m.phases_w * m.phases_h);
  const int64_t th = ui * m.step_h + a, tw = vi * m.step_w + b;  // taps of the dilated kernel
  if (th % P.dh != 0 || tw % P.dw != 0) return T(0);
  const int64_t u = th / P.dh, v = tw / P.dw;
  if (u >= P.kh || v >= P.kw) return T(0);
  return w[((o * m.weight_channels + cl) * P.kh + u) * P.kw + v];
}

template <class T>
constexpr T lowered_output(const LoweringMap& m, const T* y, const T* bias, int64_t e) {
  const int64_t foi = m.inner.fo;
  const int64_t x = e % m.ow, yy = (e / m.ow) % m.oh, o = (e / (m.ow * m.oh)) % m.outer.fo;
  const int64_t s = e / (m.ow * m.oh * m.outer.fo), run = o / foi, ol = o % foi;
  const T v = y[(((run * m.outer.S + s) * foi + ol) * m.ohi + yy * m.sub_h) * m.owi + x * m.sub_w];
  return bias ? T(v + bias[o]) : v;
}

template <class T>
constexpr T lowered_grad_output(const LoweringMap& m, const T* g, int64_t e) {
  const int64_t foi = m.inner.fo;
  const int64_t X = e % m.owi, Y = (e / m.owi) % m.ohi, ol = (e / (m.owi * m.ohi)) % foi;
  const int64_t s = (e / (m.owi * m.ohi * foi)) % m.outer.S, run = e / (m.owi * m.ohi * foi * m.outer.S);
  if (Y % m.sub_h != 0 || X % m.sub_w != 0) return T(0);
  const int64_t y = Y / m.sub_h, x = X / m.sub_w;
  if (y >= m.oh || x >= m.ow) return T(0);
  return g[((s * m.outer.fo + run * foi + ol) * m.oh + y) * m.ow + x];
}

// The adjoint of lowered_input: gradInput element e sums the elements of I's gradInput that read it.
template <class T, class Div>
constexpr T lowered_input_grad(const LoweringMap& m, const LoweringDivisors<Div>& d, const T* gx, int64_t e) {
  const ConvProblem& I = m.inner;
  const ConvProblem& P = m.outer;
  const int64_t col = split(e, d.w), r = split(e, d.h), c = split(e, d.f), s = e;
  int64_t run = c;
  const int64_t cl = split(run, d.f_run);
  const T* base = gx + (run * P.S + s) * I.f * I.h * I.w;
  if (!m.explicit_pad) return base[(cl * I.h + r) * I.w + col];
  T acc = T(0);
  for_each_padded_position(r, P.h, P.ph, P.padding, [&](int64_t i) {
    const int64_t a = split(i, d.step_h);
    if (a >= m.phases_h || i >= I.h) return;
    for_each_padded_position(col, P.w, P.pw, P.padding, [&](int64_t j) {
      const int64_t b = split(j, d.step_w);
      if (b >= m.phases_w || j >= I.w) return;
      acc += base[(((cl * m.phases_h + a) * m.phases_w + b) * I.h + i) * I.w + j];
    });
  });
  return acc;
}

// The adjoint of lowered_weight restricted to the taps: gradWeight element e reads its tap of I's.
template <class T>
constexpr T lowered_weight_grad(const LoweringMap& m, const T* gw, int64_t e) {
  const ConvProblem& I = m.inner;
  const ConvProblem& P = m.outer;
  const int64_t v = e % P.kw, u = (e / P.kw) % P.kh, cl = (e / (P.kw * P.kh)) % m.weight_channels;
  const int64_t o = e / (P.kw * P.kh * m.weight_channels);
  const int64_t th = u * P.dh, tw = v * P.dw;
  const int64_t a = th % m.step_h, ui = th / m.step_h, b = tw % m.step_w, vi = tw / m.step_w;
  const int64_t ci = (cl * m.phases_h + a) * m.phases_w + b;
  return gw[((o * m.inner_weight_channels + ci) * I.kh + ui) * I.kw + vi];
}

// The movement of a lowered plan's tensors where its backend lives (host loops, or device kernels:
// gpu/tiles/lowering_kernels.hpp), with scratch buffers kept across executions.
class LoweringMover {
 public:
  virtual ~LoweringMover() = default;
  // Scratch buffer `slot` (0..5) of at least `bytes` bytes; grows only, contents not kept on growth.
  virtual void* scratch(int slot, std::size_t bytes) = 0;
  // Around one execution on `stream` (the device mover orders executions that share its scratch).
  virtual void begin(void* stream) { (void)stream; }
  virtual void end(void* stream) { (void)stream; }
  // dst = the step's map of src (bias: the output step's bias, or nullptr).
  virtual void step(LoweringStep step, const LoweringMap& m, const void* src, const void* bias, void* dst, DType d,
                    void* stream) = 0;
  // grad_bias[o] = sum over s, y, x of grad_output[s][o][y][x] (P's gradOutput).
  virtual void grad_bias(const LoweringMap& m, const void* grad_output, void* grad_bias, DType d, void* stream) = 0;
};

}  // namespace fftconv
