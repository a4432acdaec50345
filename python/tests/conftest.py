"""Shared helpers of the Python tests: reference passes built from scipy.signal.correlate and the
definitions of the passes (bprop = P^T of the full correlation, accgrad = valid correlation of the
padded input with gradOutput), fresh random inputs, and the normwise error measure."""
import os

# PyTorch and the library each carry an OpenMP runtime; with active waiting the idle threads of one
# spin while the other works, which on a 2-core machine made fftconv.torch's tests about 50x slower.
# Set before either runtime starts (this file is imported before the test modules).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import importlib.util  # noqa: E402
import pathlib  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


class _LazySignal:
    """scipy.signal, imported on first use (the GPU tests run where scipy may be missing)."""

    def __getattr__(self, name):
        from scipy import signal as s
        return getattr(s, name)


signal = _LazySignal()


def load_script(relative):
    """A Python script of the repository (e.g. "bench/plot_grid.py") loaded as a module."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_configure(config):
    config.addinivalue_line("markers", "notebooks: executes a teaching notebook with nbclient (slow)")


@pytest.fixture
def rng():
    return np.random.default_rng()  # fresh inputs every run


def pad_input(x, ph, pw, mode):
    """P: zero padding, or mirror (= numpy 'reflect' = PyTorch 'reflect')."""
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), mode="constant" if mode == "zeros" else "reflect")


def unpad_adjoint(gp, h, w, ph, pw, mode):
    """P^T: crop for zero padding; for mirror padding every padded position adds into its source."""
    if mode == "zeros":
        return gp[:, :, ph:ph + h, pw:pw + w].copy()

    def source(i, n, p):
        s = i - p
        return -s if s < 0 else (2 * (n - 1) - s if s >= n else s)

    ys = np.array([source(i, h, ph) for i in range(h + 2 * ph)])
    xs = np.array([source(i, w, pw) for i in range(w + 2 * pw)])
    out = np.zeros(gp.shape[:2] + (h, w), dtype=gp.dtype)
    for a, y in enumerate(ys):
        for b, x in enumerate(xs):
            out[:, :, y, x] += gp[:, :, a, b]
    return out


def ref_fprop(x, w, ph, pw, mode):
    xp = pad_input(x.astype(np.float64), ph, pw, mode)
    S, f = x.shape[:2]
    fo = w.shape[0]
    out = None
    for s in range(S):
        for j in range(fo):
            acc = sum(signal.correlate(xp[s, i], w[j, i].astype(np.float64), mode="valid") for i in range(f))
            if out is None:
                out = np.zeros((S, fo) + acc.shape)
            out[s, j] = acc
    return out


def ref_bprop(g, w, input_size, ph, pw, mode):
    S, f, h, wd = input_size
    fo = w.shape[0]
    gp = np.zeros((S, f, h + 2 * ph, wd + 2 * pw))
    for s in range(S):
        for i in range(f):
            # Full correlation's adjoint = full convolution of gradOutput with the kernel.
            gp[s, i] = sum(signal.convolve(g[s, j].astype(np.float64), w[j, i].astype(np.float64), mode="full")
                           for j in range(fo))
    return unpad_adjoint(gp, h, wd, ph, pw, mode)


def ref_accgrad(x, g, weight_size, ph, pw, mode):
    xp = pad_input(x.astype(np.float64), ph, pw, mode)
    fo, f, kh, kw = weight_size
    out = np.zeros(weight_size)
    for j in range(fo):
        for i in range(f):
            out[j, i] = sum(signal.correlate(xp[s, i], g[s, j].astype(np.float64), mode="valid")
                            for s in range(x.shape[0]))
    return out


def rel_l2(out, ref):
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert np.all(np.isfinite(out)), "non-finite values in the result"
    return np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)


# Normwise tolerances: float32 FFT error grows like eps*log N, far below these for our sizes.
TOL = {"float32": 2e-5, "float64": 1e-12}
