// fbfft host side: argument validation, size dispatch through the constexpr launcher tables of
// fbfft_1d.cu / fbfft_2d.cu, kernel attributes for reports.
#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/stockham.cuh"

namespace fftconv::fbfft {
namespace {

int log2_exact(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return (1 << l) == n ? l : -1;
}

// The automatic choice (measured on the H100, docs/results.md): the four-step family for sides
// 32..128, 16x16 and 8x8 (four lanes per plane, fbfft_2d_quad.cu) in the standard and transposed layouts
// (Note [four-step 2-D kernels]; at 32x32 2.2-2.4x cuFFT where the register kernels reach 1.4-1.9x);
// in the freq_major layout (the fbfft backend's) the four-step kernels launched as clusters (Note
// [four-step freq_major clusters]) where a side is 64 or more, the register family below (at 32x32
// the faster of the two depends on the batch: the fbfft backend times both, Note [fbfft transform
// tuning]); the register family for smaller sides; the shuffle family elsewhere.
// 1-D: the register kernels (n <= 32) and four-step kernels (n >= 64) of fbfft_1d_reg.cu
// (Note [1-D register kernels]), the shuffle kernels at n = 2.
const detail::Launcher* find_launcher(int n_h, int n_w, Kernel kernel, Layout layout = Layout::standard,
                                      bool /*inverse*/ = false) {
  const detail::Launcher* stockham = stockham::supported(n_h, n_w) ? detail::launcher_stockham() : nullptr;
  if (kernel == Kernel::stockham) return stockham;
  const int lh = log2_exact(n_h), lw = log2_exact(n_w);
  if (lh < 0 || lw < 0) {  // the smooth squares of the register family, every other size Stockham's
    const detail::Launcher* s = n_h > 1 ? detail::launcher_2d_smooth(n_h, n_w) : nullptr;
    if (kernel == Kernel::registers) return s;
    return kernel == Kernel::automatic ? (s ? s : stockham) : nullptr;
  }
  if (lw < 1) return nullptr;
  if (lh == 0) {  // 1-D: the register kernels up to 32 points, the four-step ones from 64
    if (lw > detail::kMaxLog1d) return nullptr;
    const detail::Launcher* fast = detail::launchers_1d_registers()[lw].forward ? &detail::launchers_1d_registers()[lw] : nullptr;
    const detail::Launcher* fast_kind = n_w <= 32 ? (kernel == Kernel::registers ? fast : nullptr)
                                                  : (kernel == Kernel::fourstep ? fast : nullptr);
    if (kernel == Kernel::lanes) return nullptr;
    if (kernel == Kernel::registers || kernel == Kernel::fourstep) return fast_kind;
    if (kernel == Kernel::automatic && fast) return fast;
    return &detail::launchers_1d()[lw];
  }
  if (lh > detail::kMaxLog2d || lw > detail::kMaxLog2d) return nullptr;
  const int index = lh * (detail::kMaxLog2d + 1) + lw;
  auto entry = [](const detail::Launcher* table, int i) { return table[i].forward ? &table[i] : nullptr; };
  // The register family: one thread per plane at sides 4 and 8 (fbfft_2d_plane.cu), one thread per
  // row pair and column otherwise (fbfft_2d_reg.cu).
  const detail::Launcher* p = entry(detail::launchers_2d_plane(), index);
  const detail::Launcher* r = p ? p : entry(detail::launchers_2d_registers(), index);
  // The four-step family's 8x8 and 16x16 entries (four lanes per plane): no freq_major output.
  const detail::Launcher* quad = n_h == 16 && n_w == 16 ? detail::launcher_2d_quad16()
                                 : n_h == 8 && n_w == 8 ? detail::launcher_2d_quad8()
                                                        : nullptr;
  const detail::Launcher* f =
      quad ? (layout == Layout::freq_major ? nullptr : quad)
           : entry(layout == Layout::freq_major ? detail::launchers_2d_fourstep_clusters() : detail::launchers_2d_fourstep(), index);
  const detail::Launcher* w = entry(detail::launchers_2d(), index);
  switch (kernel) {
    case Kernel::registers: return r;
    case Kernel::lanes: return entry(detail::launchers_2d_lanes(), index);
    case Kernel::fourstep: return f;
    case Kernel::shuffle: return w;
    case Kernel::stockham: return stockham;  // (returned above)
    case Kernel::automatic: break;
  }
  if (layout == Layout::freq_major) {
    if (f && (n_h >= 64 || n_w >= 64)) return f;
    return r ? r : (f ? f : w);
  }
  if (f) return f;
  if (r && n_h <= 32 && n_w <= 32) return r;
  return w ? w : r;
}

// "12, 14, ..." (kSmoothSides2d), for messages.
std::string smooth_sides() {
  std::string s;
  for (int n : kSmoothSides2d) s += (s.empty() ? "" : ", ") + std::to_string(n);
  return s;
}

const detail::Launcher& launcher_or_throw(int n_h, int n_w, Kernel kernel, Layout layout = Layout::standard,
                                          bool inverse = false) {
  const detail::Launcher* l = find_launcher(n_h, n_w, kernel, layout, inverse);
  if (!l) {
    std::string sizes;
    switch (kernel) {
      case Kernel::registers:
        sizes = " (register kernels: 2-D, sides 2..64 or 128x128, powers of two, or squares of " + smooth_sides() + ")";
        break;
      case Kernel::lanes: sizes = " (lanes kernels: 2-D, sides 16 and 32)"; break;
      case Kernel::stockham: sizes = " (Stockham kernels: 7-smooth sizes, 2-D sides 2..128, 1-D n_w in 2..256)"; break;
      case Kernel::fourstep:
        sizes = " in the " + std::string(to_string(layout)) +
                " layout (four-step kernels: 1-D n_w in 64..256; 2-D sides 32, 64 and 128, and 8x8 and 16x16 outside the freq_major layout)";
        break;
      default:
        sizes = " (sizes 2^a 3^b 5^c 7^d: 1-D n_w in 2..256 with n_h=1, 2-D sides in 2..128; a power-of-two side of "
                "128 needs the other >= 32)";
    }
    throw Unsupported("fbfft: no " + std::string(kernel == Kernel::automatic ? "" : std::string(to_string(kernel)) + " ") +
                      "kernel for transform size n_h=" + std::to_string(n_h) + ", n_w=" + std::to_string(n_w) + sizes);
  }
  return *l;
}

[[noreturn]] void bad(const std::string& field, int64_t value, const std::string& why) {
  throw_invalid_argument("fbfft", field, value, why);
}

void validate_common(int64_t batch, int n_h, int n_w, Layout layout, int64_t ld_batch, bool null_data) {
  if (batch < 0) bad("batch", batch, "must be >= 0");
  if (n_h < 1) bad("n_h", n_h, "must be >= 1");
  if (n_w < 1) bad("n_w", n_w, "must be >= 1");
  if (layout == Layout::freq_major && ld_batch != 0 && ld_batch < batch)
    bad("ld_batch", ld_batch, "must be 0 or >= batch (" + std::to_string(batch) + ") for the freq_major layout");
  if (batch > 0 && null_data) bad("batch", batch, "needs non-null input and output pointers");
}

void validate_shape(const std::optional<Shape1d>& shape) {
  if (!shape) return;
  const Shape1d& s = *shape;
  if (s.pairs != 0 && s.pairs != 4 && s.pairs != 8 && s.pairs != 16 && s.pairs != 32)
    bad("shape_1d.pairs", s.pairs, "must be 0, 4, 8, 16 or 32");
  if (s.groups != 0 && s.groups != 2 && s.groups != 4 && s.groups != 8)
    bad("shape_1d.groups", s.groups, "must be 0, 2, 4 or 8");
}

}  // namespace

const char* to_string(Layout l) {
  switch (l) {
    case Layout::standard: return "standard";
    case Layout::transposed: return "transposed";
    case Layout::freq_major: return "freq_major";
  }
  return "?";
}

const char* to_string(Kernel k) {
  switch (k) {
    case Kernel::automatic: return "automatic";
    case Kernel::shuffle: return "shuffle";
    case Kernel::registers: return "registers";
    case Kernel::fourstep: return "fourstep";
    case Kernel::lanes: return "lanes";
    case Kernel::stockham: return "stockham";
  }
  return "?";
}

bool supported(int n_h, int n_w, Kernel kernel, Layout layout) { return find_launcher(n_h, n_w, kernel, layout) != nullptr; }

Kernel parse_kernel(std::string_view s, const std::string& field) {
  if (s == "automatic" || s == "auto") return Kernel::automatic;
  for (Kernel k : {Kernel::shuffle, Kernel::registers, Kernel::fourstep, Kernel::lanes, Kernel::stockham})
    if (s == to_string(k)) return k;
  throw InvalidArgument(field + ": unknown fbfft kernel family '" + std::string(s) +
                        "' (expected auto, shuffle, registers, lanes, fourstep or stockham)");
}

Kernel resolve_kernel(int n_h, int n_w, Kernel requested, Layout layout, bool inverse) {
  const detail::Launcher& l = launcher_or_throw(n_h, n_w, requested, layout, inverse);
  if (&l == detail::launcher_stockham()) return Kernel::stockham;
  if (&l == detail::launcher_2d_smooth(n_h, n_w)) return Kernel::registers;
  const int lh = log2_exact(n_h), lw = log2_exact(n_w);
  if (lh == 0) return &l == &detail::launchers_1d()[lw] ? Kernel::shuffle : (n_w <= 32 ? Kernel::registers : Kernel::fourstep);
  const int index = lh * (detail::kMaxLog2d + 1) + lw;
  if (&l == &detail::launchers_2d_registers()[index] || &l == &detail::launchers_2d_plane()[index]) return Kernel::registers;
  if (&l == &detail::launchers_2d_lanes()[index]) return Kernel::lanes;
  if (&l == &detail::launchers_2d_fourstep()[index] || &l == &detail::launchers_2d_fourstep_clusters()[index] ||
      &l == detail::launcher_2d_quad16() || &l == detail::launcher_2d_quad8())
    return Kernel::fourstep;
  return Kernel::shuffle;
}

void validate(const ForwardArgs& a) {
  validate_common(a.batch, a.n_h, a.n_w, a.layout, a.ld_batch, !a.input || !a.output);
  validate_shape(a.shape_1d);
  if (a.in_h < 0) bad("in_h", a.in_h, "must be >= 0");
  if (a.in_w < 0) bad("in_w", a.in_w, "must be >= 0");
  if (a.in_ld < a.in_w) bad("in_ld", a.in_ld, "must be >= in_w (" + std::to_string(a.in_w) + ")");
  if (a.in_plane_stride < 0) bad("in_plane_stride", a.in_plane_stride, "must be >= 0");
  if (a.off_h < 0) bad("off_h", a.off_h, "must be >= 0");
  if (a.off_w < 0) bad("off_w", a.off_w, "must be >= 0");
  if (a.n_h == 1 && a.off_h != 0) bad("off_h", a.off_h, "must be 0 for a 1-D transform (n_h=1)");
}

void validate(const InverseArgs& a) {
  validate_common(a.batch, a.n_h, a.n_w, a.layout, a.ld_batch, !a.input || !a.output);
  validate_shape(a.shape_1d);
  if (a.out_h < 0) bad("out_h", a.out_h, "must be >= 0");
  if (a.out_w < 0) bad("out_w", a.out_w, "must be >= 0");
  if (a.out_off_h < 0 || a.out_off_h + a.out_h > a.n_h)
    bad("out_off_h", a.out_off_h, "with out_h=" + std::to_string(a.out_h) + " must lie inside n_h=" + std::to_string(a.n_h));
  if (a.out_off_w < 0 || a.out_off_w + a.out_w > a.n_w)
    bad("out_off_w", a.out_off_w, "with out_w=" + std::to_string(a.out_w) + " must lie inside n_w=" + std::to_string(a.n_w));
  if (a.out_ld < a.out_w) bad("out_ld", a.out_ld, "must be >= out_w (" + std::to_string(a.out_w) + ")");
  if (a.out_plane_stride < 0) bad("out_plane_stride", a.out_plane_stride, "must be >= 0");
  if (a.window_split != 0 && std::find(std::begin(kWindowSplits), std::end(kWindowSplits), a.window_split) == std::end(kWindowSplits))
    bad("window_split", a.window_split, "must be 0 (automatic), 1, 4, 8 or 16");
}

int depthwise_side(int64_t n) {
  for (int side : kDepthwiseSides)
    if (side >= n) return side;
  return 0;
}

void validate(const DepthwiseArgs& a) {
  if (a.in.layout != Layout::standard)
    throw InvalidArgument(std::string("fbfft: in.layout=") + to_string(a.in.layout) + " must be standard (depthwise)");
  if (!a.kernel && a.batch > 0) bad("batch", a.batch, "needs a non-null kernel spectrum (depthwise)");
  if (a.channels < 1) bad("channels", a.channels, "must be >= 1");
  // The windows as the separate transforms check them; the spectra between them stay on chip.
  ForwardArgs f = a.in;
  f.batch = a.batch, f.output = const_cast<float2*>(a.kernel);
  validate(f);
  InverseArgs v = a.out;
  v.batch = a.batch, v.input = a.kernel;
  validate(v);
  if (a.in.n_h != a.in.n_w) bad("in.n_h", a.in.n_h, "must equal in.n_w=" + std::to_string(a.in.n_w) + " (depthwise: squares)");
  if (depthwise_side_index(a.in.n_h) < 0) bad("in.n_h", a.in.n_h, "is not a side of fbfft::kDepthwiseSides");
  if (a.out.n_h != a.in.n_h || a.out.n_w != a.in.n_w)
    bad("out.n_h", a.out.n_h, "must equal in.n_h=" + std::to_string(a.in.n_h) + " (one basis)");
}

void forward(const ForwardArgs& a, cudaStream_t stream) {
  validate(a);
  const detail::Launcher& l = launcher_or_throw(a.n_h, a.n_w, a.kernel, a.layout);
  if (a.batch == 0) return;
  l.forward(a, stream);
}

void inverse(const InverseArgs& a, cudaStream_t stream) {
  validate(a);
  const detail::Launcher& l = launcher_or_throw(a.n_h, a.n_w, a.kernel, a.layout, true);
  if (a.batch == 0) return;
  l.inverse(a, stream);
}

std::string kernel_attributes(int n_h, int n_w, bool inverse, Kernel kernel, Layout layout, const std::optional<Shape1d>& shape,
                              std::optional<int64_t> batch) {
  const detail::Launcher& l = launcher_or_throw(n_h, n_w, kernel, layout, inverse);
  if (batch && *batch < 1) bad("batch", *batch, "must be >= 1 (kernel_attributes)");
  const void* fn = inverse ? l.inverse_kernel() : l.forward_kernel();
  int threads = l.threads, smem_bytes = l.smem_bytes;
  if (l.shaped) l.shaped(shape, inverse, &fn, &threads, &smem_bytes);
  if (l.batched && batch) l.batched(*batch, inverse, &fn, &threads, &smem_bytes);
  if (l.sized) l.sized(n_h, n_w, batch ? *batch : 16384, &smem_bytes);
  cudaFuncAttributes attr{};
  FFTCONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  int blocks = 0;
  detail::prepare_kernel(fn, smem_bytes);
  FFTCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, smem_bytes));
  int device = 0, max_threads = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&device));
  FFTCONV_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const double occupancy = max_threads > 0 ? double(blocks * threads) / max_threads : 0.0;
  return "regs=" + std::to_string(attr.numRegs) + " lmem=" + std::to_string(attr.localSizeBytes) +
         "B smem=" + std::to_string(smem_bytes + static_cast<int>(attr.sharedSizeBytes)) +
         "B threads=" + std::to_string(threads) + " blocks/SM=" + std::to_string(blocks) + " occupancy=" + std::to_string(static_cast<int>(occupancy * 100 + 0.5)) + "%";
}

}  // namespace fftconv::fbfft
