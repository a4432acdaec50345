// Cost model of a TilePlan (see cost_model.hpp): counts transforms, complex products, bytes.
#include "tiling/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "common/fft_size.hpp"

namespace fftconv {

namespace {

struct Shape {
  double S, f, fo, T, A, F;  // images, channels, tiles, real basis area, complex (Hermitian) area
  double cin, cout, weights;  // per item: channels transformed forward / inverse; weight transforms
};

Shape shape_of(const TilePlan& p) {
  const ConvProblem& c = p.problem;
  Shape s{};
  s.S = double(c.S);
  s.f = double(c.f);
  s.fo = double(c.fo);
  s.T = double(p.tile_count());
  s.A = double(p.fft_h) * double(p.fft_w);
  s.F = double(p.fft_h) * double(p.fft_w / 2 + 1);
  switch (p.pass) {
    case Pass::fprop: s.cin = s.f; s.cout = s.fo; s.weights = s.f * s.fo; break;
    case Pass::bprop: s.cin = s.fo; s.cout = s.f; s.weights = s.f * s.fo; break;
    case Pass::accgrad: s.cin = s.f + s.fo; s.cout = 0; s.weights = 0; break;
  }
  return s;
}

// Per axis: sum over tiles of the read length, and the length of the union of the reads.
std::pair<double, double> axis_reads(const TilePlan& p, bool rows) {
  const ConvProblem& c = p.problem;
  const int64_t k = rows ? c.kh : c.kw;
  if (!p.tiled) {
    const double n = double(p.pass == Pass::bprop ? (rows ? c.out_h() : c.out_w()) : (rows ? c.padded_h() : c.padded_w()));
    return {n, n};
  }
  const AxisTiling& a = rows ? p.rows : p.cols;
  return {double(a.extent) + double(a.count) * double(k - 1), double(a.extent) + double(k - 1)};
}

}  // namespace

WorkspaceModel workspace_model(const TilePlan& p) {
  const Shape s = shape_of(p);
  WorkspaceModel m;
  // Per item: the real staging planes and the spectra of what is transformed forward and inverse.
  m.freq_per_item = 8 * s.F * (s.cin + s.cout);
  m.per_item = m.freq_per_item + 4 * s.A * (s.cin + s.cout);
  if (p.pass != Pass::accgrad) {
    m.freq_fixed = 8 * s.F * s.weights;  // the kernel spectra
    m.fixed = m.freq_fixed;
  } else {
    // The fo×f spectrum accumulator (frequency reduction) or the product of the current spatial
    // tile (time reduction), and one real inverse plane per (j, i).
    m.freq_fixed = 8 * s.F * s.f * s.fo;
    m.fixed = m.freq_fixed + 4 * s.A * s.f * s.fo;
    if (p.reduction == AccgradReduction::time && p.tiled) {
      // A batch of b tile-major items spans up to b/S + 1 spatial tiles, one product each.
      m.freq_per_item += 8 * s.F * s.f * s.fo / s.S;
      m.per_item += 8 * s.F * s.f * s.fo / s.S;
    }
  }
  return m;
}

TileCost estimate_cost(const TilePlan& p) {
  const Shape s = shape_of(p);
  const ConvProblem& c = p.problem;
  const double items = s.S * s.T, b = double(p.tiles_in_flight);
  const double batches = std::ceil(items / b);
  const double r = rfft2_flops(p.fft_h, p.fft_w);
  TileCost t;
  double finals = 0;  // accgrad inverses
  if (p.pass == Pass::accgrad)
    finals = s.f * s.fo * (p.reduction == AccgradReduction::time && p.tiled ? s.T : 1.0);
  // Kernel spectra and accgrad's final inverses touch only kh rows (Note [row-pruned transforms]).
  const double r_kernel = rfft2_flops_rows(p.fft_h, p.fft_w, c.kh);
  t.transforms = items * (s.cin + s.cout) + s.weights + finals;
  t.transform_flops = r * items * (s.cin + s.cout) + r_kernel * (s.weights + finals);
  t.pointwise_flops = 8 * s.F * items * s.f * s.fo;
  if (p.pass == Pass::accgrad && p.reduction == AccgradReduction::time && p.tiled)
    t.extra_flops = s.f * s.fo * double(c.kh) * double(c.kw) * s.T;

  const auto [sum_h, union_h] = axis_reads(p, true);
  const auto [sum_w, union_w] = axis_reads(p, false);
  const double read_area = sum_h * sum_w;  // over all tiles of one plane
  // accgrad's gradOutput tiles partition gradOutput: no halo.
  const double g_area = double(c.out_h()) * double(c.out_w());
  double gather = 0;
  if (p.pass == Pass::accgrad) gather = 4 * s.S * (s.f * read_area + s.fo * g_area);
  else gather = 4 * s.S * s.cin * read_area;
  gather += 4 * items * s.cin * s.A;                       // staging planes written (data + zeros)
  double freq = 2 * 8 * s.F * items * (s.cin + s.cout);    // spectra written by FFTs, read by products
  if (p.pass != Pass::accgrad) freq += 8 * s.F * s.weights * batches;  // kernel spectra per batch
  else if (p.reduction == AccgradReduction::frequency || !p.tiled) freq += 2 * 8 * s.F * s.f * s.fo * batches;
  else freq += 2 * 8 * s.F * s.f * s.fo * std::max(batches, s.T);
  double scatter = 4 * items * s.cout * s.A;  // inverse planes
  if (p.pass == Pass::accgrad) scatter += 4 * finals * s.A;
  t.traffic_bytes = gather + freq + scatter;

  const WorkspaceModel ws = workspace_model(p);
  t.workspace_bytes = ws.at(p.tiles_in_flight);
  t.frequency_bytes = ws.freq_fixed + b * ws.freq_per_item;

  const double source = union_h * union_w;
  t.overlap_waste = source > 0 ? (read_area - source) / source : 0;
  t.padding_waste = 1.0 - read_area / (s.T * s.A);
  t.uncached_fraction = t.workspace_bytes > kCacheBytes ? 1.0 - kCacheBytes / t.workspace_bytes : 0.0;
  const double per_byte = kFlopsPerCachedByte + (kFlopsPerDramByte - kFlopsPerCachedByte) * t.uncached_fraction;
  t.transform_cost = t.transform_flops + kFlopsPerTransform * t.transforms;
  t.pointwise_cost = kPointwiseWeight * t.pointwise_flops;
  t.traffic_cost = per_byte * t.traffic_bytes;
  t.cost = t.transform_cost + t.pointwise_cost + t.extra_flops + t.traffic_cost;
  return t;
}

}  // namespace fftconv
