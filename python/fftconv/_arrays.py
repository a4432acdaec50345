"""Argument checks for the functional API: which arrays are acceptable (NumPy on the host, DLPack
tensors on a CUDA device), how results are allocated, and which stream a GPU call runs on.
Every failure is a TypeError or ValueError naming the argument and what was expected."""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

_DLPACK_CPU, _DLPACK_CUDA = 1, 2
_DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class ArrayInfo:
    """Where an operand lives and what it holds."""
    location: str          # 'host' | 'cuda'
    dtype: str             # 'float32' | 'float64'
    device: int            # CUDA device ordinal (0 on the host)
    shape: tuple
    framework: str         # 'numpy' | 'torch' | 'cupy' | module name of the tensor type
    contiguous: bool = True  # C-contiguous (False: contiguous() makes a copy)


def _type_name(x) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _dtype_name(x) -> str:
    d = getattr(x, "dtype", None)
    name = getattr(d, "name", None)
    return name if isinstance(name, str) else str(d).rsplit(".", 1)[-1]


def inspect(x, name: str) -> ArrayInfo:
    """Checks one array argument: 4-D, float32/float64, positive sizes; notes whether it is
    C-contiguous (other layouts are copied by contiguous())."""
    if isinstance(x, np.ndarray):
        framework, location, device = "numpy", "host", 0
    elif hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        framework = type(x).__module__.split(".", 1)[0]
        dev_type, dev_id = x.__dlpack_device__()
        if int(dev_type) == _DLPACK_CUDA:
            location, device = "cuda", int(dev_id)
        elif int(dev_type) == _DLPACK_CPU:
            raise TypeError(f"{name}: expected a NumPy array or a CUDA tensor, got a {_type_name(x)} in CPU memory "
                            f"(convert it with numpy.asarray / .numpy())")
        else:
            raise TypeError(f"{name}: expected a NumPy array or a CUDA tensor, got a {_type_name(x)} on DLPack "
                            f"device type {int(dev_type)}")
    else:
        raise TypeError(f"{name}: expected a NumPy array (float32 or float64, 4-D NCHW), got {_type_name(x)}")

    dtype = _dtype_name(x)
    if dtype not in _DTYPES:
        raise TypeError(f"{name}: expected dtype float32 or float64, got {dtype}")
    shape = tuple(int(s) for s in x.shape)
    if len(shape) != 4:
        raise ValueError(f"{name}: expected a 4-D array (NCHW), got ndim={len(shape)} shape {shape}")
    if any(s < 1 for s in shape):
        raise ValueError(f"{name}: every dimension must be >= 1, got shape {shape}")
    if framework == "numpy" and not x.dtype.isnative:
        raise TypeError(f"{name}: expected native byte order, got dtype {x.dtype.str} (use x.astype({dtype!r}))")
    contiguous = True
    if framework == "numpy":
        contiguous = bool(x.flags.c_contiguous)
    elif framework == "torch":
        contiguous = bool(x.is_contiguous())
    elif framework == "cupy":
        contiguous = bool(x.flags.c_contiguous)
    return ArrayInfo(location, dtype, device, shape, framework, contiguous)


def contiguous(x, info: ArrayInfo, name: str):
    """x itself when C-contiguous, else a C-contiguous copy (Fortran order, NHWC views, slices): NumPy,
    PyTorch and CuPy; other tensor types (whose layout this module cannot read) go through unchanged
    and the C++ check names them."""
    if info.contiguous:
        return x
    if info.framework == "numpy":
        return np.ascontiguousarray(x)
    if info.framework == "torch":
        return x.contiguous()
    if info.framework == "cupy":
        import cupy
        with cupy.cuda.Device(info.device):
            return cupy.ascontiguousarray(x)
    raise ValueError(f"{name}: expected a C-contiguous tensor, got a {info.framework} tensor with other strides")


def strided_out(out, shape: tuple, dtype: str):
    """The ArrayInfo of `out` when it is a writable NumPy, PyTorch or CuPy array of this shape and
    dtype that is not C-contiguous (the result is then computed apart and copied in); None otherwise
    (contiguous, or wrong in a way the C++ check reports)."""
    try:
        info = inspect(out, "out")
    except (TypeError, ValueError):
        return None
    if info.contiguous or info.shape != tuple(shape) or info.dtype != dtype:
        return None
    if info.framework not in ("numpy", "torch", "cupy"):
        return None
    if info.framework == "numpy" and not out.flags.writeable:
        return None
    return info


def copy_into(out, result, info: ArrayInfo, name: str):
    """Copies `result` into the non-contiguous `out` (NumPy, PyTorch, CuPy) and returns out."""
    if info.framework == "numpy":
        np.copyto(out, result)
    elif info.framework == "torch":
        out.copy_(result)
    elif info.framework == "cupy":
        out[...] = result
    else:
        raise ValueError(f"{name}: expected a C-contiguous tensor, got a {info.framework} tensor with other strides")
    return out


def same_kind(infos: dict) -> ArrayInfo:
    """All operands on the same location/device with the same dtype; returns the first's info."""
    (first_name, first), *rest = infos.items()
    for name, info in rest:
        if info.location != first.location or info.device != first.device:
            where = lambda i: "host memory" if i.location == "host" else f"CUDA device {i.device}"
            raise ValueError(f"{name}: is in {where(info)} but {first_name} is in {where(first)}")
        if info.dtype != first.dtype:
            raise TypeError(f"{name}: dtype {info.dtype} differs from {first_name}'s {first.dtype}")
    return first


def size4(v, name: str) -> tuple:
    """A 4-tuple of positive ints (input_size, weight_size; torch.Size works)."""
    try:
        t = tuple(v)
    except TypeError:
        raise TypeError(f"{name}: expected a sequence of 4 ints, got {_type_name(v)}") from None
    if len(t) != 4 or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in t):
        raise ValueError(f"{name}: expected 4 ints (NCHW), got {t!r}")
    t = tuple(int(s) for s in t)
    if any(s < 1 for s in t):
        raise ValueError(f"{name}: every size must be >= 1, got {t}")
    return t


def _int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def padding_pair(padding, kernel: tuple, dilation: tuple = (1, 1), stride: tuple = (1, 1)) -> tuple:
    """padding: int, (ph, pw), 'valid' (0) or 'same' (stride 1, odd dilated kernel extent); per side, >= 0."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0
        if padding == "same":
            if stride != (1, 1):
                raise ValueError(f"padding: 'same' needs stride 1, got stride {stride}")
            extent = (dilation[0] * (kernel[0] - 1) + 1, dilation[1] * (kernel[1] - 1) + 1)
            if extent[0] % 2 == 0 or extent[1] % 2 == 0:
                raise ValueError(f"padding: 'same' needs an odd kernel, got {kernel[0]}x{kernel[1]}"
                                 + (f" with dilation {dilation}" if dilation != (1, 1) else ""))
            return (extent[0] - 1) // 2, (extent[1] - 1) // 2
        raise ValueError(f"padding: expected an int, (ph, pw), 'valid' or 'same', got {padding!r}")
    if _int(padding):
        pair = (int(padding), int(padding))
    elif isinstance(padding, (tuple, list)) and len(padding) == 2 and all(_int(p) for p in padding):
        pair = (int(padding[0]), int(padding[1]))
    else:
        raise TypeError(f"padding: expected an int or a pair of ints (ph, pw), got {padding!r}")
    if pair[0] < 0 or pair[1] < 0:
        raise ValueError(f"padding: must be >= 0 on each side, got {pair}")
    return pair


_MODES = {"zeros": "zero", "zero": "zero", "reflect": "mirror", "mirror": "mirror", "circular": "circular"}


def padding_kind(mode) -> str:
    """'zeros' | 'reflect' | 'circular' (PyTorch names; 'zero' and 'mirror' too) -> the library's name."""
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"padding_mode: expected 'zeros', 'reflect' or 'circular', got {mode!r}")
    return _MODES[mode]


def int_pair(v, name: str, minimum: int) -> tuple:
    """stride / dilation: an int or a pair of ints, each >= minimum."""
    if _int(v):
        pair = (int(v), int(v))
    elif isinstance(v, (tuple, list)) and len(v) == 2 and all(_int(p) for p in v):
        pair = (int(v[0]), int(v[1]))
    else:
        raise TypeError(f"{name}: expected an int or a pair of ints, got {v!r}")
    if pair[0] < minimum or pair[1] < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {pair}")
    return pair


def as_row(x, name: str, fo: int, info: ArrayInfo, writable: bool):
    """A bias / gradBias vector of fo values as a 1×1×1×fo view of the same memory (the C++ checks
    take 4-D arrays); its location and dtype must be those of the other operands."""
    shape = tuple(int(s) for s in getattr(x, "shape", ()))
    if shape != (fo,):
        raise ValueError(f"{name}: expected shape ({fo},), got {shape if hasattr(x, 'shape') else type(x).__name__}")
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise ValueError(f"{name}: expected a contiguous array")
        if writable and not x.flags.writeable:
            raise ValueError(f"{name}: the output array is read-only")
        return x.reshape(1, 1, 1, fo)
    if hasattr(x, "view") and hasattr(x, "is_contiguous"):  # torch
        if not x.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous tensor (use .contiguous())")
        return x.view(1, 1, 1, fo)
    return x.reshape(1, 1, 1, fo)


def tile_text(tile):
    """None | 'auto' | 'none' | N | (H, W) -> None or the tile spec string of the C++ library."""
    if tile is None:
        return None
    if isinstance(tile, str):
        return tile
    if _int(tile):
        return str(int(tile))
    if isinstance(tile, (tuple, list)) and len(tile) == 2 and all(_int(t) for t in tile):
        return f"{int(tile[0])}x{int(tile[1])}"
    raise TypeError(f"tile: expected None, 'auto', 'none', an int N or a pair (H, W), got {tile!r}")


def empty_like_framework(info: ArrayInfo, like, shape: tuple):
    """A new result array where the operands live (NumPy, or the tensor's framework on CUDA)."""
    if info.location == "host":
        return np.empty(shape, dtype=info.dtype)
    if info.framework == "torch":
        import torch
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if info.framework == "cupy":
        import cupy
        with cupy.cuda.Device(info.device):
            return cupy.empty(shape, dtype=info.dtype)
    raise TypeError(f"out: cannot allocate a {info.framework} tensor; pass out= (a C-contiguous {info.dtype} "
                    f"tensor of shape {shape} on CUDA device {info.device})")


def stream_handle(stream, info: ArrayInfo) -> int:
    """The cudaStream_t as an int: the given stream (int, torch.cuda.Stream, cupy Stream), else the
    framework's current stream on the operands' device; 0 on the host."""
    if info.location == "host":
        if stream not in (None, 0):
            raise ValueError("stream: only CUDA tensors run on a stream; got a stream with host arrays")
        return 0
    if stream is None:
        if info.framework == "torch":
            import torch
            return int(torch.cuda.current_stream(info.device).cuda_stream)
        if info.framework == "cupy":
            import cupy
            with cupy.cuda.Device(info.device):
                return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if _int(stream):
        return int(stream)
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"stream: expected an int cudaStream_t, a torch.cuda.Stream or a cupy Stream, got "
                    f"{_type_name(stream)}")
