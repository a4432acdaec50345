"""Problem, plan() and the tiling planner as Python data: round trips, repeatable execution,
thread safety, and tile geometry (the tiles partition the region the planner names)."""
import threading

import numpy as np
import pytest

import fftconv
from conftest import TOL, ref_fprop, rel_l2


def test_problem_spec_round_trip():
    p = fftconv.Problem("S=4,f=3,fo=8,h=20,w=24,kh=5,kw=3,ph=2,pw=1,pad=mirror")
    assert fftconv.Problem(p.spec) == p and hash(fftconv.Problem(p.spec)) == hash(p)
    assert (p.S, p.f, p.fo, p.h, p.w, p.kh, p.kw, p.ph, p.pw, p.padding) == (4, 3, 8, 20, 24, 5, 3, 2, 1, "mirror")
    assert p.out_h == 20 and p.out_w == 24 and p.output_shape == (4, 8, 20, 24)
    assert (p.padded_h, p.wrapped_h) == (24, 24)  # mirror padding: the padded side
    z = fftconv.Problem("S=1,f=1,fo=1,n=56,k=31,p=15")  # zero padding wraps: n + p
    assert (z.padded_h, z.wrapped_h, z.wrapped_w) == (86, 71, 71)
    assert p.result_shape("accgrad") == p.weight_shape == (8, 3, 5, 3)
    assert fftconv.Problem("n=32,k=3", S=2) == fftconv.Problem(S=2, n=32, k=3)
    assert fftconv.Problem.preset("L1").S == 128
    assert "Problem('" in repr(p)
    import pickle
    assert pickle.loads(pickle.dumps(p)) == p


@pytest.mark.parametrize("pass_", ["fprop", "bprop", "accgrad"])
def test_plan_describes_itself(pass_):
    pl = fftconv.plan("S=2,f=3,fo=4,n=32,k=5,p=2", pass_)
    assert pl.pass_ == pass_ and pl.backend in {b["name"] for b in fftconv.backends()}
    assert isinstance(pl.describe(), str) and pl.describe()
    assert pl.describe().startswith(f"auto -> {pl.backend}")  # the backend auto chose, not "auto"
    assert pl.workspace_bytes >= 0
    assert pl.tile_plan is None or isinstance(pl.tile_plan, dict)
    assert isinstance(pl.tiling(), dict)
    assert pass_ in repr(pl)


def test_plan_execute_is_repeatable_and_thread_safe(rng):
    pl = fftconv.plan("S=2,f=3,fo=4,n=24,k=5,p=2", "fprop", backend="fftw", tile="none")
    x = rng.standard_normal((2, 3, 24, 24)).astype(np.float32)
    w = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    first = pl.execute(x, w)
    assert rel_l2(first, ref_fprop(x, w, 2, 2, "zeros")) < TOL["float32"]
    # Repeatable to rounding (bitwise repeatability is the backend's own tests' business).
    assert rel_l2(pl.execute(x, w), first) < TOL["float32"]
    results = [None] * 6

    def work(k):
        results[k] = pl.execute(x, w)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert rel_l2(r, first) < TOL["float32"]


def test_backends_listing():
    bs = fftconv.backends()
    assert [b["name"] for b in bs][-1] == "direct"
    for b in bs:
        assert set(b) == {"name", "location", "available", "reason", "summary", "options"}
        assert b["location"] in ("host", "cuda")
    options = {b["name"]: b["options"] for b in bs}
    assert options["fftw"] == ["fftw_planner", "fftw_cgemm", "tiles_in_flight", "accgrad_reduction", "stride"]
    assert options["direct"] == [] and options["im2col"] == ["stride"]


def covered(tiles, key, shape):
    grid = np.zeros(shape, dtype=int)
    for t in tiles:
        win = t[key]
        grid[win["y0"]:win["y0"] + win["h"], win["x0"]:win["x0"] + win["w"]] += 1
    return grid


@pytest.mark.parametrize("pass_", ["fprop", "bprop", "accgrad"])
@pytest.mark.parametrize("pad", ["zero", "mirror"])
def test_tiles_partition_the_region(pass_, pad):
    p = fftconv.Problem(S=2, f=3, fo=4, h=37, w=29, kh=5, kw=3, ph=2, pw=1, padding=pad)
    t = fftconv.tile_plan(p, pass_, 16, 8)
    assert t["tiled"] and t["fft_h"] == 16 and t["fft_w"] == 8
    assert t["out_tile_h"] == 12 and t["out_tile_w"] == 6
    tiles = t["tiles"]
    assert len(tiles) == t["count"] == t["rows"]["count"] * t["cols"]["count"]
    r = t["region"]
    grid = covered(tiles, "window", (r["y0"] + r["h"], r["x0"] + r["w"]))
    assert np.all(grid[r["y0"]:, r["x0"]:] == 1) and grid.sum() == r["h"] * r["w"]
    for tile in tiles:  # each transformed window fits the tile's basis
        assert tile["read"]["h"] <= 16 and tile["read"]["w"] <= 8


def test_backend_options_are_checked_by_the_backend():
    p = "S=2,f=3,fo=4,n=12,k=3"
    accepted = r"\(accepted: fftw_planner, fftw_cgemm, tiles_in_flight, accgrad_reduction, stride\)"
    for tile in (None, "none", 8):  # tile=None falls back to none on Unsupported, never on a bad key
        with pytest.raises(ValueError, match="fftw: unknown option 'bogus' " + accepted):
            fftconv.plan(p, "fprop", backend="fftw", tile=tile, extra={"bogus": "1"})
    with pytest.raises(ValueError, match="unknown option 'bogus'"):
        fftconv.plan(p, "fprop", extra={"bogus": "1"})  # backend='auto'
    with pytest.raises(ValueError, match=r"direct: unknown option 'fftw_planner' \(accepted: none\)"):
        fftconv.plan(p, "fprop", backend="direct", extra={"fftw_planner": "estimate"})
    with pytest.raises(ValueError, match="fftw_cgemm: expected auto or eigen, got 'blas'"):
        fftconv.plan(p, "fprop", backend="fftw", extra={"fftw_cgemm": "blas"})
    pl = fftconv.plan(p, "accgrad", backend="fftw", tile=8,
                      extra={"fftw_planner": "estimate", "tiles_in_flight": "2", "accgrad_reduction": "time"})
    assert pl.tile_plan["tiles_in_flight"] == 2
    assert pl.tiling()["plan"]["reduction"] == "time"  # the planner gets its own keys of the plan's extra
    with pytest.raises(ValueError, match=r"tiling: unknown option 'fftw_planner' "
                                         r"\(accepted: tiles_in_flight, accgrad_reduction\)"):
        fftconv.tiling(p, "fprop", extra={"fftw_planner": "estimate"})


def test_tiling_choice_data():
    c = fftconv.tiling("S=8,f=16,fo=16,n=64,k=5", "fprop", tile="auto")
    labels = [k["label"] for k in c["candidates"]]
    assert c["chosen"] in labels and labels[c["chosen_index"]] == c["chosen"]
    assert any(not k["tiled"] for k in c["candidates"])  # "none" is always a candidate
    assert c["reason"] and c["table"]
    feasible = [k for k in c["candidates"] if k["feasible"]]
    assert min(k["cost"] for k in feasible) == c["candidates"][c["chosen_index"]]["cost"]
    fixed = fftconv.tiling("S=8,f=16,fo=16,n=64,k=5", "accgrad", tile=(32, 16))
    assert fixed["plan"]["fft_h"] == 32 and fixed["plan"]["fft_w"] == 16
    assert fixed["plan"]["reduction"] in ("frequency", "time")
    none = fftconv.tiling("S=8,f=16,fo=16,n=64,k=5", "bprop", tile="none")
    assert not none["plan"]["tiled"] and none["plan"]["tiles"] is None
    small = fftconv.tiling("S=8,f=16,fo=16,n=64,k=5", "fprop", tile="auto", tile_sizes=[16])
    assert {k["label"] for k in small["candidates"] if k["tiled"]} == {"16x16"}


def test_math_is_checked_and_cpu_backends_keep_fp32_products():
    spec = "S=2,f=3,fo=4,n=10,k=3"
    with pytest.raises(ValueError, match="math: expected auto, fp32, 3xtf32 or tf32, got 'fp16'"):
        fftconv.plan(spec, "fprop", backend="fftw", math="fp16")
    with pytest.raises(TypeError, match="math"):
        fftconv.plan(spec, "fprop", backend="fftw", math=3)
    with pytest.raises(ValueError, match="math=3xtf32 runs on GPU tensor cores only"):
        fftconv.plan(spec, "fprop", backend="fftw", tile="none", math="3xtf32")
    p = fftconv.plan(spec, "fprop", backend="fftw", tile="none", math="fp32")
    assert p.math == ""  # no GPU products


def test_prepare_weights_is_refused_where_a_plan_has_no_weight_spectra():
    p = fftconv.plan("S=2,f=3,fo=4,n=10,k=3", "fprop", backend="im2col")
    w = np.ones((4, 3, 3, 3), np.float32)
    with pytest.raises(ValueError, match="prepare_weights"):
        p.prepare_weights(w)


def test_fftw_fprop_and_bprop_share_prepared_weight_spectra(rng):
    # Untiled fftw plans of fprop and bprop of one problem pick the same basis (their estimated costs
    # are equal), so spectra prepared by one serve both.
    spec = "S=2,f=3,fo=5,h=13,w=9,kh=3,kw=5,ph=1,pw=2,pad=mirror"
    fp = fftconv.plan(spec, "fprop", backend="fftw", tile="none")
    bp = fftconv.plan(spec, "bprop", backend="fftw", tile="none")
    p = fp.problem
    x = rng.standard_normal(p.input_shape).astype(np.float32)
    w = rng.standard_normal(p.weight_shape).astype(np.float32)
    g = rng.standard_normal(p.output_shape).astype(np.float32)
    prepared = fp.prepare_weights(w)
    y, y_shared = fp.execute(x, w), fp.execute(x, prepared=prepared)
    gx, gx_shared = bp.execute(grad_output=g, weight=w), bp.execute(grad_output=g, prepared=prepared)
    assert rel_l2(y_shared, y) <= TOL["float32"] and rel_l2(gx_shared, gx) <= TOL["float32"]
    other = fftconv.plan("S=2,f=4,fo=5,h=13,w=9,kh=3,kw=5,ph=1,pw=2,pad=mirror", "fprop", backend="fftw", tile="none")
    with pytest.raises(ValueError, match="prepared: weights prepared as"):
        other.execute(rng.standard_normal(other.problem.input_shape).astype(np.float32), prepared=prepared)


def test_auto_plans_for_prepared_weights_when_asked(rng):
    spec = "S=2,f=3,fo=4,n=10,k=3"
    with pytest.raises(TypeError, match="prepared_weights: expected a bool, got 1"):
        fftconv.plan(spec, "fprop", prepared_weights=1)
    # Planned for weight spectra prepared once: whichever backend auto chooses runs on them when it
    # prepares them, and computes the convolution either way.
    p = fftconv.plan(spec, "fprop", prepared_weights=True)
    x = rng.standard_normal(p.problem.input_shape).astype(np.float32)
    w = rng.standard_normal(p.problem.weight_shape).astype(np.float32)
    y = p.execute(x, w)
    assert rel_l2(y, ref_fprop(x, w, 0, 0, "zeros")) <= TOL["float32"]
    if p.backend in ("fftw", "fbfft"):
        assert rel_l2(p.execute(x, prepared=p.prepare_weights(w)), y) <= TOL["float32"]
