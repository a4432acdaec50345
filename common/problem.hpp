// ConvProblem: the sizes of one convolutional layer, its validation, and the spec-string format
// `S=128,f=64,fo=64,h=64,w=64,kh=9,kw=9,ph=0,pw=0,pad=zero` (presets L1..L5 with overrides), with
// torch.nn.functional.conv2d's options after it when they differ from the default: `sh=2,sw=2`
// (stride), `dh=2,dw=2` (dilation), `g=4` (groups), `bias=1`, `pad=circular`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace fftconv {

// The three passes of a layer: fprop (output), bprop (gradInput), accgrad (gradWeight).
enum class Pass { fprop, bprop, accgrad };
// Input padding: zeros, mirror (= PyTorch 'reflect': index -1 reads index 1), or circular (periodic:
// index -1 reads index n-1, PyTorch 'circular').
enum class Padding { zero, mirror, circular };

std::string_view to_string(Pass p);
std::string_view to_string(Padding p);
Pass parse_pass(std::string_view s);        // "fprop" | "bprop" | "accgrad"; throws InvalidArgument
Padding parse_padding(std::string_view s);  // "zero" | "mirror" | "circular" (also "zeros", "reflect")

// Tensors (NCHW / BDHW, row-major), as torch.nn.functional.conv2d:
//   input       S×f×h×w          weight      fo×(f/g)×kh×kw      bias  fo (when bias)
//   output      S×fo×out_h×out_w (gradOutput has this shape)
//   gradInput   shape of input   gradWeight  shape of weight     gradBias  fo
// Forward is cross-correlation over the padded input with stride (sh, sw), dilation (dh, dw) and
// g groups (output channel o reads input channels [o/(fo/g)·f/g, +f/g)):
//   out[s][o][y][x] = bias[o] + sum_{c,u,v} xpad[s][c][y·sh + u·dh][x·sw + v·dw] · w[o][c][u][v]
//   out_h = (h + 2·ph - dh·(kh-1) - 1) / sh + 1.
// The dense problem (sh = sw = dh = dw = g = 1, no bias, zero or mirror padding) is what the FFT
// backends compute; api/lowering.hpp rewrites every other problem into it.
struct ConvProblem {
  int64_t S = 1, f = 1, fo = 1, h = 1, w = 1, kh = 1, kw = 1, ph = 0, pw = 0;
  Padding padding = Padding::zero;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, g = 1;  // stride, dilation, groups
  bool bias = false;                              // fprop adds bias[fo]; accgrad also writes gradBias

  int64_t padded_h() const { return h + 2 * ph; }
  int64_t padded_w() const { return w + 2 * pw; }
  // Extent of the dilated kernel: dh·(kh-1) + 1.
  int64_t kernel_extent_h() const { return dh * (kh - 1) + 1; }
  int64_t kernel_extent_w() const { return dw * (kw - 1) + 1; }
  int64_t out_h() const { return (padded_h() - kernel_extent_h()) / sh + 1; }
  int64_t out_w() const { return (padded_w() - kernel_extent_w()) / sw + 1; }
  // The smallest circular basis side that computes the stride-1 passes exactly (Note [wrapped padding]):
  // zero padding max(h + ph, out_h, kh extent), other paddings the padded side.
  int64_t wrapped_h() const;
  int64_t wrapped_w() const;
  // Stride 1, no dilation, one group, no bias, zero or mirror padding.
  bool is_dense() const {
    return sh == 1 && sw == 1 && dh == 1 && dw == 1 && g == 1 && !bias && padding != Padding::circular;
  }

  // Element counts (validated problems never overflow these).
  int64_t input_elems() const { return S * f * h * w; }
  int64_t weight_elems() const { return fo * (f / g) * kh * kw; }
  int64_t output_elems() const { return S * fo * out_h() * out_w(); }
  // The tensor a pass writes, and the two it reads.
  int64_t result_elems(Pass p) const;
  // Multiply-adds of the time-domain algorithm: S*(f/g)*fo*kh*kw*out_h*out_w (the same for every pass).
  double madds() const;
  // Length of the reduction behind one result element ((f/g)*kh*kw, (fo/g)*kh*kw, S*out_h*out_w).
  int64_t reduction_length(Pass p) const;

  // Throws InvalidProblem naming the first bad field and its value.
  void validate() const;
  // The canonical spec string; parse(to_string()) == *this.
  std::string to_string() const;
  // Parses a spec string (see file comment); the result is validated.
  static ConvProblem parse(std::string_view spec);
  // Paper Table 4 layers L1..L5 at S=128, or throws InvalidProblem.
  static ConvProblem preset(std::string_view name);

  bool operator==(const ConvProblem&) const = default;
};

// a*b with overflow check; throws InvalidProblem naming `what` on overflow.
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);

}  // namespace fftconv
