// Host tests of the fbfft backend's options (fbfft_conv::Options): they run without a GPU.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "common/errors.hpp"
#include "gpu/backends.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"
#include "gpu/fft/fbfft.hpp"
#include "tiling/planner.hpp"

using namespace fftconv;
using fbfft_conv::Fork;
using fbfft_conv::Options;

TEST_CASE("fbfft options: its keys and the planner's are read; another key names fbfft and its keys") {
  CHECK(fbfft_conv::option_keys() ==
        std::vector<std::string_view>{"kernel", "window", "fork", "launch", "fused", "products", "tiles_in_flight",
                                      "accgrad_reduction"});
  const auto backend = make_fbfft_backend();
  CHECK(backend->option_keys() == fbfft_conv::option_keys());

  const Options d = Options::parse({});
  CHECK(d.kernel == fbfft::Kernel::automatic);
  CHECK(d.windows);
  CHECK(d.fork == Fork::automatic);
  CHECK(d.dependent);
  CHECK(d.fused == fbfft_conv::Fused::off);
  CHECK(Options::parse({{"fused", "on"}}).fused == fbfft_conv::Fused::on);
  CHECK(Options::parse({{"fused", "auto"}}).fused == fbfft_conv::Fused::automatic);
  CHECK(d.products == fbfft_conv::Products::automatic);
  CHECK(Options::parse({{"products", "gemm"}}).products == fbfft_conv::Products::gemm);
  CHECK(Options::parse({{"products", "smallk"}}).products == fbfft_conv::Products::smallk);
  const Options o = Options::parse({{"kernel", "fourstep"}, {"window", "off"}, {"fork", "on"}, {"launch", "plain"},
                                    {"tiles_in_flight", "3"}, {"accgrad_reduction", "frequency"}});
  CHECK(o.kernel == fbfft::Kernel::fourstep);
  CHECK(!o.windows);
  CHECK(o.fork == Fork::on);
  CHECK(!o.dependent);
  CHECK(Options::parse({{"fork", "off"}}).fork == Fork::off);
  CHECK(Options::parse({{"window", "auto"}, {"launch", "dependent"}}).windows);
  CHECK(Options::parse({{"kernel", "registers"}}).kernel == fbfft::Kernel::registers);

  for (const char* key : {"kernel", "window", "fork", "launch", "fused", "products"})  // a bad value names the key
    CHECK_THROWS_WITH_AS(Options::parse({{key, "sideways"}}), doctest::Contains(key), InvalidArgument);
  // cufft's gemm key, a typo: rejected by parse() and by plan(), which checks before it looks for a device.
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=9,k=3,p=1");
  const char* accepted = " (accepted: kernel, window, fork, launch, fused, products, tiles_in_flight, accgrad_reduction)";
  for (const char* key : {"gemm", "kernels"}) {
    const std::map<std::string, std::string> bad{{"fork", "on"}, {key, "3m"}};
    const std::string want = "fbfft: unknown option '" + std::string(key) + "'" + accepted;
    CHECK_THROWS_WITH_AS(Options::parse(bad), want.c_str(), InvalidArgument);
    PlanOptions po;
    po.extra = bad;
    CHECK_THROWS_WITH_AS(backend->plan(p, Pass::fprop, po), want.c_str(), InvalidArgument);
  }
}

TEST_CASE("fbfft fused tiles (Note [fused tiles]): what the fused kernel runs, its budget and block, without a device") {
  const ConvProblem l1 = ConvProblem::parse("L1");
  PlanOptions o;
  o.tile = TileSpec::parse("32");
  const TilePlan t32 = plan_tiling(l1, Pass::fprop, o).plan;
  CHECK(fbfft_conv::fused_tiles_support(l1, Pass::fprop, &t32).ok);
  CHECK(!fbfft_conv::fused_tiles_support(l1, Pass::fprop, nullptr).ok);
  const Support bprop = fbfft_conv::fused_tiles_support(l1, Pass::bprop, &t32);
  CHECK(!bprop.ok);
  CHECK(bprop.reason.find("pass=bprop") != std::string::npos);
  o.tile = TileSpec::parse("64");
  const TilePlan t64 = plan_tiling(l1, Pass::fprop, o).plan;
  CHECK(fbfft_conv::fused_tiles_support(l1, Pass::fprop, &t64).reason.find("64x64") != std::string::npos);
  const ConvProblem mirror = ConvProblem::parse("S=1,f=2,fo=2,n=40,k=3,p=1,pad=mirror");
  o.tile = TileSpec::parse("16");
  const TilePlan t16 = plan_tiling(mirror, Pass::fprop, o).plan;
  CHECK(fbfft_conv::fused_tiles_support(mirror, Pass::fprop, &t16).reason.find("pad=mirror") != std::string::npos);
  // The budget: 36 input spectra at 32x32, 137 at 16x16; the reason names f and the limit.
  CHECK(fbfft::fused_tiles_plane_bytes(32) == 4360);
  CHECK(fbfft::fused_tiles_plane_bytes(16) == 1160);
  CHECK(fbfft::fused_tiles_unsupported(32, 36).empty());
  CHECK(fbfft::fused_tiles_unsupported(32, 37).find("f=37") != std::string::npos);
  CHECK(fbfft::fused_tiles_unsupported(32, 37).find("at most f=36") != std::string::npos);
  CHECK(fbfft::fused_tiles_unsupported(16, 137).empty());
  CHECK(!fbfft::fused_tiles_unsupported(16, 138).empty());
  CHECK(!fbfft::fused_tiles_unsupported(8, 1).empty());
  // Items per block: L1 at 32x32 takes two (96,560 bytes, two blocks per multiprocessor), at 16x16 four.
  CHECK(fbfft::fused_tiles_per_block(32, 3) == 2);
  CHECK(fbfft::fused_tiles_smem_bytes(32, 3, 2) < 113 * 1024);
  CHECK(fbfft::fused_tiles_per_block(16, 3) == 4);
  CHECK(fbfft::fused_tiles_per_block(32, 36) == 1);
  CHECK(fbfft::fused_tiles_smem_bytes(32, 36, 1) <= 227 * 1024);
  CHECK(fbfft::fused_tiles_smem_bytes(16, 137, 1) <= 227 * 1024);
}
