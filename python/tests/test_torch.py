"""fftconv.torch against PyTorch: torch.autograd.gradcheck in float64 for every option, the float32 forward
and its gradients against PyTorch's in float64 on every CPU backend, the Conv2d
module's state_dict, and a ResNet-18 converted layer by layer. Skips when PyTorch is not installed."""
import warnings

import pytest

torch = pytest.importorskip("torch")
import fftconv  # noqa: E402
import fftconv.torch as ft  # noqa: E402

F = torch.nn.functional
HOST = [b["name"] for b in fftconv.backends() if b["location"] == "host" and b["available"]]

# (name, input shape, weight shape, stride, padding, dilation, groups, bias, padding_mode)
OPTIONS = [
    ("plain", (2, 3, 7, 5), (4, 3, 3, 2), 1, 0, 1, 1, True, "zeros"),
    ("strided", (2, 3, 7, 7), (4, 3, 3, 3), 2, 1, 1, 1, True, "zeros"),
    ("stride_hw", (1, 2, 8, 9), (3, 2, 3, 2), (2, 3), (1, 0), 1, 1, False, "zeros"),
    ("dilated", (2, 2, 8, 8), (3, 2, 3, 2), 1, 0, (2, 3), 1, True, "zeros"),
    ("groups", (2, 4, 6, 5), (6, 2, 3, 2), 1, 1, 1, 2, True, "zeros"),
    ("depthwise", (2, 4, 6, 6), (4, 1, 3, 3), 1, 1, 1, 4, True, "zeros"),
    ("depthwise_multiplier", (1, 3, 6, 6), (6, 1, 3, 3), 2, 1, 1, 3, False, "zeros"),
    ("reflect", (2, 2, 6, 7), (3, 2, 3, 3), 1, (1, 2), 1, 1, True, "reflect"),
    ("circular", (2, 2, 4, 5), (2, 2, 3, 3), 1, (1, 2), 1, 1, True, "circular"),
    ("circular_strided_dilated", (1, 2, 9, 8), (4, 1, 3, 3), (2, 3), (2, 3), 2, 2, True, "circular"),
    ("same_even", (1, 2, 6, 6), (3, 2, 4, 2), 1, "same", 1, 1, True, "zeros"),
    ("same_dilated_reflect", (1, 2, 7, 7), (2, 2, 3, 3), 1, "same", 2, 1, False, "reflect"),
    ("valid", (1, 2, 6, 6), (2, 2, 3, 3), 1, "valid", 1, 1, True, "zeros"),
    ("replicate", (1, 2, 6, 6), (2, 2, 3, 3), 2, 1, 1, 1, True, "replicate"),
    ("one_by_one_strided", (2, 4, 7, 7), (3, 4, 1, 1), 2, 0, 1, 1, False, "zeros"),
]
IDS = [o[0] for o in OPTIONS]


def make(opt, dtype, requires_grad=True, device="cpu"):
    _, xs, ws, stride, padding, dilation, groups, bias, mode = opt
    gen = lambda *s: torch.randn(*s, dtype=dtype, device=device, requires_grad=requires_grad)  # noqa: E731
    x, w = gen(*xs), gen(*ws)
    b = gen(ws[0]) if bias else None
    return x, w, b, dict(stride=stride, padding=padding, dilation=dilation, groups=groups, padding_mode=mode)


def torch_reference(x, w, b, stride, padding, dilation, groups, padding_mode):
    """torch.nn.Conv2d's forward, including its non-zero padding modes. PyTorch's note that 'same' with an even
    kernel pads a copy concerns its own speed, not the reference's values, so it is silenced here."""
    conv = torch.nn.Conv2d(x.shape[1], w.shape[0], tuple(w.shape[2:]), stride, padding, dilation, groups, b is not None,
                           padding_mode, dtype=x.dtype)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using padding='same' with even kernel lengths", category=UserWarning)
        return conv._conv_forward(x, w, b)


def reference64(x, w, b, g, kw):
    """PyTorch's output and gradients in float64 on the same values, and the same on their absolute values: the
    scale a float32 result is judged against, so that a sum whose terms cancel (the bias gradient of a few
    random values) is judged by its terms, as the library's tolerance model does (Note [cancellation])."""
    def run(absolute):
        def leaf(t):
            if t is None:
                return None
            t = t.detach().double()
            return (t.abs() if absolute else t).requires_grad_()
        x64, w64, b64 = leaf(x), leaf(w), leaf(b)
        y = torch_reference(x64, w64, b64, **kw)
        y.backward(g.double().abs() if absolute else g.double())
        return [y.detach()] + [t.grad for t in (x64, w64, b64) if t is not None]
    return run(False), run(True)


def scaled_error(a, ref, mag):
    """||a - ref|| / ||mag|| in float64 (mag: the result on absolute values, at least |ref| everywhere)."""
    return (torch.linalg.norm((a.double() - ref).flatten()) / max(torch.linalg.norm(mag.flatten()), 1e-30)).item()


def assert_matches_float64(y, x, w, b, g, kw, bound):
    """The float32 output y and the gradients of x, w (and b) after y.backward(g), each within `bound` of
    PyTorch's float64 result by scaled_error."""
    got = [y.detach()] + [t.grad for t in (x, w, b) if t is not None]
    ref, mag = reference64(x, w, b, g, kw)
    for name, a, r, m in zip(["output", "grad input", "grad weight", "grad bias"], got, ref, mag):
        assert a.shape == r.shape, name
        assert scaled_error(a, r, m) < bound, name


def rel(a, b):
    return (torch.linalg.norm((a - b).flatten()) / max(torch.linalg.norm(b.flatten()), 1e-30)).item()


@pytest.mark.parametrize("backend", ["fftw", "direct"])
@pytest.mark.parametrize("opt", OPTIONS, ids=IDS)
def test_gradcheck_float64(opt, backend):
    x, w, b, kw = make(opt, torch.float64)
    inputs = (x, w) if b is None else (x, w, b)
    f = lambda x, w, b=None: ft.conv2d(x, w, b, backend=backend, **kw)  # noqa: E731
    assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("tile", ["none", "auto"])
@pytest.mark.parametrize("backend", HOST + ["auto"])
@pytest.mark.parametrize("opt", OPTIONS, ids=IDS)
def test_float32_matches_torch(opt, backend, tile):
    x, w, b, kw = make(opt, torch.float32)
    y = ft.conv2d(x, w, b, backend=backend, tile=tile, **kw)
    g = torch.randn_like(y)
    y.backward(g)
    assert y.dtype == torch.float32
    assert_matches_float64(y, x, w, b, g, kw, 1e-6)  # at most 1.2e-7 over 3,600 random draws of every backend


def test_conv2d_module_is_nn_conv2d_and_shares_state_dict():
    ref = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1, dilation=1, groups=2, bias=True, padding_mode="circular")
    mine = ft.Conv2d(4, 8, 3, stride=2, padding=1, groups=2, bias=True, padding_mode="circular", backend="fftw")
    assert isinstance(mine, torch.nn.Conv2d)
    assert mine.state_dict().keys() == ref.state_dict().keys()
    mine.load_state_dict(ref.state_dict())
    x = torch.randn(2, 4, 9, 9)
    assert rel(mine(x).detach(), ref(x).detach()) < 1e-5
    ref2 = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2, padding_mode="circular")
    ref2.load_state_dict(mine.state_dict())
    assert torch.equal(ref2.weight, ref.weight)
    assert "backend='fftw'" in repr(mine)


def test_convert_shares_parameters_and_swaps_only_conv2d():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                                torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3, groups=4), torch.nn.Linear(4, 2)))
    w = model[0].weight
    ft.convert(model, backend="fftw")
    assert type(model[0]) is ft.Conv2d and type(model[2][0]) is ft.Conv2d and type(model[2][1]) is torch.nn.Linear
    assert model[0].weight is w
    single = ft.convert(torch.nn.Conv2d(2, 2, 1))
    assert type(single) is ft.Conv2d


class BasicBlock(torch.nn.Module):
    """ResNet's basic block (He et al. 2016), as torchvision defines it."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet18(classes=10):
    """ResNet-18: a 7x7 stride-2 stem, max pooling, four stages of two basic blocks, 64..512 channels."""
    layers = [torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
              torch.nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(512, classes)]
    return torch.nn.Sequential(*layers)


def check_resnet18(device: str, batch: int):
    """A ResNet-18 and its converted copy agree in the forward and in every parameter's gradient."""
    import copy
    torch.manual_seed(0)
    model = resnet18().to(device)
    fft_model = ft.convert(copy.deepcopy(model))
    assert sum(type(m) is ft.Conv2d for m in fft_model.modules()) == 20
    x = torch.randn(batch, 3, 64, 64, device=device)
    y_ref, y = model(x), fft_model(x)
    assert rel(y.detach(), y_ref.detach()) < 1e-4
    y_ref.square().sum().backward()
    y.square().sum().backward()
    for (name, p_ref), (_, p) in zip(model.named_parameters(), fft_model.named_parameters()):
        assert rel(p.grad, p_ref.grad) < 1e-3, name


def test_resnet18_converted_matches_forward_and_backward():
    check_resnet18("cpu", 2)


def test_errors_name_the_argument():
    x, w = torch.randn(1, 2, 6, 6), torch.randn(2, 2, 3, 3)
    with pytest.raises(ValueError, match="padding_mode"):
        ft.conv2d(x, w, padding_mode="spiral")
    with pytest.raises(ValueError, match="groups"):
        ft.conv2d(x, w, groups=3)
    with pytest.raises(ValueError, match="stride"):
        ft.conv2d(x, w, stride=0)
    with pytest.raises(ValueError, match="same"):
        ft.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(TypeError, match="dtype"):
        ft.conv2d(x.half(), w.half())
