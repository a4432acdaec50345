// libFuzzer target (clang -fsanitize=fuzzer,address,undefined; scripts/fuzz.sh): ConvProblem::parse
// and the tiling planner must either plan or throw a typed fftconv error, and every plan they
// return must keep the tile invariants (checked on sampled tiles).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "tiling/planner.hpp"

using namespace fftconv;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void check_tile(const TilePlan& t, int64_t index) {
  const Tile e = t.tile(index);
  const ConvProblem& p = t.problem;
  require(t.region().contains(e.window) && !e.window.empty());
  require(e.read.h == e.window.h + p.kh - 1 && e.read.w == e.window.w + p.kw - 1);
  require(e.read.h <= t.fft_h && e.read.w <= t.fft_w);
  require(e.read.contains(e.read_valid));
  if (t.pass == Pass::bprop) {
    require(Window{0, 0, p.out_h(), p.out_w()}.contains(e.read_valid));
  } else {
    require(Window{0, 0, p.padded_h(), p.padded_w()}.contains(e.read));
    require(e.border == !Window{p.ph, p.pw, p.h, p.w}.contains(e.read));
  }
}

void check_plan(const TilingChoice& c, const TilingOptions& o) {
  const TilePlan& t = c.plan;
  require(t.tiles_in_flight >= 1);
  if (o.workspace_limit) require(t.cost.workspace_bytes <= double(o.workspace_limit));
  require(c.chosen < c.candidates.size() && c.candidates[c.chosen].feasible);
  require(!explain(c).empty());
  if (!t.tiled) return;
  const int64_t n = t.tile_count();
  require(n >= 1 && t.rows.count * t.rows.step >= t.rows.extent && t.cols.count * t.cols.step >= t.cols.extent);
  require((t.rows.count - 1) * t.rows.step < t.rows.extent && (t.cols.count - 1) * t.cols.step < t.cols.extent);
  for (int64_t k : {int64_t(0), n / 2, n - 1, t.cols.count - 1, n - t.cols.count}) check_tile(t, k);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const Pass pass = Pass(data[0] % 3);
  const uint8_t mode = data[1];
  const int64_t fh = 2 + data[2] % 80, fw = 2 + data[3] % 80;
  const std::string spec(reinterpret_cast<const char*>(data + 4), size - 4);
  TilingOptions o;
  o.policy = mode & 1 ? SizePolicy::smooth : SizePolicy::pow2;
  o.workspace_limit = mode & 2 ? std::size_t(1) << (10 + (mode >> 3) % 24) : 0;
  if (mode & 4) o.tiles_in_flight = 1 + (mode >> 4);
  try {
    const ConvProblem p = ConvProblem::parse(spec);
    require(ConvProblem::parse(p.to_string()) == p);
    switch ((mode >> 5) % 3) {
      case 0: check_plan(choose(p, pass, o), o); break;
      case 1: check_plan(choose_fixed(p, pass, fh, fw, o), o); break;
      default: check_plan(choose_untiled(p, pass, o), o); break;
    }
  } catch (const InvalidProblem&) {
  } catch (const InvalidArgument&) {
  } catch (const Unsupported&) {
  }
  return 0;
}
