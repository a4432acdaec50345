"""The functional API with torch.nn.functional.conv2d's arguments: conv2d (fprop), conv2d_input (bprop
= gradInput), conv2d_weight (accGrad = gradWeight, and gradBias on request). NCHW, weight
fo×(f/groups)×kh×kw, cross-correlation over the padded input,
out_h = (h + 2*ph - dilation_h*(kh-1) - 1) // stride_h + 1. Plans are made once per (problem, pass,
options) and re-used."""
from __future__ import annotations

from . import _arrays
from ._fftconv import Problem
from ._plan import cached_plan


def _make_problem(input_size, weight_size, stride, padding, dilation, groups, bias: bool, padding_mode,
                  who: str) -> Problem:
    S, f, h, w = input_size
    fo, f_w, kh, kw = weight_size
    sh, sw = _arrays.int_pair(stride, "stride", 1)
    dh, dw = _arrays.int_pair(dilation, "dilation", 1)
    if not _arrays._int(groups):
        raise TypeError(f"groups: expected an int, got {groups!r}")
    g = int(groups)
    if g < 1:
        raise ValueError(f"groups: must be >= 1, got {g}")
    if f % g != 0 or fo % g != 0:
        raise ValueError(f"groups: {g} must divide the input channels {f} and the output channels {fo}")
    if f_w * g != f:
        raise ValueError(f"{who}: weight has {f_w} input channels (shape[1]) but the input has {f} in {g} group(s) "
                         f"(input {tuple(input_size)}, weight {tuple(weight_size)})")
    ph, pw = _arrays.padding_pair(padding, (kh, kw), (dh, dw), (sh, sw))
    kind = _arrays.padding_kind(padding_mode)
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    if eh > h + 2 * ph or ew > w + 2 * pw:
        dilated = f" (dilated extent {eh}x{ew})" if (dh, dw) != (1, 1) else ""
        raise ValueError(f"{who}: kernel {kh}x{kw}{dilated} is larger than the padded input "
                         f"{h + 2 * ph}x{w + 2 * pw} (input {h}x{w}, padding {ph},{pw})")
    if kind == "mirror" and (ph >= h or pw >= w):
        raise ValueError(f"padding: 'reflect' padding {ph},{pw} must be smaller than the input {h}x{w}")
    if kind == "circular" and (ph > h or pw > w):
        raise ValueError(f"padding: 'circular' padding {ph},{pw} must be at most the input {h}x{w}")
    return Problem(S=S, f=f, fo=fo, h=h, w=w, kh=kh, kw=kw, ph=ph, pw=pw, padding=kind, sh=sh, sw=sw, dh=dh, dw=dw,
                   g=g, bias=bias)


def _check_backend(backend):
    if not isinstance(backend, str):
        raise TypeError(f"backend: expected a str ('auto' or a name from fftconv.backends()), got {backend!r}")


def _run(problem, pass_, info, backend, tile, operands: dict, out, stream, **bias):
    _check_backend(backend)
    p = cached_plan(problem.spec, pass_, backend, _arrays.tile_text(tile), info.dtype, info.location, info.device)
    return p.execute(**operands, out=out, stream=stream, **bias)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode: str = "zeros",
           backend: str = "auto", tile=None, *, out=None, stream=None):
    """Forward pass (fprop), as torch.nn.functional.conv2d:
    output[s, o] = bias[o] + sum over the group's channels c of input_pad[s, c] ⋆ weight[o, c'] with stride
    and dilation.

    input: S×f×h×w, weight: fo×(f/groups)×kh×kw, bias: None or fo values -> output: S×fo×out_h×out_w.
    stride, dilation: int or (h, w); padding: int, (ph, pw), 'valid' or 'same', per side;
    padding_mode: 'zeros' | 'reflect' | 'circular'. backend: 'auto' or a name from fftconv.backends();
    tile: None (auto where the backend tiles), 'auto', 'none', N or (H, W). out: optional result array;
    stream: CUDA stream (CUDA tensors only).
    Raises TypeError / ValueError naming a bad argument; MemoryError when out of memory."""
    infos = {"input": _arrays.inspect(input, "input"), "weight": _arrays.inspect(weight, "weight")}
    info = _arrays.same_kind(infos)
    problem = _make_problem(infos["input"].shape, infos["weight"].shape, stride, padding, dilation, groups,
                            bias is not None, padding_mode, "conv2d")
    return _run(problem, "fprop", info, backend, tile, {"input": input, "weight": weight}, out, stream, bias=bias)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode: str = "zeros", backend: str = "auto", tile=None, *, out=None, stream=None):
    """Backward pass to the input (bprop), as torch.nn.grad.conv2d_input: the adjoint of conv2d in its
    input (zeros padding: crop; reflect and circular: fold the padded positions back onto their source).

    input_size: (S, f, h, w); weight: fo×(f/groups)×kh×kw; grad_output: S×fo×out_h×out_w -> S×f×h×w."""
    size = _arrays.size4(input_size, "input_size")
    infos = {"weight": _arrays.inspect(weight, "weight"), "grad_output": _arrays.inspect(grad_output, "grad_output")}
    info = _arrays.same_kind(infos)
    problem = _make_problem(size, infos["weight"].shape, stride, padding, dilation, groups, False, padding_mode,
                            "conv2d_input")
    if infos["grad_output"].shape != problem.output_shape:
        raise ValueError(f"grad_output: expected shape {problem.output_shape} for input_size {size} and weight "
                         f"{infos['weight'].shape}, got {infos['grad_output'].shape}")
    return _run(problem, "bprop", info, backend, tile, {"weight": weight, "grad_output": grad_output}, out, stream)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1,
                  padding_mode: str = "zeros", backend: str = "auto", tile=None, *, out=None, stream=None,
                  grad_bias=False):
    """Backward pass to the weight (accGrad), as torch.nn.grad.conv2d_weight:
    gradWeight[o, c'] = sum_s input_pad[s, c] ⋆ grad_output[s, o] (strided, dilated, per group).

    input: S×f×h×w; weight_size: (fo, f/groups, kh, kw); grad_output: S×fo×out_h×out_w -> fo×(f/groups)×kh×kw.
    grad_bias: False, True (also return gradBias, grad_output summed over S, out_h, out_w, as a new
    array), or an array of fo values to write it into; with it the result is (grad_weight, grad_bias)."""
    size = _arrays.size4(weight_size, "weight_size")
    infos = {"input": _arrays.inspect(input, "input"), "grad_output": _arrays.inspect(grad_output, "grad_output")}
    info = _arrays.same_kind(infos)
    with_bias = grad_bias is not False and grad_bias is not None
    problem = _make_problem(infos["input"].shape, size, stride, padding, dilation, groups, with_bias, padding_mode,
                            "conv2d_weight")
    if infos["grad_output"].shape != problem.output_shape:
        raise ValueError(f"grad_output: expected shape {problem.output_shape} for input {infos['input'].shape} "
                         f"and weight_size {size}, got {infos['grad_output'].shape}")
    if not with_bias:
        return _run(problem, "accgrad", info, backend, tile, {"input": input, "grad_output": grad_output}, out, stream)
    gb = grad_bias
    if gb is True:
        gb = _arrays.empty_like_framework(info, input, (problem.fo, 1, 1, 1)).reshape(problem.fo)
    gw = _run(problem, "accgrad", info, backend, tile, {"input": input, "grad_output": grad_output}, out, stream,
              grad_bias=gb)
    return gw, gb
