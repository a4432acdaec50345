"""The functional API with PyTorch's conventions: conv2d (fprop), conv2d_input (bprop = gradInput),
conv2d_weight (accGrad = gradWeight). NCHW, weight fo×f×kh×kw, cross-correlation over the padded
input, out_h = h + 2*ph - kh + 1. Plans are made once per (problem, pass, options) and re-used."""
from __future__ import annotations

from . import _arrays
from ._fftconv import Problem
from ._plan import cached_plan


def _make_problem(input_size, weight_size, padding, padding_mode, who: str) -> Problem:
    S, f, h, w = input_size
    fo, f_w, kh, kw = weight_size
    if f_w != f:
        raise ValueError(f"{who}: weight has {f_w} input channels (shape[1]) but the input has {f} "
                         f"(input {tuple(input_size)}, weight {tuple(weight_size)})")
    ph, pw = _arrays.padding_pair(padding, (kh, kw))
    kind = _arrays.padding_kind(padding_mode)
    if kh > h + 2 * ph or kw > w + 2 * pw:
        raise ValueError(f"{who}: kernel {kh}x{kw} is larger than the padded input {h + 2 * ph}x{w + 2 * pw} "
                         f"(input {h}x{w}, padding {ph},{pw})")
    if kind == "mirror" and (ph >= h or pw >= w):
        raise ValueError(f"padding: 'reflect' padding {ph},{pw} must be smaller than the input {h}x{w}")
    return Problem(S=S, f=f, fo=fo, h=h, w=w, kh=kh, kw=kw, ph=ph, pw=pw, padding=kind)


def _check_backend(backend):
    if not isinstance(backend, str):
        raise TypeError(f"backend: expected a str ('auto' or a name from fftconv.backends()), got {backend!r}")


def _run(problem, pass_, info, backend, tile, operands: dict, out, stream):
    _check_backend(backend)
    p = cached_plan(problem.spec, pass_, backend, _arrays.tile_text(tile), info.dtype, info.location, info.device)
    return p.execute(**operands, out=out, stream=stream)


def conv2d(input, weight, padding=0, padding_mode: str = "zeros", backend: str = "auto", tile=None, *,
           out=None, stream=None):
    """Forward pass (fprop): output[s, j] = sum_i input_pad[s, i] ⋆ weight[j, i].

    input: S×f×h×w, weight: fo×f×kh×kw -> output: S×fo×(h+2ph-kh+1)×(w+2pw-kw+1).
    padding: int, (ph, pw), 'valid' or 'same' (odd kernels), per side; padding_mode: 'zeros' | 'reflect'.
    backend: 'auto' or a name from fftconv.backends(); tile: None (auto where the backend tiles),
    'auto', 'none', N or (H, W). out: optional result array; stream: CUDA stream (CUDA tensors only).
    Raises TypeError / ValueError naming a bad argument; MemoryError when out of memory."""
    infos = {"input": _arrays.inspect(input, "input"), "weight": _arrays.inspect(weight, "weight")}
    info = _arrays.same_kind(infos)
    problem = _make_problem(infos["input"].shape, infos["weight"].shape, padding, padding_mode, "conv2d")
    return _run(problem, "fprop", info, backend, tile, {"input": input, "weight": weight}, out, stream)


def conv2d_input(input_size, weight, grad_output, padding=0, padding_mode: str = "zeros", backend: str = "auto",
                 tile=None, *, out=None, stream=None):
    """Backward pass to the input (bprop): gradInput = P^T(full correlation of grad_output with weight),
    P the padding operator (zeros: crop; reflect: fold the mirrored positions back).

    input_size: (S, f, h, w); weight: fo×f×kh×kw; grad_output: S×fo×out_h×out_w -> S×f×h×w."""
    size = _arrays.size4(input_size, "input_size")
    infos = {"weight": _arrays.inspect(weight, "weight"), "grad_output": _arrays.inspect(grad_output, "grad_output")}
    info = _arrays.same_kind(infos)
    problem = _make_problem(size, infos["weight"].shape, padding, padding_mode, "conv2d_input")
    if infos["grad_output"].shape != problem.output_shape:
        raise ValueError(f"grad_output: expected shape {problem.output_shape} for input_size {size} and weight "
                         f"{infos['weight'].shape}, got {infos['grad_output'].shape}")
    return _run(problem, "bprop", info, backend, tile, {"weight": weight, "grad_output": grad_output}, out, stream)


def conv2d_weight(input, weight_size, grad_output, padding=0, padding_mode: str = "zeros", backend: str = "auto",
                  tile=None, *, out=None, stream=None):
    """Backward pass to the weight (accGrad): gradWeight[j, i] = sum_s input_pad[s, i] ⋆ grad_output[s, j].

    input: S×f×h×w; weight_size: (fo, f, kh, kw); grad_output: S×fo×out_h×out_w -> fo×f×kh×kw."""
    size = _arrays.size4(weight_size, "weight_size")
    infos = {"input": _arrays.inspect(input, "input"), "grad_output": _arrays.inspect(grad_output, "grad_output")}
    info = _arrays.same_kind(infos)
    problem = _make_problem(infos["input"].shape, size, padding, padding_mode, "conv2d_weight")
    if infos["grad_output"].shape != problem.output_shape:
        raise ValueError(f"grad_output: expected shape {problem.output_shape} for input {infos['input'].shape} "
                         f"and weight_size {size}, got {infos['grad_output'].shape}")
    return _run(problem, "accgrad", info, backend, tile, {"input": input, "grad_output": grad_output}, out, stream)
