// fbfft 2-D register kernels of the smooth squares 6..30, one lane per 1-D transform (Note [smooth
// register FFT]): the instances of reg_2d.cuh's templates for kSmoothSides2d[0, kSmoothMedium), and
// the lookup of every smooth square.
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {
constexpr auto kTable = reg2d::smooth_table<0, reg2d::kSmoothMedium>();
}  // namespace

const Launcher* launcher_2d_smooth(int n_h, int n_w) {
  const int i = smooth_side_index(n_h);
  if (n_h != n_w || i < 0) return nullptr;
  const auto k = static_cast<std::size_t>(i);
  if (k < reg2d::kSmoothMedium) return &kTable[k];
  if (k < reg2d::kSmoothLarge) return &launchers_2d_smooth_medium()[k - reg2d::kSmoothMedium];
  return &launchers_2d_smooth_large()[k - reg2d::kSmoothLarge];
}

}  // namespace fftconv::fbfft::detail
