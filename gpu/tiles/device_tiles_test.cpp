// Host tests of the device in-flight rule (gpu/tiles/device_tiles.hpp); they run without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "common/fft_size.hpp"
#include "gpu/cufft/cufft_pipeline.hpp"
#include "gpu/tiles/device_tiles.hpp"
#include "tiling/cost_model.hpp"
#include "tiling/random_problems.hpp"

using namespace fftconv;

TEST_CASE("device_in_flight: the GPU rule fills a share of the untiled plan's workspace (at least 64 MiB, at most 1 GiB), keeps a pinned bound and the limit") {
  // Properties on random problems: at least the CPU rule's count, at most every item, and where it
  // takes more, the largest count whose workspace model fits
  // min(1 GiB, max(share × untiled, CPU rule, 64 MiB)) for both backends' shares.
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> side(2, 64);
  int raised = 0, fewer = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    ConvProblem p = testing::random_tiling_problem(rng);
    p.S = std::uniform_int_distribution<int64_t>(1, 256)(rng);
    const Pass pass = testing::random_pass(rng);
    const int64_t fh = std::max(p.kh, side(rng)), fw = std::max(p.kw, side(rng));
    const double model =
        make_untiled_plan(p, pass, next_pow2(p.wrapped_h()), next_pow2(p.wrapped_w()), p.S).cost.workspace_bytes;
    // Odd trials: a backend's own untiled workspace (here half the model's) and its share.
    const InFlightBudget in = trial % 2 ? InFlightBudget{kCufftUntiledShare, model / 2} : InFlightBudget{};
    const TilePlan cpu = make_tiled_plan(p, pass, fh, fw, side(rng));
    const TilePlan gpu = device_in_flight(cpu, PlanOptions{}, in);
    CAPTURE(p.to_string());
    CAPTURE(cpu.summary());
    CAPTURE(in.untiled_share);
    if (in.untiled_share < 1.0) fewer += gpu.tiles_in_flight < device_in_flight(cpu, PlanOptions{}).tiles_in_flight;
    const double untiled = in.untiled_share * (in.untiled_bytes > 0 ? in.untiled_bytes : model);
    const double budget =
        std::min(kDeviceInFlightBytes, std::max({untiled, cpu.cost.workspace_bytes, kDeviceInFlightFloorBytes}));
    const WorkspaceModel ws = workspace_model(cpu);
    CHECK(gpu.fft_h == cpu.fft_h);
    CHECK(gpu.tiles_in_flight >= cpu.tiles_in_flight);
    CHECK(gpu.tiles_in_flight <= gpu.item_count());
    CHECK(gpu.cost.workspace_bytes == doctest::Approx(ws.at(gpu.tiles_in_flight)));
    if (gpu.tiles_in_flight > cpu.tiles_in_flight) {
      ++raised;
      CHECK(ws.at(gpu.tiles_in_flight) <= budget);
      if (gpu.tiles_in_flight < gpu.item_count()) CHECK(ws.at(gpu.tiles_in_flight + 1) > budget);
    }
  }
  CHECK(raised > 100);
  CHECK(fewer > 20);
  // img512_k15 (S=4, 32 channels, 512x512, k=15) at 64x64 for cufft: an eighth of its untiled
  // pipeline's buffers on 520x520 (the circular extent 519's next 13-smooth size, 1.7 GB with the
  // weights in batches), under a quarter of fbfft's count.
  const ConvProblem img = ConvProblem::parse("S=4,f=32,fo=32,n=512,k=15,p=7");
  const TilePlan it = make_tiled_plan(img, Pass::fprop, 64, 64, kMinTilesInFlight);
  const double img_untiled = double(CufftPipeline::untiled_buffer_bytes(img, Pass::fprop, 520, 520));
  CHECK(img_untiled == doctest::Approx(1.69e9).epsilon(0.02));
  const TilePlan cu = device_in_flight(it, PlanOptions{}, {kCufftUntiledShare, img_untiled});
  CHECK(cu.cost.workspace_bytes <= img_untiled / 8);
  CHECK(workspace_model(it).at(cu.tiles_in_flight + 1) > img_untiled / 8);
  CHECK(4 * cu.tiles_in_flight < device_in_flight(it, PlanOptions{}).tiles_in_flight);
  // The paper's S = 128, x = 57 layer at 16x16: two chunks instead of the CPU rule's 64 (under 1 GiB).
  const ConvProblem big = ConvProblem::parse("S=128,f=128,fo=128,n=57,k=3");
  const TilePlan b = device_in_flight(make_tiled_plan(big, Pass::fprop, 16, 16, kMinTilesInFlight), PlanOptions{});
  CHECK(b.tiles_in_flight > b.item_count() / 2 - 1);
  CHECK(b.tiles_in_flight < b.item_count());
  CHECK(workspace_model(b).at(b.tiles_in_flight) <= kDeviceInFlightBytes);
  // S = 16, x = 64 (untiled about 20 MiB): every item fits the 64 MiB floor, one chunk.
  const ConvProblem small = ConvProblem::parse("S=16,f=16,fo=16,n=64,k=3");
  for (const int64_t t : {16, 32}) {
    const TilePlan s = device_in_flight(make_tiled_plan(small, Pass::bprop, t, t, kMinTilesInFlight), PlanOptions{});
    CHECK(s.tiles_in_flight == s.item_count());
  }
  // L4 at 32x32: the CPU rule's 32 items already hold more than the untiled plan: kept.
  const ConvProblem l4 = ConvProblem::parse("L4,S=128");
  const TilePlan l4t = make_tiled_plan(l4, Pass::fprop, 32, 32, kMinTilesInFlight);
  CHECK(device_in_flight(l4t, PlanOptions{}).tiles_in_flight == kMinTilesInFlight);
  // The workspace limit bounds it (at least one item); a pinned bound and untiled plans are kept.
  const ConvProblem p = ConvProblem::parse("S=64,f=64,fo=64,n=57,k=3,p=1");
  const TilePlan cpu = make_tiled_plan(p, Pass::bprop, 16, 16, kMinTilesInFlight);
  PlanOptions o;
  o.workspace_limit = std::size_t(workspace_model(cpu).at(100));
  CHECK(device_in_flight(cpu, o).tiles_in_flight == 100);
  o.workspace_limit = 1;
  CHECK(device_in_flight(cpu, o).tiles_in_flight == 1);
  PlanOptions pinned, automatic;
  pinned.extra = {{"tiles_in_flight", "7"}};
  automatic.extra = {{"tiles_in_flight", "0"}};
  CHECK(device_in_flight(make_tiled_plan(p, Pass::bprop, 16, 16, 7), pinned).tiles_in_flight == 7);
  CHECK(device_in_flight(cpu, automatic).tiles_in_flight == device_in_flight(cpu, PlanOptions{}).tiles_in_flight);
  CHECK(device_in_flight(cpu, automatic).tiles_in_flight > kMaxTilesInFlight);
  const TilePlan none = make_untiled_plan(p, Pass::bprop, 64, 64, 5);
  CHECK(device_in_flight(none, o).tiles_in_flight == 5);
  // device_tile_plan: a candidate's basis, reduction and count under the rule.
  for (const Candidate& k : choose(p, Pass::accgrad, TilingOptions{}).candidates) {
    if (!k.tiled || !k.feasible) continue;
    const TilePlan d = device_tile_plan(p, Pass::accgrad, k, PlanOptions{});
    CHECK(d.fft_h == k.fft_h);
    CHECK(d.fft_w == k.fft_w);
    CHECK(d.reduction == k.reduction);
    CHECK(d.tiles_in_flight ==
          device_in_flight(make_tiled_plan(p, Pass::accgrad, k.fft_h, k.fft_w, k.tiles_in_flight, k.reduction),
                           PlanOptions{}).tiles_in_flight);
  }
  PlanOptions pins;  // untiled basis pins (too small here) do not enter the tiled budget
  pins.basis_h = pins.basis_w = 4;
  CHECK(device_in_flight(cpu, pins).tiles_in_flight == device_in_flight(cpu, PlanOptions{}).tiles_in_flight);
}

