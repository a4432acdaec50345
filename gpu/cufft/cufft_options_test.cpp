// Host tests of the cufft backend's options (read_cufft_pins, cufft_option_keys, the tune cache's
// file): they run without a GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/errors.hpp"
#include "gpu/backends.hpp"
#include "gpu/cufft/cufft_tune_cache.hpp"
#include "gpu/cufft/cufft_tuner.hpp"

using namespace fftconv;

TEST_CASE("cufft options: its keys and the planner's are read; another key names cufft and its keys") {
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=9,k=3,p=1");
  CHECK(cufft_option_keys() == std::vector<std::string_view>{"gemm", "layout", "edges", "weights", "max_prime", "naive",
                                                             "tiles_in_flight", "accgrad_reduction"});
  const auto backend = make_cufft_backend();
  CHECK(backend->option_keys() == cufft_option_keys());

  PlanOptions o;
  const CufftPins none = read_cufft_pins(p, o);
  CHECK(!none.gemm);
  CHECK(!none.layout);
  CHECK(!none.edges);
  CHECK(!none.weights);
  CHECK(none.max_prime == kDefaultMaxPrime);
  CHECK(!none.naive);
  o.extra = {{"gemm", "3m"},      {"layout", "gather"}, {"edges", "callback"},         {"weights", "dft"},
             {"max_prime", "7"}, {"naive", "1"},       {"tiles_in_flight", "4"}, {"accgrad_reduction", "frequency"}};
  const CufftPins pins = read_cufft_pins(p, o);
  CHECK(pins.gemm == GemmStrategy::gemm3m);
  CHECK(pins.layout == SpectrumLayout::gather);
  CHECK(pins.edges == EdgeMode::callback);
  CHECK(pins.weights == WeightTransform::dft);
  CHECK(pins.max_prime == 7);
  CHECK(pins.naive);

  // A bad value of each own key names the key (the planner's keys are checked by the planner).
  for (const char* key : {"gemm", "layout", "edges", "weights", "max_prime", "naive"}) {
    PlanOptions bad;
    bad.extra[key] = "sideways";
    CHECK_THROWS_WITH_AS(read_cufft_pins(p, bad), doctest::Contains(key), InvalidArgument);
  }
  // fbfft's fork key, a typo: rejected by read_cufft_pins and by plan(), which checks before it
  // looks for a device.
  const char* accepted =
      " (accepted: gemm, layout, edges, weights, max_prime, naive, tiles_in_flight, accgrad_reduction)";
  for (const char* key : {"fork", "Gemm"}) {
    PlanOptions bad;
    bad.extra = {{"gemm", "loop"}, {key, "on"}};
    const std::string want = "cufft: unknown option '" + std::string(key) + "'" + accepted;
    CHECK_THROWS_WITH_AS(read_cufft_pins(p, bad), want.c_str(), InvalidArgument);
    CHECK_THROWS_WITH_AS(backend->plan(p, Pass::fprop, bad), want.c_str(), InvalidArgument);
  }
}

TEST_CASE("cufft tune cache: 'none' keeps the winners in memory and writes no file") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "fftconv_tune_cache_none_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path before = fs::current_path();
  fs::current_path(dir);  // a file called "none" would land here
  TuneRecord rec;
  rec.nh = rec.nw = 16, rec.gemm = "strided", rec.ms = 0.5;
  TuneCache::instance().store("tune-cache-none-test", rec, "none");
  CHECK(TuneCache::instance().find("tune-cache-none-test", "none") == rec);
  CHECK(!fs::exists(dir / "none"));
  TuneCache::instance().store("tune-cache-file-test", rec, "named.json");
  CHECK(fs::exists(dir / "named.json"));
  fs::current_path(before);
  fs::remove_all(dir);
}
