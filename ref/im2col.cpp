// The `im2col` backend: unroll the padded input into a matrix and multiply it with Eigen GEMMs
// (the "unrolling" strategy of the paper's Section 2), channel by channel (Note [im2col by
// channel]), fp32. The CPU time-domain baseline.
#include <omp.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "common/errors.hpp"
#include "common/padding.hpp"
#include "ref/backends.hpp"
#include "ref/eigen.hpp"
#include "ref/parallel.hpp"

namespace fftconv {
namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapF = Eigen::Map<MatF>;
using CMapF = Eigen::Map<const MatF>;

// Rows i*kh*kw .. (i+1)*kh*kw - 1 of the unrolled matrix (f*kh*kw x out_h*out_w) of one sample
// x (f x h x w): col[(u,v)][(y,x)] = xpad[i][y+u][x+v], for input channel i.
void im2col_channel(const ConvProblem& p, const float* x, int64_t i, float* col) {
  const int64_t oh = p.out_h(), ow = p.out_w();
  const float* plane = x + i * p.h * p.w;
  for (int64_t u = 0; u < p.kh; ++u)
    for (int64_t v = 0; v < p.kw; ++v) {
      float* row = col + (u * p.kw + v) * oh * ow;
      for (int64_t y = 0; y < oh; ++y) {
        const int64_t r = padded_source(y + u, p.h, p.ph, p.padding);
        for (int64_t xx = 0; xx < ow; ++xx) {
          const int64_t c = padded_source(xx + v, p.w, p.pw, p.padding);
          row[y * ow + xx] = (r < 0 || c < 0) ? 0.0f : plane[r * p.w + c];
        }
      }
    }
}

// gpad (padded plane of channel i, zeroed here) += the scatter of its kh*kw rows, then folded into
// gradInput (Note [bprop padding adjoint]).
void col2im_channel(const ConvProblem& p, const float* col, float* gpad, float* gx_plane) {
  const int64_t oh = p.out_h(), ow = p.out_w(), wp = p.padded_w();
  std::fill(gpad, gpad + p.padded_h() * wp, 0.0f);
  for (int64_t u = 0; u < p.kh; ++u)
    for (int64_t v = 0; v < p.kw; ++v) {
      const float* row = col + (u * p.kw + v) * oh * ow;
      for (int64_t y = 0; y < oh; ++y) {
        float* dst = gpad + (y + u) * wp + v;
        const float* src = row + y * ow;
        for (int64_t xx = 0; xx < ow; ++xx) dst[xx] += src[xx];
      }
    }
  fold_padded_plane(gpad, wp, gx_plane, p);
}

// Note [im2col by channel]
// The unrolled matrix of a sample (f*kh*kw x out_h*out_w) is the largest buffer of every pass
// (L2, S=8: 65 MB): written whole, the GEMM and the unroll (or, in bprop, the scatter back)
// each stream it through memory, and the passes ran at memory speed. Its kh*kw rows of input
// channel i meet only the kh*kw columns i*kh*kw.. of W (fo x f*kh*kw), so every pass runs channel
// by channel, the channels spread over the OpenMP threads, each thread with its own rows
// (kh*kw x out_h*out_w; L2: 81 x 3,136 floats, 1 MB, kept in cache):
//   fprop:   out (fo x P) += W_i * col_i, summed over the channels: one partial sum per thread,
//            added into the output at the end of the sample;
//   bprop:   col_i = W_i^T * g, scattered into channel i's padded plane and folded at once;
//   accGrad: dW_i (fo x kh*kw) += g * col_i^T, each thread writing its own channels' columns.
// Eigen runs each product serially inside the parallel region. On L2, S=8 (2 threads) this took
// fprop from 171-175 to 107-123 ms against one unrolled matrix per sample, and the workspace from
// 66 MB to 2-4 MB.

// Bytes of one thread's buffers in a pass (Note [im2col by channel]): one channel's rows, and the
// fprop partial sum or the bprop padded plane.
std::size_t thread_bytes(const ConvProblem& p, Pass pass) {
  const int64_t kk = p.kh * p.kw, P = p.out_h() * p.out_w();
  const int64_t extra = pass == Pass::fprop ? p.fo * P : pass == Pass::bprop ? p.padded_h() * p.padded_w() : 0;
  return std::size_t(kk * P + extra) * sizeof(float);
}

class Im2colPlan final : public Plan {
 public:
  // threads: already resolved (plan_threads), and cut to the workspace limit where one is set.
  Im2colPlan(ConvProblem p, Pass pass, int threads, bool limited)
      : p_(p), pass_(pass), threads_(threads), limited_(limited) {}
  std::size_t workspace_bytes() const override { return std::size_t(threads_) * thread_bytes(p_, pass_); }
  void execute(const Args& a) const override {
    require_operands(a, pass_, "im2col");
    if (a.dtype != DType::f32) throw Unsupported("im2col: dtype must be float32");
    const ConvProblem& p = p_;
    const int64_t kk = p.kh * p.kw, K = p.f * kk, P = p.out_h() * p.out_w();
    auto* result = static_cast<float*>(a.result);
    const auto* x = static_cast<const float*>(a.input);
    const auto* g = static_cast<const float*>(a.grad_output);
    const CMapF wm(static_cast<const float*>(a.weight), p.fo, K);
    auto sample_x = [&](int64_t s) { return x + s * p.f * p.h * p.w; };
    auto sample_g = [&](int64_t s) { return CMapF(g + s * p.fo * P, p.fo, P); };
    // Note [im2col by channel]: per thread one channel's rows (and the pass's own buffer below),
    // allocated once per execute(). Note [exceptions in parallel regions]: every thread reaches
    // every worksharing loop; a thread whose buffers failed to allocate skips its iterations.
    ParallelErrors errors("im2col");
#pragma omp parallel num_threads(threads_)
    {
      struct Scratch {
        std::vector<float> rows, gpad;
        MatF acc;
      };
      std::optional<Scratch> sc;
      errors.run([&] {
        Scratch t;
        t.rows.resize(static_cast<size_t>(kk * P));
        if (pass_ == Pass::fprop) t.acc.resize(p.fo, P);
        if (pass_ == Pass::bprop) t.gpad.resize(static_cast<size_t>(p.padded_h() * p.padded_w()));
        sc.emplace(std::move(t));
      });
      auto work = [&](auto&& fn) { errors.run([&] { if (sc) fn(MapF(sc->rows.data(), kk, P)); }); };
      switch (pass_) {
        case Pass::fprop: {  // out_s = sum over channels: a partial sum per thread, added at the end of each sample
#pragma omp single
          MapF(result, p.S * p.fo, P).setZero();  // the implied barrier: zeroed before any sum is added
          for (int64_t s = 0; s < p.S; ++s) {
            work([&](MapF) { sc->acc.setZero(); });
#pragma omp for schedule(static) nowait
            for (int64_t i = 0; i < p.f; ++i)
              work([&](MapF col) {
                im2col_channel(p, sample_x(s), i, col.data());
                sc->acc.noalias() += wm.middleCols(i * kk, kk) * col;
              });
#pragma omp critical(fftconv_im2col_fprop)
            work([&](MapF) { MapF(result + s * p.fo * P, p.fo, P) += sc->acc; });
          }
          break;
        }
        case Pass::bprop: {  // each (sample, channel) writes its own gradInput plane
          for (int64_t s = 0; s < p.S; ++s) {  // samples outside: the threads share sample s's gradOutput in cache
#pragma omp for schedule(static) nowait
            for (int64_t i = 0; i < p.f; ++i)
              work([&](MapF col) {
                col.noalias() = wm.middleCols(i * kk, kk).transpose() * sample_g(s);
                col2im_channel(p, col.data(), sc->gpad.data(), result + (s * p.f + i) * p.h * p.w);
              });
          }
          break;
        }
        case Pass::accgrad: {  // each channel's columns of dW: schedule(static) gives a thread the same
                               // channels in every sample, so no two threads add into one column
#pragma omp single
          MapF(result, p.fo, K).setZero();  // the implied barrier: zeroed before any product is added
          for (int64_t s = 0; s < p.S; ++s) {
#pragma omp for schedule(static) nowait
            for (int64_t i = 0; i < p.f; ++i)
              work([&](MapF col) {
                im2col_channel(p, sample_x(s), i, col.data());
                MapF(result, p.fo, K).middleCols(i * kk, kk).noalias() += sample_g(s) * col.transpose();
              });
          }
          break;
        }
      }
    }
    errors.rethrow();
  }
  std::string describe() const override {
    const int64_t kk = p_.kh * p_.kw, K = p_.f * kk, P = p_.out_h() * p_.out_w();
    const std::string rows = std::to_string(kk) + "x" + std::to_string(P);
    const std::string product = pass_ == Pass::fprop   ? std::to_string(p_.fo) + "x" + std::to_string(kk) + " * " + rows
                                : pass_ == Pass::bprop ? std::to_string(kk) + "x" + std::to_string(p_.fo) + " * " +
                                                             std::to_string(p_.fo) + "x" + std::to_string(P)
                                                       : std::to_string(p_.fo) + "x" + std::to_string(P) + " * " +
                                                             std::to_string(P) + "x" + std::to_string(kk);
    return "im2col: each of " + std::to_string(p_.S) + " samples' unrolled " + std::to_string(K) + "x" +
           std::to_string(P) + " matrix taken " + rows + " rows (one input channel) at a time, " +
           std::to_string(p_.f) + " channels across " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads") +
           (limited_ ? " (as many as the workspace limit holds)" : "") + ", one Eigen sgemm each (" + product + ")";
  }

 private:
  ConvProblem p_;
  Pass pass_;
  int threads_;
  bool limited_;
};

class Im2colBackend final : public Backend {
 public:
  std::string_view name() const override { return "im2col"; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem& p, Pass, DType d) const override {
    if (d != DType::f32) return {false, "float32 only"};
    return dense_problem_support(p);
  }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    check_option_keys(*this, opts);  // im2col has no options
    require_fp32_products(opts, "im2col");
    require_dense(p, "im2col");
    if (opts.tile.kind != TileSpec::Kind::none)
      throw Unsupported("im2col: tile must be none, got '" + opts.tile.to_string() + "'");
    // A workspace limit takes threads away, each holding its own buffers; below one thread's it refuses.
    int threads = plan_threads(opts.threads);
    const std::size_t per_thread = thread_bytes(p, pass);
    const bool limited = opts.workspace_limit > 0 && std::size_t(threads) * per_thread > opts.workspace_limit;
    if (limited) {
      if (opts.workspace_limit < per_thread)
        throw Unsupported("im2col: workspace_limit " + std::to_string(opts.workspace_limit) +
                          " bytes is below the minimum " + std::to_string(per_thread) + " bytes (one thread's buffers)");
      threads = int(opts.workspace_limit / per_thread);
    }
    return std::make_unique<Im2colPlan>(p, pass, threads, limited);
  }
  std::string_view summary() const override { return "unroll + Eigen sgemm, channel by channel across the threads (fp32 time-domain baseline)"; }
};

}  // namespace

std::shared_ptr<const Backend> make_im2col_backend() { return std::make_shared<Im2colBackend>(); }

}  // namespace fftconv
