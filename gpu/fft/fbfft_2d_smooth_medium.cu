// fbfft 2-D register kernels of the smooth squares 36..60, two or four lanes per 1-D transform (Note
// [smooth register FFT]): the instances of reg_2d.cuh's templates for kSmoothSides2d[kSmoothMedium, kSmoothLarge).
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {
constexpr auto kTable = reg2d::smooth_table<reg2d::kSmoothMedium, reg2d::kSmoothLarge>();
}  // namespace

const Launcher* launchers_2d_smooth_medium() { return kTable.data(); }

}  // namespace fftconv::fbfft::detail
