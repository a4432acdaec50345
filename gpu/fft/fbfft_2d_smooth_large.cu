// fbfft 2-D register kernels of the smooth squares 72..120, four lanes per 1-D transform (Note
// [smooth register FFT]): the instances of reg_2d.cuh's templates for kSmoothSides2d[kSmoothLarge, kSmoothEnd).
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {
constexpr auto kTable = reg2d::smooth_table<reg2d::kSmoothLarge, reg2d::kSmoothEnd>();
}  // namespace

const Launcher* launchers_2d_smooth_large() { return kTable.data(); }

}  // namespace fftconv::fbfft::detail
