// Host tests of the fbfft backend's options (fbfft_conv::Options): they run without a GPU.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "common/errors.hpp"
#include "gpu/backends.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"

using namespace fftconv;
using fbfft_conv::Fork;
using fbfft_conv::Options;

TEST_CASE("fbfft options: its keys and the planner's are read; another key names fbfft and its keys") {
  CHECK(fbfft_conv::option_keys() ==
        std::vector<std::string_view>{"kernel", "window", "fork", "launch", "tiles_in_flight", "accgrad_reduction"});
  const auto backend = make_fbfft_backend();
  CHECK(backend->option_keys() == fbfft_conv::option_keys());

  const Options d = Options::parse({});
  CHECK(d.kernel == fbfft::Kernel::automatic);
  CHECK(d.windows);
  CHECK(d.fork == Fork::automatic);
  CHECK(d.dependent);
  const Options o = Options::parse({{"kernel", "fourstep"}, {"window", "off"}, {"fork", "on"}, {"launch", "plain"},
                                    {"tiles_in_flight", "3"}, {"accgrad_reduction", "frequency"}});
  CHECK(o.kernel == fbfft::Kernel::fourstep);
  CHECK(!o.windows);
  CHECK(o.fork == Fork::on);
  CHECK(!o.dependent);
  CHECK(Options::parse({{"fork", "off"}}).fork == Fork::off);
  CHECK(Options::parse({{"window", "auto"}, {"launch", "dependent"}}).windows);
  CHECK(Options::parse({{"kernel", "registers"}}).kernel == fbfft::Kernel::registers);

  for (const char* key : {"kernel", "window", "fork", "launch"})  // a bad value names the key
    CHECK_THROWS_WITH_AS(Options::parse({{key, "sideways"}}), doctest::Contains(key), InvalidArgument);
  // cufft's gemm key, a typo: rejected by parse() and by plan(), which checks before it looks for a device.
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=9,k=3,p=1");
  const char* accepted = " (accepted: kernel, window, fork, launch, tiles_in_flight, accgrad_reduction)";
  for (const char* key : {"gemm", "kernels"}) {
    const std::map<std::string, std::string> bad{{"fork", "on"}, {key, "3m"}};
    const std::string want = "fbfft: unknown option '" + std::string(key) + "'" + accepted;
    CHECK_THROWS_WITH_AS(Options::parse(bad), want.c_str(), InvalidArgument);
    PlanOptions po;
    po.extra = bad;
    CHECK_THROWS_WITH_AS(backend->plan(p, Pass::fprop, po), want.c_str(), InvalidArgument);
  }
}
