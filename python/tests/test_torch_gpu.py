"""fftconv.torch on CUDA tensors against torch.nn.functional.conv2d in float64: the forward and the
three gradients for every option (judged by the scale of their terms, as on the CPU), on every CUDA
backend, on the current stream. Skips unless the extension was built with FFTCONV_PYTHON_CUDA=ON,
PyTorch is installed and a CUDA device is present (run on the GPU host)."""
import pytest

import fftconv

torch = pytest.importorskip("torch")
if not fftconv.cuda_built:
    pytest.skip("fftconv was built without the CUDA backends (FFTCONV_PYTHON_CUDA=ON)", allow_module_level=True)
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fftconv.torch as ft  # noqa: E402
from test_torch import IDS, OPTIONS, assert_matches_float64, check_resnet18, make  # noqa: E402

GPU = [b["name"] for b in fftconv.backends() if b["location"] == "cuda" and b["available"]]


@pytest.mark.parametrize("tile", ["none", "auto"])
@pytest.mark.parametrize("backend", GPU + ["auto"])
@pytest.mark.parametrize("opt", OPTIONS, ids=IDS)
def test_cuda_tensors_match_torch(opt, backend, tile):
    x, w, b, kw = make(opt, torch.float32, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # the library runs on the current stream
        try:
            y = ft.conv2d(x, w, b, backend=backend, tile=tile, **kw)
        except fftconv.UnsupportedError as e:
            pytest.skip(str(e))
        g = torch.randn_like(y)
        y.backward(g)
    torch.cuda.synchronize()
    assert y.is_cuda and y.dtype == torch.float32
    assert_matches_float64(y, x, w, b, g, kw, 1e-5)  # larger bases and tiles than on the host


def test_resnet18_on_cuda_matches_torch():
    torch.backends.cudnn.allow_tf32 = False  # the reference in strict fp32
    check_resnet18("cuda", 4)
