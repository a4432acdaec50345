// The fused depthwise kernels of the sides 36..64 (reg_2d.cuh, Note [fused depthwise transforms]): a
// translation unit of their own, so that they compile beside the others.
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {
constexpr auto kTable = reg2d::depthwise_table<reg2d::kDepthwiseMedium, reg2d::kDepthwiseLarge>();
}  // namespace

const reg2d::DepthwiseLauncher* launchers_depthwise_medium() { return kTable.data(); }

}  // namespace fftconv::fbfft::detail
