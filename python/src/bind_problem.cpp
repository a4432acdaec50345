// fftconv.Problem: the C++ ConvProblem as an immutable Python value, built from a spec string
// ("S=8,f=3,fo=16,n=32,k=5,p=2,pad=mirror,s=2,g=4,bias=1", presets "L1".."L5") and/or keyword fields.
#include <optional>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include "bindings.hpp"
#include "common/errors.hpp"

namespace fftconv::py {

namespace {

using Opt = std::optional<int64_t>;

nb::tuple shape_tuple(const Shape4& s) { return nb::make_tuple(s[0], s[1], s[2], s[3]); }

void init_problem(ConvProblem* self, std::optional<std::string> spec, Opt S, Opt f, Opt fo, Opt h, Opt w,
                  Opt kh, Opt kw, Opt ph, Opt pw, Opt n, Opt k, Opt p, std::optional<std::string> padding, Opt sh,
                  Opt sw, Opt s, Opt dh, Opt dw, Opt d, Opt g, std::optional<bool> bias) {
  ConvProblem q = spec ? ConvProblem::parse(*spec) : ConvProblem{};
  // Shorthands first, so that explicit fields win: Problem(n=32, w=16) is 32x16.
  if (n) q.h = q.w = *n;
  if (k) q.kh = q.kw = *k;
  if (p) q.ph = q.pw = *p;
  if (S) q.S = *S;
  if (f) q.f = *f;
  if (fo) q.fo = *fo;
  if (h) q.h = *h;
  if (w) q.w = *w;
  if (kh) q.kh = *kh;
  if (kw) q.kw = *kw;
  if (ph) q.ph = *ph;
  if (pw) q.pw = *pw;
  if (padding) q.padding = parse_padding(*padding);
  if (s) q.sh = q.sw = *s;
  if (d) q.dh = q.dw = *d;
  if (sh) q.sh = *sh;
  if (sw) q.sw = *sw;
  if (dh) q.dh = *dh;
  if (dw) q.dw = *dw;
  if (g) q.g = *g;
  if (bias) q.bias = *bias;
  q.validate();
  new (self) ConvProblem(q);
}

}  // namespace

void bind_problem(nb::module_& m) {
  nb::class_<ConvProblem>(m, "Problem",
                          "The sizes of one convolutional layer (NCHW), as torch.nn.functional.conv2d: input\n"
                          "S×f×h×w, weight fo×(f/g)×kh×kw, output S×fo×out_h×out_w with\n"
                          "out_h = (h + 2*ph - dh*(kh-1) - 1) // sh + 1; stride sh, sw; dilation dh, dw; g groups;\n"
                          "bias; padding 'zero', 'mirror' (= PyTorch 'reflect') or 'circular'. Build it from a\n"
                          "spec string, keywords, or both (keywords override the spec); n, k, p, s, d set both\n"
                          "sides. Immutable; validated on construction.")
      .def("__init__", &init_problem, nb::arg("spec") = nb::none(), nb::kw_only(), nb::arg("S") = nb::none(),
           nb::arg("f") = nb::none(), nb::arg("fo") = nb::none(), nb::arg("h") = nb::none(),
           nb::arg("w") = nb::none(), nb::arg("kh") = nb::none(), nb::arg("kw") = nb::none(),
           nb::arg("ph") = nb::none(), nb::arg("pw") = nb::none(), nb::arg("n") = nb::none(),
           nb::arg("k") = nb::none(), nb::arg("p") = nb::none(), nb::arg("padding") = nb::none(),
           nb::arg("sh") = nb::none(), nb::arg("sw") = nb::none(), nb::arg("s") = nb::none(),
           nb::arg("dh") = nb::none(), nb::arg("dw") = nb::none(), nb::arg("d") = nb::none(),
           nb::arg("g") = nb::none(), nb::arg("bias") = nb::none())
      .def_ro("S", &ConvProblem::S, "batch size (images)")
      .def_ro("f", &ConvProblem::f, "input planes")
      .def_ro("fo", &ConvProblem::fo, "output planes")
      .def_ro("h", &ConvProblem::h)
      .def_ro("w", &ConvProblem::w)
      .def_ro("kh", &ConvProblem::kh)
      .def_ro("kw", &ConvProblem::kw)
      .def_ro("ph", &ConvProblem::ph, "padding on each side (rows)")
      .def_ro("pw", &ConvProblem::pw, "padding on each side (columns)")
      .def_ro("sh", &ConvProblem::sh, "stride (rows)")
      .def_ro("sw", &ConvProblem::sw, "stride (columns)")
      .def_ro("dh", &ConvProblem::dh, "dilation (rows)")
      .def_ro("dw", &ConvProblem::dw, "dilation (columns)")
      .def_ro("g", &ConvProblem::g, "groups")
      .def_ro("bias", &ConvProblem::bias, "fprop adds a bias of fo values; accgrad also gives gradBias")
      .def_prop_ro("padding", [](const ConvProblem& p) { return std::string(to_string(p.padding)); },
                   "'zero', 'mirror' (= PyTorch 'reflect') or 'circular'")
      .def_prop_ro("out_h", &ConvProblem::out_h)
      .def_prop_ro("out_w", &ConvProblem::out_w)
      .def_prop_ro("padded_h", &ConvProblem::padded_h)
      .def_prop_ro("padded_w", &ConvProblem::padded_w)
      .def_prop_ro("wrapped_h", &ConvProblem::wrapped_h,
                   "the smallest circular basis side the FFT backends transform in: h + ph under zero padding "
                   "(the zeros of one side serve both edges; at least out_h and kh), padded_h otherwise")
      .def_prop_ro("wrapped_w", &ConvProblem::wrapped_w, "as wrapped_h, for the columns")
      .def_prop_ro("input_shape", [](const ConvProblem& p) { return shape_tuple(input_shape(p)); })
      .def_prop_ro("weight_shape", [](const ConvProblem& p) { return shape_tuple(weight_shape(p)); })
      .def_prop_ro("output_shape", [](const ConvProblem& p) { return shape_tuple(output_shape(p)); })
      .def_prop_ro("madds", &ConvProblem::madds,
                   "multiply-adds of the time-domain algorithm, S*(f/g)*fo*kh*kw*out_h*out_w (every pass)")
      .def("result_shape",
           [](const ConvProblem& p, std::string_view pass) { return shape_tuple(result_shape(p, parse_pass(pass))); },
           nb::arg("pass_"), "shape of the tensor a pass writes: output, gradInput or gradWeight")
      .def_prop_ro("spec", &ConvProblem::to_string, "the canonical spec string (round-trips with Problem(spec))")
      .def_static("preset", &ConvProblem::preset, nb::arg("name"), "the paper's Table 4 layers L1..L5 (S=128)")
      .def("__str__", &ConvProblem::to_string)
      .def("__repr__", [](const ConvProblem& p) { return "fftconv.Problem('" + p.to_string() + "')"; })
      .def("__eq__", [](const ConvProblem& a, const ConvProblem& b) { return a == b; })
      .def("__eq__", [](const ConvProblem&, nb::handle) { return false; })
      .def("__hash__", [](const ConvProblem& p) { return nb::hash(nb::str(p.to_string().c_str())); })
      .def("__getstate__", &ConvProblem::to_string)
      .def("__setstate__",
           [](ConvProblem* self, const std::string& spec) { new (self) ConvProblem(ConvProblem::parse(spec)); });

  m.def(
      "_check_pass", [](std::string_view s) { return std::string(to_string(parse_pass(s))); }, nb::arg("pass_"),
      "the canonical pass name, or ValueError");
  m.def(
      "_check_tile", [](std::string_view s) { return TileSpec::parse(s).to_string(); }, nb::arg("tile"),
      "the canonical tile spec, or ValueError");
}

}  // namespace fftconv::py
