"""The three passes against scipy.signal references and against `direct`, for every host backend,
both paddings, several tile options, float32 and float64, plus the adjoint identity."""
import numpy as np
import pytest

import fftconv
from conftest import TOL, ref_accgrad, ref_bprop, ref_fprop, rel_l2

# (S, f, fo, h, w, kh, kw, ph, pw): square, rectangular with unequal pads, and pad = 0.
SHAPES = [
    (2, 3, 4, 12, 12, 3, 3, 1, 1),
    (2, 2, 3, 13, 17, 3, 5, 1, 2),
    (1, 3, 2, 9, 11, 4, 2, 0, 0),
]
MODES = ["zeros", "reflect"]
HOST = [b["name"] for b in fftconv.backends() if b["location"] == "host" and b["available"]]


def operands(rng, shape, dtype=np.float32):
    S, f, fo, h, w, kh, kw, ph, pw = shape
    oh, ow = h + 2 * ph - kh + 1, w + 2 * pw - kw + 1
    x = rng.standard_normal((S, f, h, w)).astype(dtype)
    wt = rng.standard_normal((fo, f, kh, kw)).astype(dtype)
    g = rng.standard_normal((S, fo, oh, ow)).astype(dtype)
    return x, wt, g


def run_all(x, wt, g, ph, pw, mode, **kw):
    y = fftconv.conv2d(x, wt, padding=(ph, pw), padding_mode=mode, **kw)
    gi = fftconv.conv2d_input(x.shape, wt, g, padding=(ph, pw), padding_mode=mode, **kw)
    gw = fftconv.conv2d_weight(x, wt.shape, g, padding=(ph, pw), padding_mode=mode, **kw)
    return y, gi, gw


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_against_scipy(rng, backend, mode, shape):
    ph, pw = shape[7], shape[8]
    x, wt, g = operands(rng, shape)
    y, gi, gw = run_all(x, wt, g, ph, pw, mode, backend=backend)
    assert y.dtype == gi.dtype == gw.dtype == np.float32
    assert rel_l2(y, ref_fprop(x, wt, ph, pw, mode)) < TOL["float32"]
    assert rel_l2(gi, ref_bprop(g, wt, x.shape, ph, pw, mode)) < TOL["float32"]
    assert rel_l2(gw, ref_accgrad(x, g, wt.shape, ph, pw, mode)) < TOL["float32"]


@pytest.mark.parametrize("tile", [None, "none", "auto", 8, (16, 8), "8x16"])
@pytest.mark.parametrize("mode", MODES)
def test_fftw_tiles_against_direct(rng, tile, mode):
    shape = (2, 3, 4, 21, 18, 3, 5, 1, 2)
    x, wt, g = operands(rng, shape)
    ref = run_all(x, wt, g, 1, 2, mode, backend="direct")
    try:
        out = run_all(x, wt, g, 1, 2, mode, backend="fftw", tile=tile)
    except fftconv.UnsupportedError as e:  # tiled execution not built into this tree yet
        pytest.skip(str(e))
    for o, r in zip(out, ref):
        assert rel_l2(o, r) < TOL["float32"]


@pytest.mark.parametrize("backend", ["direct", "fftw"])
@pytest.mark.parametrize("mode", MODES)
def test_float64(rng, backend, mode):
    shape = SHAPES[1]
    x, wt, g = operands(rng, shape, np.float64)
    ph, pw = shape[7], shape[8]
    y, gi, gw = run_all(x, wt, g, ph, pw, mode, backend=backend, tile="none")
    assert y.dtype == np.float64
    assert rel_l2(y, ref_fprop(x, wt, ph, pw, mode)) < TOL["float64"]
    assert rel_l2(gi, ref_bprop(g, wt, x.shape, ph, pw, mode)) < TOL["float64"]
    assert rel_l2(gw, ref_accgrad(x, g, wt.shape, ph, pw, mode)) < TOL["float64"]


def test_float64_auto_selects_a_float64_backend(rng):
    x, wt, _ = operands(rng, SHAPES[0], np.float64)
    y = fftconv.conv2d(x, wt, padding=1)
    assert y.dtype == np.float64
    assert rel_l2(y, ref_fprop(x, wt, 1, 1, "zeros")) < TOL["float64"]


@pytest.mark.parametrize("mode", MODES)
def test_adjoint_identity(rng, mode):
    # <fprop(x, w), g> = <x, bprop(g, w)> = <w, accgrad(x, g)>, in float64 through direct.
    shape = (2, 3, 2, 10, 9, 3, 4, 2, 1)
    x, wt, g = operands(rng, shape, np.float64)
    y, gi, gw = run_all(x, wt, g, 2, 1, mode, backend="direct")
    a, b, c = np.vdot(y, g), np.vdot(x, gi), np.vdot(wt, gw)
    assert abs(a - b) <= 1e-10 * abs(a) and abs(a - c) <= 1e-10 * abs(a)


def test_padding_forms_agree(rng):
    x, wt, _ = operands(rng, (1, 2, 2, 9, 9, 3, 3, 1, 1))
    a = fftconv.conv2d(x, wt, padding=1)
    b = fftconv.conv2d(x, wt, padding=(1, 1))
    c = fftconv.conv2d(x, wt, padding="same")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert fftconv.conv2d(x, wt, padding="valid").shape == (1, 2, 7, 7)


def test_out_argument_is_written_and_returned(rng):
    x, wt, _ = operands(rng, SHAPES[0])
    out = np.full((2, 4, 12, 12), np.nan, dtype=np.float32)
    r = fftconv.conv2d(x, wt, padding=1, out=out)
    assert r is out and np.all(np.isfinite(out))
    assert rel_l2(out, ref_fprop(x, wt, 1, 1, "zeros")) < TOL["float32"]


def test_readonly_inputs_are_accepted(rng):
    x, wt, _ = operands(rng, SHAPES[0])
    x.flags.writeable = False
    wt.flags.writeable = False
    y = fftconv.conv2d(x, wt, padding=1, backend="direct")
    assert rel_l2(y, ref_fprop(x, wt, 1, 1, "zeros")) < TOL["float32"]
