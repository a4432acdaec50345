// Tests of the registry, backend selection and option parsing.
#include <doctest/doctest.h>

#include <functional>

#include "common/backend.hpp"
#include "common/errors.hpp"

using namespace fftconv;

namespace {
struct FakeBackend : Backend {
  std::string n;
  Location loc;
  bool avail;
  int64_t max_k;
  std::vector<std::string_view> keys;
  FakeBackend(std::string name, Location l, bool a, int64_t mk, std::vector<std::string_view> k = {})
      : n(std::move(name)), loc(l), avail(a), max_k(mk), keys(std::move(k)) {}
  std::string_view name() const override { return n; }
  Location location() const override { return loc; }
  Support available() const override { return {avail, avail ? "" : "no device"}; }
  Support supports(const ConvProblem& p, Pass, DType d) const override {
    if (d != DType::f32) return {false, "f32 only"};
    if (p.kh > max_k) return {false, "kernel too large"};
    return {};
  }
  std::unique_ptr<Plan> plan(const ConvProblem&, Pass, const PlanOptions&) const override { return nullptr; }
  std::string_view summary() const override { return "fake"; }
  std::vector<std::string_view> option_keys() const override { return keys; }
};

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}
}  // namespace

TEST_CASE("selection takes the first available backend that supports the problem") {
  Registry r;
  r.add(std::make_shared<FakeBackend>("gpu", Location::cuda, false, 100));
  r.add(std::make_shared<FakeBackend>("small", Location::host, true, 3));
  r.add(std::make_shared<FakeBackend>("any", Location::host, true, 1000));
  auto p3 = ConvProblem::parse("n=8,k=3"), p5 = ConvProblem::parse("n=8,k=5");
  CHECK(select_backend(r, p3, Pass::fprop, DType::f32).name() == "small");
  CHECK(select_backend(r, p5, Pass::fprop, DType::f32).name() == "any");
  Location cuda = Location::cuda;
  try {
    select_backend(r, p3, Pass::fprop, DType::f32, &cuda);
    FAIL("expected Unsupported");
  } catch (const Unsupported& e) {
    CHECK(std::string(e.what()).find("no device") != std::string::npos);
  }
  CHECK_THROWS_AS(select_backend(r, p3, Pass::fprop, DType::f64), Unsupported);
  CHECK_THROWS_AS(r.get("nope"), InvalidArgument);
  CHECK_THROWS_AS(r.add(std::make_shared<FakeBackend>("any", Location::host, true, 1)), InvalidArgument);
}

TEST_CASE("tile specs") {
  CHECK(TileSpec::parse("none").kind == TileSpec::Kind::none);
  CHECK(TileSpec::parse("auto").kind == TileSpec::Kind::automatic);
  auto t = TileSpec::parse("32x16");
  CHECK(t.fft_h == 32);
  CHECK(t.fft_w == 16);
  CHECK(t.to_string() == "32x16");
  CHECK(TileSpec::parse("16").to_string() == "16");
  for (const char* bad : {"", "x", "0", "1", "16x", "abc", "16x16x16", "-4", "99999"})
    CHECK_THROWS_AS(TileSpec::parse(bad), InvalidArgument);
}

TEST_CASE("a backend's option keys: an unknown key names the backend and the keys it accepts") {
  const FakeBackend a("alpha", Location::host, true, 9, {"colour", "shape"});
  const FakeBackend none("plain", Location::host, true, 9);
  PlanOptions o;
  CHECK_NOTHROW(check_option_keys(a, o));
  CHECK_NOTHROW(check_option_keys(none, o));
  o.extra = {{"shape", "round"}, {"colour", "red"}};
  CHECK_NOTHROW(check_option_keys(a, o));
  o.extra.emplace("size", "9");
  CHECK(message_of([&] { check_option_keys(a, o); }) == "alpha: unknown option 'size' (accepted: colour, shape)");
  o.extra = {{"colour", "red"}};
  CHECK(message_of([&] { check_option_keys(none, o); }) == "plain: unknown option 'colour' (accepted: none)");
  CHECK(message_of([&] { check_option_keys("named", o.extra, {"Colour"}); }) ==
        "named: unknown option 'colour' (accepted: Colour)");  // keys are case-sensitive
}

TEST_CASE("one PlanOptions for several backends: a key of any of them is accepted, each gets its own") {
  const FakeBackend a("alpha", Location::host, true, 9, {"colour", "shared"});
  const FakeBackend b("beta", Location::host, true, 9, {"size", "shared"});
  const FakeBackend c("gamma", Location::host, true, 9);
  const std::vector<const Backend*> ab{&a, &b}, abc{&a, &b, &c};
  PlanOptions o;
  o.threads = 3;
  o.extra = {{"colour", "red"}, {"size", "9"}, {"shared", "1"}};
  CHECK_NOTHROW(check_option_keys(ab, o.extra));
  CHECK_NOTHROW(check_option_keys(abc, o.extra));
  const PlanOptions oa = options_for(a, o), ob = options_for(b, o), oc = options_for(c, o);
  CHECK(oa.extra == std::map<std::string, std::string>{{"colour", "red"}, {"shared", "1"}});
  CHECK(ob.extra == std::map<std::string, std::string>{{"shared", "1"}, {"size", "9"}});
  CHECK(oc.extra.empty());
  CHECK(oc.threads == 3);  // the rest of the options is kept
  CHECK_NOTHROW(check_option_keys(a, oa));
  CHECK_NOTHROW(check_option_keys(b, ob));
  // A key none of them accepts is an error naming every backend's keys; one backend: its own message.
  o.extra.emplace("weight", "1");
  CHECK(message_of([&] { check_option_keys(abc, o.extra); }) ==
        "alpha, beta, gamma: unknown option 'weight' (accepted: alpha: colour, shared; beta: size, shared; gamma: none)");
  CHECK(message_of([&] { check_option_keys(std::vector<const Backend*>{&b}, {{"colour", "red"}}); }) ==
        "beta: unknown option 'colour' (accepted: size, shared)");
  CHECK_THROWS_AS(check_option_keys(std::vector<const Backend*>{}, {{"colour", "red"}}), InvalidArgument);
  CHECK_NOTHROW(check_option_keys(std::vector<const Backend*>{&c}, {}));
}

TEST_CASE("check_threads: 0 and 1..hardware_threads() pass, the rest names the counts") {
  CHECK(hardware_threads() >= 1);
  CHECK_NOTHROW(check_threads(0));
  CHECK_NOTHROW(check_threads(1));
  CHECK_NOTHROW(check_threads(hardware_threads()));
  CHECK_THROWS_WITH_AS(check_threads(-1), "threads: must be >= 0, got -1", InvalidArgument);
  CHECK_THROWS_WITH_AS(check_threads(hardware_threads() + 1), doctest::Contains("hardware threads"), InvalidArgument);
  CHECK_THROWS_AS(check_threads(100000), InvalidArgument);
}

TEST_CASE("Registry::get: a backend the build leaves out says why, an unknown name lists the known ones") {
  Registry r;
  r.add_absent("cufft", "not built with CUDA");
  CHECK_THROWS_WITH_AS(r.get("cufft"), "backend: 'cufft' is not built with CUDA", Unsupported);
  CHECK_THROWS_WITH_AS(r.get("nosuch"), doctest::Contains("unknown name 'nosuch'"), InvalidArgument);
  CHECK(r.find("cufft") == nullptr);
}

TEST_CASE("is_depthwise and is_pointwise name the problems the FFT backends compute natively") {
  CHECK(is_depthwise(ConvProblem::parse("S=2,f=8,fo=8,h=9,w=9,kh=3,kw=3,g=8")));
  CHECK_FALSE(is_depthwise(ConvProblem::parse("S=2,f=8,fo=8,h=9,w=9,kh=3,kw=3,g=4")));
  CHECK_FALSE(is_depthwise(ConvProblem::parse("S=2,f=8,fo=8,h=9,w=9,kh=3,kw=3,g=8,s=2")));
  CHECK(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=1")));
  CHECK(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=1,pad=mirror")));
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=1,ph=1,pw=0")));  // padded
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=3")));
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=1,s=2")));  // lowered first
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=8,fo=8,h=9,w=7,kh=1,kw=1,g=2")));
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=8,fo=4,h=9,w=7,kh=1,kw=1,bias=1")));
}
