// ConvProblem: the sizes of one convolutional layer, its validation, and the spec-string format
// `S=128,f=64,fo=64,h=64,w=64,kh=9,kw=9,ph=0,pw=0,pad=zero` (presets L1..L5 with overrides).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace fftconv {

// The three passes of a layer: fprop (output), bprop (gradInput), accgrad (gradWeight).
enum class Pass { fprop, bprop, accgrad };
// Input padding: zeros, or mirror (= PyTorch 'reflect': index -1 reads index 1).
enum class Padding { zero, mirror };

std::string_view to_string(Pass p);
std::string_view to_string(Padding p);
Pass parse_pass(std::string_view s);        // "fprop" | "bprop" | "accgrad"; throws InvalidArgument
Padding parse_padding(std::string_view s);  // "zero" | "mirror" (also "zeros", "reflect")

// Tensors (NCHW / BDHW, row-major):
//   input       S×f×h×w          weight      fo×f×kh×kw
//   output      S×fo×out_h×out_w (gradOutput has this shape)
//   gradInput   shape of input   gradWeight  shape of weight
// Forward is cross-correlation over the padded input: out_h = h + 2*ph - kh + 1.
struct ConvProblem {
  int64_t S = 1, f = 1, fo = 1, h = 1, w = 1, kh = 1, kw = 1, ph = 0, pw = 0;
  Padding padding = Padding::zero;

  int64_t padded_h() const { return h + 2 * ph; }
  int64_t padded_w() const { return w + 2 * pw; }
  int64_t out_h() const { return padded_h() - kh + 1; }
  int64_t out_w() const { return padded_w() - kw + 1; }

  // Element counts (validated problems never overflow these).
  int64_t input_elems() const { return S * f * h * w; }
  int64_t weight_elems() const { return fo * f * kh * kw; }
  int64_t output_elems() const { return S * fo * out_h() * out_w(); }
  // The tensor a pass writes, and the two it reads.
  int64_t result_elems(Pass p) const;
  // Multiply-adds of the time-domain algorithm: S*f*fo*kh*kw*out_h*out_w (the same for every pass).
  double madds() const;
  // Length of the reduction behind one result element (f*kh*kw, fo*kh*kw, S*out_h*out_w).
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
