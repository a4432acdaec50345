// The geometry of the lowering (Note [lowering] in lowering.hpp).
#include "common/lowering.hpp"

#include <algorithm>

#include "common/errors.hpp"

namespace fftconv {

std::string_view to_string(StrideLowering s) {
  switch (s) {
    case StrideLowering::none: return "none";
    case StrideLowering::polyphase: return "polyphase";
    case StrideLowering::subsample: return "subsample";
  }
  return "?";
}

StrideLowering parse_stride_lowering(std::string_view s) {
  if (s == "polyphase") return StrideLowering::polyphase;
  if (s == "subsample") return StrideLowering::subsample;
  throw InvalidArgument("stride: expected auto, polyphase or subsample, got '" + std::string(s) + "'");
}

LoweringMap make_lowering(const ConvProblem& p, StrideLowering stride, bool native_groups) {
  p.validate();
  LoweringMap m;
  m.outer = p;
  m.stride = (p.sh == 1 && p.sw == 1) ? StrideLowering::none : stride;
  if (m.stride == StrideLowering::none && (p.sh != 1 || p.sw != 1))
    throw InvalidArgument("stride: a strided problem needs polyphase or subsample");
  m.explicit_pad = p.padding == Padding::circular || m.stride == StrideLowering::polyphase;
  m.oh = p.out_h(), m.ow = p.out_w(), m.hp = p.padded_h(), m.wp = p.padded_w();
  m.weight_channels = p.f / p.g;
  m.runs = (p.g == 1 || native_groups) ? 1 : p.g;
  m.f_run = p.f / m.runs;
  const int64_t eh = p.kernel_extent_h(), ew = p.kernel_extent_w();

  ConvProblem& I = m.inner;
  I.S = p.S;
  I.fo = p.fo / m.runs;
  I.g = native_groups ? p.g : 1;
  I.padding = m.explicit_pad ? Padding::zero : p.padding;
  I.ph = m.explicit_pad ? 0 : p.ph;
  I.pw = m.explicit_pad ? 0 : p.pw;
  if (m.stride == StrideLowering::polyphase) {
    m.step_h = p.sh, m.step_w = p.sw;
    m.phases_h = std::min(p.sh, eh), m.phases_w = std::min(p.sw, ew);
    I.kh = (eh + p.sh - 1) / p.sh, I.kw = (ew + p.sw - 1) / p.sw;
    I.h = m.oh + I.kh - 1, I.w = m.ow + I.kw - 1;
  } else {
    if (m.stride == StrideLowering::subsample) m.sub_h = p.sh, m.sub_w = p.sw;
    I.kh = eh, I.kw = ew;
    I.h = m.explicit_pad ? m.hp : p.h;
    I.w = m.explicit_pad ? m.wp : p.w;
  }
  I.f = m.f_run * m.phases_h * m.phases_w;
  I.validate();
  m.ohi = I.out_h(), m.owi = I.out_w();
  m.inner_weight_channels = I.f / I.g;
  return m;
}

int64_t step_elems(const LoweringMap& m, LoweringStep step) {
  switch (step) {
    case LoweringStep::input: return m.input_elems();
    case LoweringStep::weight: return m.weight_elems();
    case LoweringStep::output: return m.outer.output_elems();
    case LoweringStep::grad_output: return m.output_elems();
    case LoweringStep::input_grad: return m.outer.input_elems();
    case LoweringStep::weight_grad: return m.outer.weight_elems();
  }
  return 0;
}

std::string LoweringMap::summary() const {
  const ConvProblem& P = outer;
  auto x = [](int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); };
  std::string s = "lowered to the dense problem " + inner.to_string() + ":";
  std::string sep = " ";
  auto add = [&](const std::string& t) { s += sep + t; sep = "; "; };
  if (P.padding == Padding::circular) add("circular padding as a wrap-padded copy of the input");
  if (stride == StrideLowering::polyphase)
    add("stride " + x(P.sh, P.sw) + " by polyphase (" + std::to_string(phases_h * phases_w) + " phases: " +
        std::to_string(f_run) + " -> " + std::to_string(inner.f) + " input channels per run, kernel extent " +
        x(P.kernel_extent_h(), P.kernel_extent_w()) + " -> " + x(inner.kh, inner.kw) + ", no output discarded)");
  if (stride == StrideLowering::subsample)
    add("stride " + x(P.sh, P.sw) + " by computing the stride-1 output " + x(ohi, owi) + " and keeping every " +
        x(P.sh, P.sw) + "th element");
  if (P.dh != 1 || P.dw != 1)
    add("dilation " + x(P.dh, P.dw) + " as the dilated " + x(P.kernel_extent_h(), P.kernel_extent_w()) + " kernel");
  if (P.g != 1)
    add(runs == 1 ? std::to_string(P.g) + " groups computed by the backend itself"
                  : std::to_string(P.g) + " groups as " + std::to_string(runs) + " runs of one plan on the group's channels");
  if (P.bias) add("bias added to the output, gradBias reduced from gradOutput");
  return s;
}

}  // namespace fftconv
