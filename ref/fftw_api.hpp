// The FFTW API of one precision (float: fftwf_*, double: fftw_*) behind one name, for code templated
// on the precision: the fftw backend's engine and the FFT self-tests (validation/fft_selftest).
#pragma once
#include <fftw3.h>

#include <cstddef>
#include <mutex>

namespace fftconv {

// The FFTW planner is not thread-safe: every plan of the fftw backend is made under this lock.
std::mutex& fftw_planner_mutex();

template <class T>
struct Fftw;
template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  static Plan r2c(int n0, int n1, float* in, Cpx* out, unsigned fl) { return fftwf_plan_dft_r2c_2d(n0, n1, in, out, fl); }
  static Plan c2r(int n0, int n1, Cpx* in, float* out, unsigned fl) { return fftwf_plan_dft_c2r_2d(n0, n1, in, out, fl); }
  static Plan rows_r2c(int n, int howmany, float* in, Cpx* out, int odist, unsigned fl) {
    return fftwf_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, n, out, nullptr, 1, odist, fl);
  }
  static Plan rows_c2r(int n, int howmany, Cpx* in, int idist, float* out, unsigned fl) {
    return fftwf_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1, n, fl);
  }
  static Plan cols(int n, int howmany, Cpx* data, int sign, unsigned fl) {
    return fftwf_plan_many_dft(1, &n, howmany, data, nullptr, howmany, 1, data, nullptr, howmany, 1, sign, fl);
  }
  static Plan many_c2c_2d(int n[2], int howmany, Cpx* in, Cpx* out, int sign, unsigned fl) {
    return fftwf_plan_many_dft(2, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1, n[0] * n[1], sign, fl);
  }
  static Plan many_r2c_2d(int n[2], int howmany, float* in, Cpx* out, unsigned fl) {
    return fftwf_plan_many_dft_r2c(2, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1, n[0] * (n[1] / 2 + 1),
                                   fl);
  }
  static void execute(Plan p) { fftwf_execute(p); }
  static void exec_dft(Plan p, Cpx* io) { fftwf_execute_dft(p, io, io); }
  static void exec_r2c(Plan p, float* in, Cpx* out) { fftwf_execute_dft_r2c(p, in, out); }
  static void exec_c2r(Plan p, Cpx* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
  static void* alloc(std::size_t b) { return fftwf_malloc(b); }
  static bool import_wisdom(const char* file) { return fftwf_import_wisdom_from_filename(file) != 0; }
  static char* wisdom_string() { return fftwf_export_wisdom_to_string(); }
  static void forget_wisdom() { fftwf_forget_wisdom(); }
  static constexpr const char* kWisdomSuffix = "-float";
  static void release(void* p) { fftwf_free(p); }
};
template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  static Plan r2c(int n0, int n1, double* in, Cpx* out, unsigned fl) { return fftw_plan_dft_r2c_2d(n0, n1, in, out, fl); }
  static Plan c2r(int n0, int n1, Cpx* in, double* out, unsigned fl) { return fftw_plan_dft_c2r_2d(n0, n1, in, out, fl); }
  static Plan rows_r2c(int n, int howmany, double* in, Cpx* out, int odist, unsigned fl) {
    return fftw_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, n, out, nullptr, 1, odist, fl);
  }
  static Plan rows_c2r(int n, int howmany, Cpx* in, int idist, double* out, unsigned fl) {
    return fftw_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1, n, fl);
  }
  static Plan cols(int n, int howmany, Cpx* data, int sign, unsigned fl) {
    return fftw_plan_many_dft(1, &n, howmany, data, nullptr, howmany, 1, data, nullptr, howmany, 1, sign, fl);
  }
  static Plan many_c2c_2d(int n[2], int howmany, Cpx* in, Cpx* out, int sign, unsigned fl) {
    return fftw_plan_many_dft(2, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1, n[0] * n[1], sign, fl);
  }
  static Plan many_r2c_2d(int n[2], int howmany, double* in, Cpx* out, unsigned fl) {
    return fftw_plan_many_dft_r2c(2, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1, n[0] * (n[1] / 2 + 1),
                                  fl);
  }
  static void execute(Plan p) { fftw_execute(p); }
  static void exec_dft(Plan p, Cpx* io) { fftw_execute_dft(p, io, io); }
  static void exec_r2c(Plan p, double* in, Cpx* out) { fftw_execute_dft_r2c(p, in, out); }
  static void exec_c2r(Plan p, Cpx* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
  static void* alloc(std::size_t b) { return fftw_malloc(b); }
  static bool import_wisdom(const char* file) { return fftw_import_wisdom_from_filename(file) != 0; }
  static char* wisdom_string() { return fftw_export_wisdom_to_string(); }
  static void forget_wisdom() { fftw_forget_wisdom(); }
  static constexpr const char* kWisdomSuffix = "-double";
  static void release(void* p) { fftw_free(p); }
};

}  // namespace fftconv
