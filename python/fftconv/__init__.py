"""fftconv: the three passes of a convolutional layer (fprop, bprop = gradInput, accGrad =
gradWeight) computed by FFT, untiled or tiled, on the CPU (and on NVIDIA GPUs when built so).

PyTorch conventions: NCHW tensors, weight ``fo×(f/groups)×kh×kw``, cross-correlation, ``stride``,
``padding`` per side, ``dilation``, ``groups``, ``bias``, ``padding_mode='zeros'|'reflect'|'circular'``.
NumPy float32 (and float64) C-contiguous arrays in and out; CUDA tensors (PyTorch, CuPy) through
DLPack when the CUDA backends are built. ``fftconv.torch`` (imported on its own, needs PyTorch)
is a drop-in for torch.nn.functional.conv2d and torch.nn.Conv2d with autograd.

    >>> import numpy as np, fftconv
    >>> x = np.random.rand(2, 3, 16, 16).astype(np.float32)
    >>> w = np.random.rand(8, 3, 5, 5).astype(np.float32)
    >>> fftconv.conv2d(x, w, padding=2).shape
    (2, 8, 16, 16)
"""
from ._fftconv import Problem, UnsupportedError, backends, cuda_built
from ._functional import conv2d, conv2d_input, conv2d_weight
from ._plan import Plan, plan, tile_plan, tiling

__version__ = "0.1.0"

__all__ = [
    "Problem", "Plan", "UnsupportedError", "backends", "conv2d", "conv2d_input", "conv2d_weight",
    "cuda_built", "plan", "tile_plan", "tiling",
]
