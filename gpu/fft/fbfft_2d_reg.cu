// fbfft 2-D register kernels of power-of-two sides (2..64 except the 4/8 squares and rectangles of
// fbfft_2d_plane.cu, and 128x128): the instance tables of the templates in reg_2d.cuh (Note [register
// 2-D kernels]); the smooth squares are in fbfft_2d_smooth_*.cu.
#include <array>
#include <utility>

#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft::detail {
namespace {

using reg2d::reg_launcher;

// Which sizes have an instance: the registers family (G0 = 0) sides 2..64 and 128x128, except the
// 4/8 squares and rectangles (the one-thread-per-plane kernels of fbfft_2d_plane.cu); the lanes
// family (G0 = 4) sides 16 and 32, square or not.
constexpr bool has_instance(int lh, int lw, int g0) {
  if (g0 != 0) return lh >= 4 && lh <= 5 && lw >= 4 && lw <= 5;
  return lh >= 1 && lw >= 1 && !((lh > 6 || lw > 6) && !(lh == 7 && lw == 7)) && !(lh >= 2 && lh <= 3 && lw >= 2 && lw <= 3);
}

template <int LH, int LW, int G0>
constexpr Launcher make_launcher() {
  if constexpr (has_instance(LH, LW, G0))
    return reg_launcher<1 << LH, 1 << LW, G0>();
  else
    return Launcher{};
}

// The family's table, indexed log2 n_h * (kMaxLog2d + 1) + log2 n_w.
template <int G0, std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide, G0>()...};
}

constexpr auto kTable2dReg = make_table<0>(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});
constexpr auto kTable2dLanes = make_table<4>(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d_registers() { return kTable2dReg.data(); }
const Launcher* launchers_2d_lanes() { return kTable2dLanes.data(); }

}  // namespace fftconv::fbfft::detail
