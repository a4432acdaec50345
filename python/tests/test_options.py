"""The NumPy-level API with torch.nn.functional.conv2d's options (stride, dilation, groups, bias,
circular padding): every host backend, tiled and untiled, against `direct` (which computes each
option from its definition), gradBias, and the errors of bad options."""
import numpy as np
import pytest

import fftconv
from conftest import rel_l2

HOST = [b["name"] for b in fftconv.backends() if b["location"] == "host" and b["available"]]

# (input shape, weight shape, stride, padding, dilation, groups, padding_mode)
CASES = [
    ((2, 3, 9, 9), (4, 3, 3, 3), 2, 1, 1, 1, "zeros"),
    ((2, 4, 10, 7), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2, "reflect"),
    ((1, 4, 8, 8), (4, 1, 5, 5), 1, 2, 1, 4, "circular"),
    ((2, 2, 11, 12), (4, 1, 3, 3), 3, 2, 2, 2, "circular"),
]


def run(x, w, b, g, stride, padding, dilation, groups, mode, backend, tile):
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups, padding_mode=mode, backend=backend,
              tile=tile)
    y = fftconv.conv2d(x, w, b, **kw)
    gi = fftconv.conv2d_input(x.shape, w, g, **kw)
    gw, gb = fftconv.conv2d_weight(x, w.shape, g, grad_bias=True, **kw)
    return y, gi, gw, gb


@pytest.mark.parametrize("tile", [None, "none"])
@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c[2:])))
def test_options_against_direct(rng, case, backend, tile):
    xs, ws, stride, padding, dilation, groups, mode = case
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    y0 = fftconv.conv2d(x, w, b, stride, padding, dilation, groups, mode, backend="direct")
    g = rng.standard_normal(y0.shape).astype(np.float32)
    ref = run(x, w, b, g, stride, padding, dilation, groups, mode, "direct", "none")
    got = run(x, w, b, g, stride, padding, dilation, groups, mode, backend, tile)
    for r, o in zip(ref, got):
        assert o.shape == r.shape and o.dtype == np.float32
        assert rel_l2(o, r) < 1e-5
    np.testing.assert_allclose(ref[3], g.astype(np.float64).sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-4)


def test_plan_describes_the_lowering():
    p = fftconv.Problem("S=2,f=4,fo=4,n=12,k=3,p=1,s=2,g=4,bias=1,pad=circular")
    assert (p.sh, p.sw, p.g, p.bias, p.padding) == (2, 2, 4, True, "circular")
    assert p.weight_shape == (4, 1, 3, 3) and p.out_h == 6
    text = fftconv.plan(p, "fprop", "fftw", "none").describe()
    assert "polyphase" in text and "circular" in text and "bias" in text
    assert fftconv.Problem(n=9, k=3, s=2, d=2, g=1).spec.endswith("sh=2,sw=2,dh=2,dw=2")


def test_bias_operands_are_checked():
    x = np.zeros((1, 2, 6, 6), np.float32)
    w = np.zeros((3, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match="bias"):
        fftconv.conv2d(x, w, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="bias"):
        fftconv.conv2d(x, w, np.zeros(3, np.float64))
    gw, gb = fftconv.conv2d_weight(x, w.shape, np.ones((1, 3, 4, 4), np.float32), grad_bias=True)
    np.testing.assert_array_equal(gb, np.full(3, 16.0, np.float32))


@pytest.mark.parametrize("kw, fragment", [
    (dict(stride=0), "stride"), (dict(dilation=(1, -1)), "dilation"), (dict(groups=3), "groups"),
    (dict(groups=0), "groups"), (dict(padding_mode="spiral"), "padding_mode"), (dict(dilation=4), "dilated"),
    (dict(padding=7, padding_mode="circular"), "circular"), (dict(padding="same", stride=2), "same"),
])
def test_bad_options_raise_value_error(kw, fragment):
    x = np.zeros((1, 2, 6, 6), np.float32)
    w = np.zeros((2, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match=fragment):
        fftconv.conv2d(x, w, **kw)
    with pytest.raises(TypeError, match="stride"):
        fftconv.conv2d(x, w, stride=1.5)
