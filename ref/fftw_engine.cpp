// FreqEngine (see fftw_engine.hpp): FFTW R2C/C2R on per-thread scratch, blocked transpositions into
// frequency-major buffers, and per-frequency complex products (the AVX-512 kernel of
// Note [frequency CGEMM] in float where built, else Eigen), all parallel with OpenMP.
#include "ref/fftw_engine.hpp"

#include <fftw3.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "common/atomic_write.hpp"
#include "common/backend.hpp"
#include "common/errors.hpp"
#include "ref/eigen.hpp"
#include "ref/fftw_api.hpp"
#include "ref/freq_kernels.hpp"
#include "ref/parallel.hpp"

namespace fftconv {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

// Note [fftw wisdom]
std::string fftw_wisdom_stem(const std::string& tune_cache) { return beside_tune_cache(tune_cache, "fftw-wisdom"); }

namespace {
// Per precision: the wisdom each file held when last read or written (under fftw_planner_mutex()).
template <class T>
std::map<std::string, std::string>& wisdom_files() {
  static std::map<std::string, std::string> m;
  return m;
}
}  // namespace

template <class T>
std::string fftw_wisdom_text() {
  char* w = Fftw<T>::wisdom_string();
  std::string out = w ? w : "";
  std::free(w);
  return out;
}

template <class T>
void forget_fftw_wisdom() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  Fftw<T>::forget_wisdom();
  wisdom_files<T>().clear();
}

template <class T>
void load_fftw_wisdom(const std::string& stem) {
  if (stem.empty() || wisdom_files<T>().count(stem)) return;
  (void)Fftw<T>::import_wisdom((stem + Fftw<T>::kWisdomSuffix).c_str());  // missing or unreadable: a miss
  wisdom_files<T>()[stem] = fftw_wisdom_text<T>();
}

template <class T>
void save_fftw_wisdom(const std::string& stem) {
  if (stem.empty()) return;
  std::string text = fftw_wisdom_text<T>();
  std::string& last = wisdom_files<T>()[stem];
  if (text == last) return;
  // A folder that cannot be written only makes later planning slower.
  if (write_file_atomically(stem + Fftw<T>::kWisdomSuffix, text).empty()) last = std::move(text);
}

template std::string fftw_wisdom_text<float>();
template std::string fftw_wisdom_text<double>();
template void forget_fftw_wisdom<float>();
template void forget_fftw_wisdom<double>();
template void load_fftw_wisdom<float>(const std::string&);
template void load_fftw_wisdom<double>(const std::string&);
template void save_fftw_wisdom<float>(const std::string&);
template void save_fftw_wisdom<double>(const std::string&);

namespace {


// FFTW-aligned buffer.
template <class T, class E>
struct AlignedBuf {
  E* p = nullptr;
  explicit AlignedBuf(std::size_t n) {
    p = static_cast<E*>(Fftw<T>::alloc(std::max<std::size_t>(n, 1) * sizeof(E)));
    if (!p) throw OutOfMemory("fftw: fftw_malloc of " + std::to_string(n * sizeof(E)) + " bytes failed", n * sizeof(E));
  }
  ~AlignedBuf() { Fftw<T>::release(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
};

constexpr int64_t kBlock = 16;  // planes per transposition block
// Bytes of one frequency's B that bprop transposes from prepared panels at a time: a few of the
// product kernel's L2-resident operands (Note [prepared weight spectra]).
constexpr int64_t kTransposedBytes = int64_t(256) << 10;
// Stride (complex values) between the spectra of a block's planes: nfreq rounded up to 64 bytes, so
// every plane of a block keeps the alignment the FFTW plans were made with and the transforms
// write into the block and read from it directly, with no staging copy.
constexpr int64_t block_stride(int64_t nfreq) { return (nfreq + 7) / 8 * 8; }

// Are all n values finite? (An integer maximum over the exponent bits, which vectorizes.)
template <class T>
bool all_finite(const T* x, int64_t n) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kExponent = sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  U top = 0;
  for (int64_t i = 0; i < n; ++i) {
    U u;
    std::memcpy(&u, x + i, sizeof u);
    top = std::max(top, U(u & kExponent));
  }
  return top != kExponent;
}

// A thread's scratch in the transform regions: one real plane and a block of kBlock spectra.
template <class T>
struct PlaneScratch {
  AlignedBuf<T, T> re;
  AlignedBuf<T, typename Fftw<T>::Cpx> block;
  PlaneScratch(int64_t nplane, int64_t stride) : re(std::size_t(nplane)), block(std::size_t(kBlock * stride)) {}
};
}  // namespace

template <class T>
struct FreqEngine<T>::Impl {
  using Plan = typename Fftw<T>::Plan;
  Plan r2c = nullptr, c2r = nullptr;            // whole-plane 2-D transforms
  Plan col_fwd = nullptr, col_inv = nullptr;    // in-place column transforms of a half spectrum
  std::map<int64_t, Plan> rows_fwd, rows_inv;   // row transforms of the first k rows (Note [row-pruned transforms])
  std::mutex rows_mutex;
  bool measure = true;
  std::string wisdom_stem;  // Note [fftw wisdom]
  // Note [engine buffers]: the frequency-major buffers of the last run, kept for the next one so
  // that repeated runs of a plan do not allocate, zero and page-fault them in again each time
  // (~1 ms of a 12 ms tiled run on the 2-core test machine). A run that finds them in use by a
  // concurrent run of the same engine allocates its own.
  using AlignedVec = std::vector<std::complex<T>, Eigen::aligned_allocator<std::complex<T>>>;
  struct Buffers {
    AlignedVec af, bf, cf;
    void fit(std::size_t a, std::size_t b, std::size_t c) {
      for (auto [v, n] : {std::pair{&af, a}, std::pair{&bf, b}, std::pair{&cf, c}}) {
        if (v->size() >= n) continue;
        try {
          v->resize(n);
        } catch (const std::bad_alloc&) {
          const std::size_t bytes = n * sizeof(std::complex<T>);
          throw OutOfMemory("fftw: frequency buffer of " + std::to_string(bytes) + " bytes failed", bytes);
        }
      }
    }
  };
  std::mutex buffers_mutex;
  Buffers buffers;
};

template <class T>
FreqEngine<T>::FreqEngine(int64_t nh, int64_t nw, const EngineOptions& options)
    : nh_(nh),
      nw_(nw),
      threads_(plan_threads(options.threads)),
      kernel_products_(std::is_same_v<T, float> && have_freq_cgemm() && !options.eigen_products),
      impl_(std::make_unique<Impl>()) {
  const bool measure = options.measure;
  if (nh < 1 || nw < 1 || nh > (1 << 20) || nw > (1 << 20))
    throw InvalidArgument("fftw: basis " + std::to_string(nh) + "x" + std::to_string(nw) + " out of range");
  using Cpx = typename Fftw<T>::Cpx;
  AlignedBuf<T, T> re(nh * nw);
  AlignedBuf<T, Cpx> cx(nfreq());
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  impl_->measure = measure;
  impl_->wisdom_stem = options.wisdom_stem;
  load_fftw_wisdom<T>(impl_->wisdom_stem);
  impl_->r2c = Fftw<T>::r2c(int(nh), int(nw), re.p, cx.p, flags);
  impl_->c2r = Fftw<T>::c2r(int(nh), int(nw), cx.p, re.p, flags);
  impl_->col_fwd = Fftw<T>::cols(int(nh), int(nw / 2 + 1), cx.p, FFTW_FORWARD, flags);
  impl_->col_inv = Fftw<T>::cols(int(nh), int(nw / 2 + 1), cx.p, FFTW_BACKWARD, flags);
  save_fftw_wisdom<T>(impl_->wisdom_stem);
  if (!impl_->r2c || !impl_->c2r || !impl_->col_fwd || !impl_->col_inv) throw Error("fftw: planner returned null for " + std::to_string(nh) + "x" + std::to_string(nw));
}

template <class T>
FreqEngine<T>::~FreqEngine() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  for (auto p : {impl_->r2c, impl_->c2r, impl_->col_fwd, impl_->col_inv})
    if (p) Fftw<T>::destroy(p);
  for (auto* m : {&impl_->rows_fwd, &impl_->rows_inv})
    for (auto& [k, p] : *m) Fftw<T>::destroy(p);
}

// The row plan of the first k rows (forward R2C or inverse C2R), made once and cached.
template <class T>
typename Fftw<T>::Plan row_plan(typename FreqEngine<T>::Impl& impl, bool forward, int64_t k, int64_t nh, int64_t nw) {
  using Cpx = typename Fftw<T>::Cpx;
  std::lock_guard<std::mutex> lock(impl.rows_mutex);
  auto& cache = forward ? impl.rows_fwd : impl.rows_inv;
  if (auto it = cache.find(k); it != cache.end()) return it->second;
  AlignedBuf<T, T> re(nh * nw);
  AlignedBuf<T, Cpx> cx(nh * (nw / 2 + 1));
  const unsigned flags = impl.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  std::lock_guard<std::mutex> planner(fftw_planner_mutex());
  const int nwc = int(nw / 2 + 1);
  auto p = forward ? Fftw<T>::rows_r2c(int(nw), int(k), re.p, cx.p, nwc, flags)
                   : Fftw<T>::rows_c2r(int(nw), int(k), cx.p, nwc, re.p, flags);
  if (!p) throw Error("fftw: planner returned null for " + std::to_string(k) + " rows of " + std::to_string(nw));
  save_fftw_wisdom<T>(impl.wisdom_stem);
  cache.emplace(k, p);
  return p;
}

template <class T>
std::size_t FreqEngine<T>::workspace_bytes(int64_t mc, int64_t rc, int64_t nc) const {
  const std::size_t cpx = sizeof(std::complex<T>);
  const std::size_t freq = std::size_t(nfreq()) * std::size_t(mc * rc + rc * nc + mc * nc) * cpx;
  const std::size_t scratch = std::size_t(threads_) * (std::size_t(nh_ * nw_) * sizeof(T) +
                                                        std::size_t(kBlock * block_stride(nfreq())) * cpx);
  return freq + scratch;
}

template <class T>
ChunkPlan FreqEngine<T>::chunk(int64_t M, int64_t R, int64_t N, std::size_t budget, int64_t mc_cap,
                               int64_t rc_cap) const {
  ChunkPlan c;
  auto fits = [&](int64_t mc, int64_t rc, int64_t nc) { return budget == 0 || workspace_bytes(mc, rc, nc) <= budget; };
  int64_t mc = mc_cap > 0 ? std::min(M, mc_cap) : M;
  int64_t rc = rc_cap > 0 ? std::min(R, rc_cap) : R;
  while (mc > 1 && !fits(mc, rc, 1)) mc = (mc + 1) / 2;
  while (rc > 1 && !fits(mc, rc, 1)) rc = (rc + 1) / 2;
  if (!fits(mc, rc, 1))
    throw Unsupported("fftw: workspace_limit " + std::to_string(budget) + " bytes is below the minimum " +
                      std::to_string(workspace_bytes(1, 1, 1)) + " bytes for basis " + std::to_string(nh_) + "x" +
                      std::to_string(nw_));
  int64_t lo = 1, hi = N;  // largest nc that fits
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (fits(mc, rc, mid)) lo = mid; else hi = mid - 1;
  }
  c.mc = mc;
  c.rc = rc;
  c.nc = lo;
  c.workspace = workspace_bytes(mc, rc, lo);
  const int64_t m_chunks = (M + mc - 1) / mc, n_chunks = (N + lo - 1) / lo;
  c.b_transforms = rc == R && lo == N ? R * N : m_chunks * R * N;  // B whole: transformed once
  if (rc < R) c.b_transforms += (n_chunks - 1) * M * R;  // A recomputed per N chunk when R is chunked
  return c;
}

template <class T>
ChunkPlan FreqEngine<T>::chunk_prepared(int64_t M, int64_t R, int64_t N, int64_t b_chunk, bool b_transposed,
                                        std::size_t budget) const {
  ChunkPlan c;
  // Read transposed, an R chunk is a run of whole panels of b_chunk rows, as many as keep one
  // frequency's transposed matrix within kTransposedBytes (Note [prepared weight spectra]).
  const int64_t panels = std::max<int64_t>(1, kTransposedBytes / (N * int64_t(sizeof(std::complex<T>)) * b_chunk));
  c.rc = b_transposed ? std::min(R, panels * b_chunk) : R, c.nc = b_transposed ? N : b_chunk, c.mc = M;
  // The A and C buffers and the scratch: B's chunks are the prepared spectra, not workspace.
  auto bytes = [&](int64_t mc) {
    return workspace_bytes(mc, c.rc, c.nc) - workspace_bytes(0, c.rc, c.nc) + workspace_bytes(0, 0, 0);
  };
  while (c.mc > 1 && budget > 0 && bytes(c.mc) > budget) c.mc = (c.mc + 1) / 2;
  c.workspace = bytes(c.mc);
  c.b_transforms = 0;
  return c;
}

// One run(): the frequency-major buffers (Note [engine buffers]), the row-pruned plans, the steps,
// and the wall time of each.
template <class T>
class FreqEngine<T>::Execution {
  using Cpx = typename Fftw<T>::Cpx;
  using C = std::complex<T>;
  using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<Mat>;
  using FftwPlan = typename Fftw<T>::Plan;

 public:
  Execution(const FreqEngine& e, const ProductSpec<T>& s, const ChunkPlan& ch)
      : e_(e), s_(s), F_(e.nfreq()), nplane_(e.nh_ * e.nw_), Fs_(block_stride(F_)), mc_max_(ch.mc), nc_max_(ch.nc),
        rc_max_(ch.rc > 0 ? ch.rc : s.R), lock_(e.impl_->buffers_mutex, std::try_to_lock),
        buf_(lock_.owns_lock() ? e.impl_->buffers : own_), b_prepared_(s.b_spectra != nullptr) {
    // Prepared spectra come in chunks of b_chunk columns of B (rows with b_transposed), the other
    // side whole (Note [prepared weight spectra]).
    if (b_prepared_ && (s.b_transposed ? ((rc_max_ % s.b_chunk != 0 && rc_max_ < s.R) || nc_max_ < s.N)
                                       : (nc_max_ != s.b_chunk || rc_max_ < s.R)))
      throw Error("fftw: prepared weight spectra in chunks of " + std::to_string(s.b_chunk) + " need chunks R " +
                  (s.b_transposed ? "a multiple of " + std::to_string(s.b_chunk) : std::string("whole")) + ", N " +
                  (s.b_transposed ? "whole" : std::to_string(s.b_chunk)) + ", got R " + std::to_string(rc_max_) + "/" +
                  std::to_string(s.R) + ", N " + std::to_string(nc_max_) + "/" + std::to_string(s.N));
    // Frequency-major buffers with a fixed alignment: Eigen's small products vectorize with
    // alignment-dependent peeling, so a fixed alignment keeps results bitwise repeatable. Every
    // element a product reads is written first in the same run. Note [engine buffers].
    buf_.fit(std::size_t(F_ * mc_max_ * rc_max_), b_prepared_ ? 0 : std::size_t(F_ * rc_max_ * nc_max_),
             std::size_t(F_ * mc_max_ * nc_max_));
    af_ = buf_.af.data(), bf_ = buf_.bf.data(), cf_ = buf_.cf.data();
    // Row plans for operands/results that occupy fewer rows than the basis (Note [row-pruned transforms]).
    auto pruned = [&](int64_t rows) { return rows > 0 && rows < e.nh_; };
    plan_a_ = pruned(s.a_rows) ? row_plan<T>(*e.impl_, true, s.a_rows, e.nh_, e.nw_) : nullptr;
    plan_b_ = pruned(s.b_rows) ? row_plan<T>(*e.impl_, true, s.b_rows, e.nh_, e.nw_) : nullptr;
    plan_c_ = pruned(s.c_rows) ? row_plan<T>(*e.impl_, false, s.c_rows, e.nh_, e.nw_) : nullptr;
  }

  void run() {
    // B whole (one chunk of R and of N, e.g. the kernel spectra of fprop and bprop): transformed once,
    // not once per M chunk of tiles.
    const bool b_whole = rc_max_ >= s_.R && nc_max_ >= s_.N;
    if (b_whole && !b_prepared_) forward_b(0, s_.R, 0, s_.N);
    for (int64_t m0 = 0; m0 < s_.M; m0 += mc_max_) {
      const int64_t mc = std::min(mc_max_, s_.M - m0);
      if (rc_max_ >= s_.R) forward_a(m0, mc, 0, s_.R);  // A whole: transformed once per M chunk
      for (int64_t n0 = 0; n0 < s_.N; n0 += nc_max_) {
        const int64_t nc = std::min(nc_max_, s_.N - n0);
        for (int64_t r0 = 0; r0 < s_.R; r0 += rc_max_) {
          const int64_t rc = std::min(rc_max_, s_.R - r0);
          if (rc_max_ < s_.R) forward_a(m0, mc, r0, rc);
          if (b_prepared_) bf_ = prepared_chunk(r0, n0);
          else if (!b_whole) forward_b(r0, rc, n0, nc);
          products(mc, rc, nc, r0 > 0);  // later R chunks accumulate in the frequency domain
        }
        inverse(m0, mc, n0, nc);
      }
    }
  }

  void report(std::vector<std::pair<std::string, double>>* steps) const {
    if (!steps) return;
    steps->emplace_back("FFT+TRANS A", t_a_);
    if (!b_prepared_) steps->emplace_back("FFT+TRANS B", t_b_);
    steps->emplace_back("CGEMM", t_gemm_);
    steps->emplace_back("TRANS+IFFT C", t_c_);
  }

  // transform_b(): B into the chunks of the buffer its spec's b_spectra names (the one place that
  // writes through b_spectra).
  void forward_b_chunks() {
    for (int64_t n0 = 0; n0 < s_.N; n0 += s_.b_chunk) {
      bf_ = prepared_chunk(0, n0);
      forward_b(0, s_.R, n0, std::min(s_.b_chunk, s_.N - n0));
    }
  }

 private:
  static auto now() { return std::chrono::steady_clock::now(); }

  // The prepared chunk that starts at column n0 of B (row r0 with b_transposed): F·R·n0 (F·N·r0)
  // elements in, each frequency's R×nc (N×rc) matrix contiguous.
  C* prepared_chunk(int64_t r0, int64_t n0) const {
    const int64_t offset = s_.b_transposed ? F_ * s_.N * r0 : F_ * s_.R * n0;
    return const_cast<C*>(s_.b_spectra) + offset;
  }
  template <class P>
  static double ms(P a, P b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

  // Forward-transform `count` planes, plane p loaded by load(p), into dst[k * ld + p] (frequency-major).
  // With rows_plan, only the first `rows` rows are loaded and row-transformed.
  void forward(int64_t count, const std::function<void(int64_t, T*)>& load, C* dst, int64_t ld, FftwPlan rows_plan,
               int64_t rows, T factor) const {
    const int64_t nw = e_.nw_, nwc = nw / 2 + 1, F = F_, Fs = Fs_, nplane = nplane_;
    ParallelErrors errors("fftw forward transforms");  // Note [exceptions in parallel regions]
#pragma omp parallel num_threads(e_.threads_)
    {
      std::unique_ptr<PlaneScratch<T>> scratch;
#pragma omp for schedule(dynamic)
      for (int64_t b0 = 0; b0 < count; b0 += kBlock) errors.run([&] {
        if (!scratch) scratch = std::make_unique<PlaneScratch<T>>(nplane, Fs);
        auto& [re, block] = *scratch;
        const int64_t nb = std::min(kBlock, count - b0);
        for (int64_t b = 0; b < nb; ++b) {
          Cpx* cx = block.p + b * Fs;
          if (rows_plan) {
            std::fill(re.p, re.p + rows * nw, T(0));
            load(b0 + b, re.p);
            if (factor != T(1)) for (int64_t e = 0; e < rows * nw; ++e) re.p[e] *= factor;
            Fftw<T>::exec_r2c(rows_plan, re.p, cx);
            std::fill(reinterpret_cast<T*>(cx + rows * nwc), reinterpret_cast<T*>(cx + F), T(0));
            Fftw<T>::exec_dft(e_.impl_->col_fwd, cx);
          } else {
            std::fill(re.p, re.p + nplane, T(0));
            load(b0 + b, re.p);
            if (factor != T(1)) for (int64_t e = 0; e < nplane; ++e) re.p[e] *= factor;
            Fftw<T>::exec_r2c(e_.impl_->r2c, re.p, cx);
          }
        }
        // Trans2D: BDHW -> HWBD, one contiguous run per frequency (Note [spectrum transposition]).
        transpose(reinterpret_cast<const C*>(block.p), Fs, dst + b0, ld, nb, F);
      });
    }
    errors.rethrow();
  }

  void forward_a(int64_t m0, int64_t mc, int64_t r0, int64_t rc) {
    const auto t0 = now();
    forward(mc * rc, [&](int64_t p, T* plane) { s_.load_a(m0 + p / rc, r0 + p % rc, plane); }, af_, mc * rc, plan_a_,
            s_.a_rows, s_.scale_a);
    t_a_ += ms(t0, now());
  }

  void forward_b(int64_t r0, int64_t rc, int64_t n0, int64_t nc) {
    const auto t0 = now();
    forward(rc * nc, [&](int64_t p, T* plane) { s_.load_b(r0 + p / nc, n0 + p % nc, plane); }, bf_, rc * nc, plan_b_,
            s_.b_rows, s_.scale_b);
    t_b_ += ms(t0, now());
  }

  // Cgemm: one complex product per frequency, C = opA(A) opB(B) (+ C when acc).
  void products(int64_t mc, int64_t rc, int64_t nc, bool acc) {
    const auto t0 = now();
    const ProductSpec<T>& s = s_;
    C *const af = af_, *const bf = bf_, *const cf = cf_;
    ParallelErrors errors("fftw products");  // Note [exceptions in parallel regions]
#pragma omp parallel num_threads(e_.threads_)
    {
      std::vector<C> bk;  // bprop's prepared matrix of one frequency, transposed for the products
#pragma omp for schedule(static)
      for (int64_t k = 0; k < F_; ++k) errors.run([&] {
        C* b = bf + k * rc * nc;
        if (s.b_transposed) {  // prepared panels of b_chunk rows, each stored [freq][nc][rows]
          bk.resize(std::size_t(rc * nc));
          for (int64_t q0 = 0; q0 < rc; q0 += s.b_chunk) {
            const int64_t rows = std::min(s.b_chunk, rc - q0);
            transpose(bf + F_ * nc * q0 + k * nc * rows, rows, bk.data() + q0 * nc, nc, nc, rows);
          }
          b = bk.data();
        }
        if constexpr (std::is_same_v<T, float>) {
          if (e_.kernel_products_) {  // Note [frequency CGEMM]
            freq_cgemm(af + k * mc * rc, b, cf + k * mc * nc, mc, rc, nc, s.conj_a, s.conj_b, acc);
            return;
          }
        }
        Map A(af + k * mc * rc, mc, rc), Cm(cf + k * mc * nc, mc, nc);
        if (!acc) Cm.setZero();
        Map B(b, rc, nc);
        if (s.conj_a && s.conj_b) Cm.noalias() += A.conjugate() * B.conjugate();
        else if (s.conj_a) Cm.noalias() += A.conjugate() * B;
        else if (s.conj_b) Cm.noalias() += A * B.conjugate();
        else Cm.noalias() += A * B;
      });
    }
    errors.rethrow();
    t_gemm_ += ms(t0, now());
  }

  // Trans2D back, C2R, scale, hand the plane to the caller (clip / fold / accumulate).
  void inverse(int64_t m0, int64_t mc, int64_t n0, int64_t nc) {
    const auto t0 = now();
    const int64_t count = mc * nc, F = F_, Fs = Fs_, nplane = nplane_;
    // The inverse's 1/(nh·nw) and 2^c_exp (Note [operand scaling]), in T when that is a normal T,
    // else applied in double.
    const double c_factor = std::ldexp(1.0, s_.c_exp) / double(nplane);
    const bool c_in_t =
        c_factor >= double(std::numeric_limits<T>::min()) && c_factor <= double(std::numeric_limits<T>::max());
    const T scale = T(c_factor);
    ParallelErrors errors("fftw inverse transforms");  // Note [exceptions in parallel regions]
#pragma omp parallel num_threads(e_.threads_)
    {
      std::unique_ptr<PlaneScratch<T>> scratch;
#pragma omp for schedule(dynamic)
      for (int64_t b0 = 0; b0 < count; b0 += kBlock) errors.run([&] {
        if (!scratch) scratch = std::make_unique<PlaneScratch<T>>(nplane, Fs);
        auto& [re, block] = *scratch;
        C* spectra = reinterpret_cast<C*>(block.p);
        const int64_t nb = std::min(kBlock, count - b0);
        transpose(cf_ + b0, count, spectra, Fs, F, nb);
        for (int64_t b = 0; b < nb; ++b) {
          Cpx* cx = block.p + b * Fs;  // the C2R transforms overwrite their input: each plane is used once
          int64_t used = nplane;
          if (plan_c_) {
            Fftw<T>::exec_dft(e_.impl_->col_inv, cx);
            Fftw<T>::exec_c2r(plan_c_, cx, re.p);
            used = s_.c_rows * e_.nw_;
          } else {
            Fftw<T>::exec_c2r(e_.impl_->c2r, cx, re.p);
          }
          if (c_in_t) {
            for (int64_t i = 0; i < used; ++i) re.p[i] *= scale;
          } else {
            for (int64_t i = 0; i < used; ++i) re.p[i] = T(double(re.p[i]) * c_factor);
          }
          if (s_.saw_nonfinite && !all_finite(re.p, used)) s_.saw_nonfinite->store(true, std::memory_order_relaxed);
          const int64_t p = b0 + b;
          s_.store_c(m0 + p / nc, n0 + p % nc, re.p);
        }
      });
    }
    errors.rethrow();
    t_c_ += ms(t0, now());
  }

  const FreqEngine& e_;
  const ProductSpec<T>& s_;
  const int64_t F_, nplane_, Fs_;            // frequencies, real plane size, block stride
  const int64_t mc_max_, nc_max_, rc_max_;  // the chunks
  std::unique_lock<std::mutex> lock_;       // on the engine's buffers, when free
  typename Impl::Buffers own_;              // else this run's own
  typename Impl::Buffers& buf_;
  C *af_ = nullptr, *bf_ = nullptr, *cf_ = nullptr;
  const bool b_prepared_;                   // B read from ProductSpec::b_spectra
  FftwPlan plan_a_ = nullptr, plan_b_ = nullptr, plan_c_ = nullptr;
  double t_a_ = 0, t_b_ = 0, t_gemm_ = 0, t_c_ = 0;
};

template <class T>
void FreqEngine<T>::run(const ProductSpec<T>& s, const ChunkPlan& ch,
                        std::vector<std::pair<std::string, double>>* steps) const {
  Execution x(*this, s, ch);
  x.run();
  x.report(steps);
}

template <class T>
void FreqEngine<T>::transform_b(const ProductSpec<T>& spec, std::complex<T>* dst) const {
  ProductSpec<T> s = spec;
  s.M = 0;
  s.b_spectra = dst;
  s.b_transposed = false;
  ChunkPlan ch;
  ch.mc = 0, ch.rc = s.R, ch.nc = s.b_chunk;
  Execution x(*this, s, ch);
  x.forward_b_chunks();
}

template <class E>
LargeBuffer<E>::~LargeBuffer() {
  std::free(p_);
}

template <class E>
void LargeBuffer<E>::allocate(std::size_t n, const char* what) {
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  if (p_ && n == n_) return;
  std::free(p_);
  p_ = nullptr, n_ = 0;
  const std::size_t bytes = std::max<std::size_t>(n * sizeof(E), 1);
  const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(E) || !(p_ = static_cast<E*>(std::aligned_alloc(kHuge, rounded))))
    throw OutOfMemory(std::string(what) + ": " + std::to_string(bytes) + " bytes failed", bytes);
#ifdef MADV_HUGEPAGE
  madvise(p_, rounded, MADV_HUGEPAGE);  // advice only: without huge pages the buffer still works
#endif
  n_ = n;
}

template class LargeBuffer<std::complex<float>>;
template class LargeBuffer<std::complex<double>>;
template class FreqEngine<float>;
template class FreqEngine<double>;

}  // namespace fftconv
