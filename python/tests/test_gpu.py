"""CUDA tensors through DLPack (PyTorch) against torch.nn.functional.conv2d and its gradients in
float64. Skips unless the extension was built with FFTCONV_PYTHON_CUDA=ON, PyTorch is installed
and a CUDA device is present (run on the GPU host)."""
import numpy as np
import pytest

import fftconv

torch = pytest.importorskip("torch")
if not fftconv.cuda_built:
    pytest.skip("fftconv was built without the CUDA backends (FFTCONV_PYTHON_CUDA=ON)", allow_module_level=True)
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

F = torch.nn.functional
GPU = [b["name"] for b in fftconv.backends() if b["location"] == "cuda" and b["available"]]
SHAPES = [(4, 3, 8, 32, 32, 5, 5, 2, 2), (2, 5, 3, 27, 19, 3, 5, 1, 2), (8, 16, 16, 16, 16, 3, 3, 0, 0)]
MODES = ["zeros", "reflect"]


def reference(x, w, g, ph, pw, mode):
    """fprop, gradInput, gradWeight in float64 by PyTorch autograd (reflect through F.pad)."""
    x = x.double().detach().requires_grad_(True)
    w = w.double().detach().requires_grad_(True)
    xp = F.pad(x, (pw, pw, ph, ph), mode="reflect") if mode == "reflect" else F.pad(x, (pw, pw, ph, ph))
    y = F.conv2d(xp, w)
    y.backward(g.double())
    return y.detach(), x.grad, w.grad


def rel(a, b):
    return (torch.linalg.norm((a.double() - b).flatten()) / torch.linalg.norm(b.flatten())).item()


def tensors(shape, dtype=torch.float32):
    S, f, fo, h, w, kh, kw, ph, pw = shape
    dev = torch.device("cuda")
    x = torch.randn(S, f, h, w, device=dev, dtype=dtype)
    wt = torch.randn(fo, f, kh, kw, device=dev, dtype=dtype)
    g = torch.randn(S, fo, h + 2 * ph - kh + 1, w + 2 * pw - kw + 1, device=dev, dtype=dtype)
    return x, wt, g


@pytest.mark.parametrize("backend", GPU + ["auto"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("tile", [None, "none", "auto", 16])
def test_passes_against_torch(backend, mode, shape, tile):
    x, w, g = tensors(shape)
    ph, pw = shape[7], shape[8]
    kw = dict(padding=(ph, pw), padding_mode=mode, backend=backend, tile=tile)
    try:
        y = fftconv.conv2d(x, w, **kw)
        gi = fftconv.conv2d_input(x.shape, w, g, **kw)
        gw = fftconv.conv2d_weight(x, w.shape, g, **kw)
    except fftconv.UnsupportedError as e:
        pytest.skip(str(e))
    torch.cuda.synchronize()
    assert y.is_cuda and y.dtype == torch.float32 and y.device == x.device
    ry, rgi, rgw = reference(x, w, g, ph, pw, mode)
    assert torch.isfinite(y).all() and torch.isfinite(gi).all() and torch.isfinite(gw).all()
    assert rel(y, ry) < 1e-4
    assert rel(gi, rgi) < 1e-4
    assert rel(gw, rgw) < 1e-4


def test_runs_on_the_callers_stream():
    x, w, g = tensors(SHAPES[0])
    ry = reference(x, w, g, 2, 2, "zeros")[0]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # current stream = s: fftconv picks it up
        y1 = fftconv.conv2d(x, w, padding=2)
    y2 = fftconv.conv2d(x, w, padding=2, stream=s)  # explicit stream object
    s.synchronize()
    assert rel(y1, ry) < 1e-4 and rel(y2, ry) < 1e-4


def test_out_and_errors_on_cuda():
    x, w, _ = tensors(SHAPES[0])
    out = torch.full((4, 8, 32, 32), float("nan"), device="cuda")
    assert fftconv.conv2d(x, w, padding=2, out=out) is out
    assert torch.isfinite(out).all()
    xt = x.transpose(2, 3)  # other strides: computed on a contiguous copy
    assert rel(fftconv.conv2d(xt, w, padding=2), fftconv.conv2d(xt.contiguous(), w, padding=2)) < 1e-6
    with pytest.raises(ValueError, match="is in host memory but input is in CUDA device"):
        fftconv.conv2d(x, w.cpu().numpy(), padding=2)
    with pytest.raises(ValueError, match="runs on host"):
        fftconv.conv2d(x, w, padding=2, backend="direct")
    with pytest.raises(TypeError, match="input: expected dtype float32 or float64, got float16"):
        fftconv.conv2d(x.half(), w.half())


def test_float64_cuda_is_refused_or_correct():
    x, w, g = tensors(SHAPES[0], torch.float64)
    try:
        y = fftconv.conv2d(x, w, padding=2)
    except ValueError as e:  # the GPU backends are float32; the message says so
        assert "float64" in str(e)
        return
    assert rel(y, reference(x, w, g, 2, 2, "zeros")[0]) < 1e-10
