"""fftconv.torch: FFT convolution as a drop-in for PyTorch's conv2d, with autograd.

``conv2d`` takes torch.nn.functional.conv2d's arguments (plus ``padding_mode``, ``backend`` and
``tile``); its backward calls the library's bprop (gradInput) and accGrad (gradWeight, gradBias).
CUDA tensors run on the CUDA backends on the current stream through DLPack (an extension built
with FFTCONV_PYTHON_CUDA=ON); CPU tensors run on the CPU backends (float32; float64 on fftw and
direct). ``Conv2d`` is a torch.nn.Conv2d (same constructor, parameters and state_dict) whose
forward is ``conv2d``; ``convert(model)`` swaps the Conv2d layers of a model for it::

    import torchvision, fftconv.torch
    model = torchvision.models.resnet18()
    fftconv.torch.convert(model)            # every nn.Conv2d now runs by FFT, weights kept
    loss = model(x).sum(); loss.backward()  # gradients through bprop and accGrad
"""
from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F
from torch import nn

from . import _functional

__all__ = ["conv2d", "Conv2d", "convert"]

_NATIVE_MODES = ("zeros", "reflect", "circular")  # the library pads these itself
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "circular": "circular", "replicate": "replicate"}


def _pair(v, name: str) -> tuple:
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return int(v[0]), int(v[1])
    raise TypeError(f"{name}: expected an int or a pair of ints, got {v!r}")


def _host(t: torch.Tensor):
    """The array the library reads: the CUDA tensor itself (DLPack), or a NumPy view of a CPU tensor."""
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    return t if t.is_cuda else t.numpy()


def _tensor(a, like: torch.Tensor) -> torch.Tensor:
    return a if isinstance(a, torch.Tensor) else torch.from_numpy(a).to(like.device)


class _Conv2dFunction(torch.autograd.Function):
    """fprop forward; bprop and accGrad backward (padding already symmetric and native here)."""

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups, padding_mode, backend, tile):
        ctx.save_for_backward(input, weight)
        ctx.options = dict(stride=stride, padding=padding, dilation=dilation, groups=groups,
                           padding_mode=padding_mode, backend=backend, tile=tile)
        ctx.has_bias = bias is not None
        y = _functional.conv2d(_host(input), _host(weight), None if bias is None else _host(bias), **ctx.options)
        return _tensor(y, input)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        g = _host(grad_output)
        gi = gw = gb = None
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.has_bias and ctx.needs_input_grad[2]
        if need_x:
            gi = _tensor(_functional.conv2d_input(tuple(input.shape), _host(weight), g, **ctx.options), input)
        if need_w:
            r = _functional.conv2d_weight(_host(input), tuple(weight.shape), g, grad_bias=need_b, **ctx.options)
            gw, gb = (r if need_b else (r, None))
            gw = _tensor(gw, weight)
            gb = None if gb is None else _tensor(gb, weight)
        elif need_b:
            gb = grad_output.sum(dim=(0, 2, 3))
        return gi, gw, gb, None, None, None, None, None, None, None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode: str = "zeros",
           backend: str = "auto", tile="auto"):
    """torch.nn.functional.conv2d by FFT, differentiable in input, weight and bias.

    input S×f×h×w, weight fo×(f/groups)×kh×kw, bias fo or None (float32, or float64 on the CPU backends
    fftw and direct). stride, dilation: int or pair; padding: int, pair, 'valid' or 'same' (an even
    'same' is padded asymmetrically first, as PyTorch does); padding_mode: 'zeros', 'reflect',
    'circular' (computed by the library) or 'replicate' (padded by torch.nn.functional.pad first).
    backend: 'auto' or a name from fftconv.backends(); tile: 'auto', 'none', N or (H, W)."""
    if not isinstance(input, torch.Tensor) or not isinstance(weight, torch.Tensor):
        raise TypeError(f"input, weight: expected torch tensors, got {type(input).__name__}, {type(weight).__name__}")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"padding_mode: expected 'zeros', 'reflect', 'circular' or 'replicate', got {padding_mode!r}")
    if input.dim() != 4:
        raise ValueError(f"input: expected a 4-D tensor (NCHW), got shape {tuple(input.shape)}")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    kh, kw = int(weight.shape[-2]), int(weight.shape[-1])
    if isinstance(padding, str):
        if padding == "valid":
            before = after = (0, 0)
        elif padding == "same":
            if (sh, sw) != (1, 1):
                raise ValueError(f"padding: 'same' needs stride 1, got stride {(sh, sw)}")
            total = (dh * (kh - 1), dw * (kw - 1))
            before = (total[0] // 2, total[1] // 2)
            after = (total[0] - before[0], total[1] - before[1])
        else:
            raise ValueError(f"padding: expected an int, a pair, 'valid' or 'same', got {padding!r}")
    else:
        before = after = _pair(padding, "padding")
    if before != after or padding_mode not in _NATIVE_MODES:
        # Asymmetric 'same' or replicate: pad explicitly (autograd takes the padding's adjoint).
        mode = _PAD_MODES[padding_mode]
        input = F.pad(input, (before[1], after[1], before[0], after[0]), mode=mode)
        before, padding_mode = (0, 0), "zeros"
    tile_arg = None if tile == "auto" else tile  # auto where the backend tiles, else none
    return _Conv2dFunction.apply(input, weight, bias, (sh, sw), before, (dh, dw), int(groups), padding_mode,
                                 backend, tile_arg)


class Conv2d(nn.Conv2d):
    """torch.nn.Conv2d computed by fftconv: the same constructor, parameters and state_dict (so it
    loads from and into nn.Conv2d), plus ``backend`` and ``tile`` keywords."""

    def __init__(self, *args, backend: str = "auto", tile="auto", **kwargs):
        super().__init__(*args, **kwargs)
        self.backend = backend
        self.tile = tile

    def _conv_forward(self, input, weight, bias):
        return conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups, self.padding_mode,
                      self.backend, self.tile)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", backend={self.backend!r}, tile={self.tile!r}"

    @classmethod
    def from_conv(cls, conv: nn.Conv2d, backend: str = "auto", tile="auto") -> "Conv2d":
        """A Conv2d with conv's configuration that shares its weight and bias Parameters."""
        new = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                  conv.groups, conv.bias is not None, conv.padding_mode, device="meta", backend=backend, tile=tile)
        new.weight = conv.weight
        new.bias = conv.bias
        new.train(conv.training)
        return new


def convert(model: nn.Module, backend: str = "auto", tile="auto") -> nn.Module:
    """Swaps every torch.nn.Conv2d of ``model`` (exactly that type) for a fftconv.torch.Conv2d sharing its
    parameters, in place; returns the model (the new layer when ``model`` itself is an nn.Conv2d)."""
    if type(model) is nn.Conv2d:
        return Conv2d.from_conv(model, backend, tile)
    for name, child in model.named_children():
        if type(child) is nn.Conv2d:
            setattr(model, name, Conv2d.from_conv(child, backend, tile))
        else:
            convert(child, backend, tile)
    return model
