// The fused depthwise kernels of the sides 72..120 (reg_2d.cuh, Note [fused depthwise transforms]): a
// translation unit of their own, so that they compile beside the others.
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {
constexpr auto kTable = reg2d::depthwise_table<reg2d::kDepthwiseLarge, reg2d::kDepthwiseEnd>();
}  // namespace

const reg2d::DepthwiseLauncher* launchers_depthwise_large() { return kTable.data(); }

}  // namespace fftconv::fbfft::detail
