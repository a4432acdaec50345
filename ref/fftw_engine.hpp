// The frequency-domain product engine behind the `fftw` backend (paper Table 1 on the CPU):
// R2C transforms of operand planes, transposition to frequency-major (HWBD) buffers, one Eigen
// complex GEMM per frequency with conjugation, transposition back, C2R and a caller-side clip.
// It knows nothing of passes or tiles: the backend maps those onto (M, R, N) and plane loaders.
#pragma once
#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fftconv {

// C(m, n) = sum_r opA(A(m, r)) · opB(B(r, n)) in the frequency domain, on an nh×nw real basis;
// op = conjugate when the flag is set. Loaders fill a zero-initialised nh×nw real plane (row-major)
// with the time-domain operand; store_c receives the inverse transform already divided by nh·nw.
// store_c may be called concurrently for different (m, n).
// Note [row-pruned transforms]
// a_rows / b_rows: how many leading rows of a loaded plane can be nonzero (a kh-row kernel in a
// 64-row basis); c_rows: how many leading rows of the inverse store_c reads. 0 = all. The engine
// then runs the 2-D transform as row transforms of only those rows plus full column transforms
// (the same arithmetic as FFTW's 2-D R2C/C2R, minus the transforms of all-zero or unused rows).
template <class T>
struct ProductSpec {
  int64_t M = 0, R = 0, N = 0;
  int64_t a_rows = 0, b_rows = 0, c_rows = 0;
  bool conj_a = false, conj_b = false;
  std::function<void(int64_t m, int64_t r, T* plane)> load_a;
  std::function<void(int64_t r, int64_t n, T* plane)> load_b;
  std::function<void(int64_t m, int64_t n, const T* plane)> store_c;
  // Note [operand scaling]: loaded planes of A and B are multiplied by scale_a and scale_b (powers
  // of two), and the inverse transform by 2^c_exp (with the 1/(nh·nw) of the inverse); when
  // saw_nonfinite is set, a non-finite value in an inverse transform sets *saw_nonfinite.
  T scale_a = 1, scale_b = 1;
  int c_exp = 0;
  std::atomic<bool>* saw_nonfinite = nullptr;
  // Note [prepared weight spectra]: when set, B is not loaded or transformed: its spectra are read
  // from here, in chunks of b_chunk columns, chunk [n0, n0 + nc) at F·R·n0 laid out [freq][R][nc];
  // with b_transposed, chunks of b_chunk rows, chunk [r0, r0 + rc) at F·N·r0 laid out [freq][N][rc]
  // (op(B) reads each frequency's matrix transposed). The run's ChunkPlan must match
  // (chunk_prepared()). transform_b() writes the first layout.
  const std::complex<T>* b_spectra = nullptr;
  bool b_transposed = false;
  int64_t b_chunk = 0;
};

// Uninitialised memory for large frequency buffers (prepared weight spectra: 132 MB for L5),
// 2 MiB-aligned and, where the kernel offers them, on transparent huge pages: the frequency-major
// stores touch one page per frequency, and with 4 KiB pages preparing L5's spectra at S=2 spent
// more time in page faults and TLB misses than in its transforms.
template <class E>
class LargeBuffer {
 public:
  LargeBuffer() = default;
  ~LargeBuffer();
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  LargeBuffer(LargeBuffer&& o) noexcept { swap(o); }
  LargeBuffer& operator=(LargeBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  void swap(LargeBuffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }
  // n elements, contents unspecified (the memory already held when it has n elements); throws
  // OutOfMemory naming `what` and the bytes.
  void allocate(std::size_t n, const char* what);
  E* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  E* p_ = nullptr;
  std::size_t n_ = 0;
};
extern template class LargeBuffer<std::complex<float>>;
extern template class LargeBuffer<std::complex<double>>;

// How the engine splits M and N to stay within a workspace budget.
struct ChunkPlan {
  int64_t mc = 0, nc = 0;       // chunk sizes of M and N
  int64_t rc = 0;               // chunk of the reduction R; < R accumulates C over R chunks
  std::size_t workspace = 0;    // bytes of frequency buffers + per-thread scratch
  int64_t b_transforms = 0;     // forward transforms of B including recomputation across M chunks
};

// How an engine plans and multiplies: `measure` selects FFTW_MEASURE (slower planning, faster
// execution) over FFTW_ESTIMATE; threads 0 = OpenMP's default; eigen_products keeps Eigen's
// products in float even where the AVX-512 kernel exists (Note [frequency CGEMM]).
// Note [fftw wisdom]
// FFTW_MEASURE plans time FFTW's algorithms, and that time came back in every process. With a
// wisdom stem (PlanOptions::tune_cache's folder + "/fftw-wisdom", which `auto` points into its plan
// cache folder), an engine, and a depthwise plan, imports the file stem + "-float" (or "-double")
// once per process before its first plan, and writes FFTW's wisdom back whenever planning added to
// it (to a temporary file, then renamed). A plan of the same sizes in a later process then takes
// FFTW's earlier choice without timing: a fftw plan that `auto` chose earlier (L1-L5 at S = 2 and
// 8, two cores) took 1.5-2.3 ms in a new process with it and 8-208 ms without. Invariant: wisdom
// only lets the planner skip measurements; FFTW measures any size it lacks, and an unreadable file
// is a miss.
struct EngineOptions {
  bool measure = true;
  int threads = 0;
  bool eigen_products = false;
  // Note [fftw wisdom]; "" keeps FFTW's wisdom in memory only (engine_options() leaves it "" without
  // measure)
  std::string wisdom_stem;
};

// The wisdom stem beside a tune cache file ("" for none or "none").
std::string fftw_wisdom_stem(const std::string& tune_cache);
// FFTW's wisdom of precision T as text.
template <class T>
std::string fftw_wisdom_text();
// Forgets FFTW's wisdom of precision T and which files were read (tests: as a new process).
template <class T>
void forget_fftw_wisdom();
// Reads `stem`'s wisdom file once per process and stem; call under fftw_planner_mutex().
template <class T>
void load_fftw_wisdom(const std::string& stem);
// Writes FFTW's wisdom to `stem`'s file when it differs from what was last read or written there;
// call under fftw_planner_mutex().
template <class T>
void save_fftw_wisdom(const std::string& stem);

template <class T>
class FreqEngine {
 public:
  // Creates the FFTW plans once (guarded: the FFTW planner is not thread-safe).
  FreqEngine(int64_t nh, int64_t nw, const EngineOptions& options);
  ~FreqEngine();
  FreqEngine(const FreqEngine&) = delete;
  FreqEngine& operator=(const FreqEngine&) = delete;

  int64_t nh() const { return nh_; }
  int64_t nw() const { return nw_; }
  int64_t nfreq() const { return nh_ * (nw_ / 2 + 1); }
  int threads() const { return threads_; }
  // What multiplies the spectra: "avx512 kernel" (Note [frequency CGEMM]) or "Eigen".
  const char* products() const { return kernel_products_ ? "avx512 kernel" : "Eigen"; }
  // Largest chunks whose workspace fits `budget` (0 = unlimited), with M chunks at most mc_cap and
  // R chunks at most rc_cap (0 = no cap): N shrinks first, then M, then R.
  // Throws Unsupported naming workspace_limit when even 1×1×1 does not fit.
  ChunkPlan chunk(int64_t M, int64_t R, int64_t N, std::size_t budget, int64_t mc_cap = 0, int64_t rc_cap = 0) const;
  std::size_t workspace_bytes(int64_t mc, int64_t rc, int64_t nc) const;
  // Chunks for a run whose B comes from ProductSpec::b_spectra in chunks of b_chunk (columns, or
  // rows when b_transposed, read in R chunks of whole chunks of rows): M the largest chunk whose A
  // and C buffers fit `budget` (at least 1; B's spectra are not workspace).
  ChunkPlan chunk_prepared(int64_t M, int64_t R, int64_t N, int64_t b_chunk, bool b_transposed,
                           std::size_t budget) const;
  // The forward transforms of spec's B (R×N planes by load_b, b_rows, scale_b) into dst in chunks of
  // spec.b_chunk columns: the spectra a later run reads through ProductSpec::b_spectra.
  void transform_b(const ProductSpec<T>& spec, std::complex<T>* dst) const;
  // When `steps` is given, adds the wall time (ms) of each pipeline step to it.
  void run(const ProductSpec<T>& spec, const ChunkPlan& chunks,
           std::vector<std::pair<std::string, double>>* steps = nullptr) const;

  struct Impl;  // the FFTW plans (fftw_engine.cpp)

 private:
  class Execution;  // one run() (fftw_engine.cpp)
  int64_t nh_, nw_;
  int threads_;
  bool kernel_products_;
  std::unique_ptr<Impl> impl_;
};

extern template class FreqEngine<float>;
extern template class FreqEngine<double>;

}  // namespace fftconv
