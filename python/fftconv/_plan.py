"""Plans and the tiling planner: ``plan()`` gives a reusable ``Plan`` (workspace, describe(), the tile
plan as Python data, execute()); ``tiling()`` and ``tile_plan()`` expose the planner's geometry and
cost model as dicts and lists of windows for plotting."""
from __future__ import annotations

import functools
import json
import numbers

from . import _arrays, _fftconv
from ._fftconv import Problem


def _problem(problem) -> Problem:
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, str):
        return Problem(problem)
    raise TypeError(f"problem: expected a fftconv.Problem or a spec string, got {type(problem).__name__}")


def _sizes(tile_sizes):
    """'pow2' | 'smooth' | a list of candidate sides -> (policy, candidates)."""
    if isinstance(tile_sizes, str):
        return tile_sizes, []
    try:
        sizes = [int(s) for s in tile_sizes if isinstance(s, numbers.Integral) and not isinstance(s, bool)]
        if len(sizes) != len(tile_sizes) or not sizes:
            raise TypeError
    except TypeError:
        raise TypeError(f"tile_sizes: expected 'pow2', 'smooth' or a list of ints, got {tile_sizes!r}") from None
    return "pow2", sizes


def _extra(extra) -> dict:
    if extra is None:
        return {}
    if not isinstance(extra, dict):
        raise TypeError(f"extra: expected a dict of str to str, got {type(extra).__name__}")
    return {str(k): str(v) for k, v in extra.items()}


class Plan:
    """A planned pass of one problem on one backend; reusable and safe to share between threads
    (executions of one plan are serialized). Build it with ``fftconv.plan()``."""

    def __init__(self, impl):
        self._impl = impl

    problem = property(lambda self: self._impl.problem, doc="the fftconv.Problem")
    pass_ = property(lambda self: self._impl.pass_, doc="'fprop' | 'bprop' | 'accgrad'")
    backend = property(lambda self: self._impl.backend, doc="the backend's name (after 'auto' selection)")
    dtype = property(lambda self: self._impl.dtype, doc="'float32' | 'float64'")
    location = property(lambda self: self._impl.location, doc="'host' | 'cuda'")
    device = property(lambda self: self._impl.device, doc="CUDA device ordinal (cuda plans)")
    tile = property(lambda self: self._impl.tile, doc="the tile option the plan was made with")
    tile_note = property(lambda self: self._impl.tile_note,
                         doc="why tile=None fell back from 'auto' to 'none' ('' when it did not)")
    workspace_bytes = property(lambda self: self._impl.workspace_bytes,
                               doc="scratch memory the plan owns, in bytes")

    @property
    def result_shape(self) -> tuple:
        """Shape of the tensor execute() writes (output, gradInput or gradWeight)."""
        return self.problem.result_shape(self.pass_)

    def describe(self) -> str:
        """What the backend chose and why (basis, tiles, strategies)."""
        text = self._impl.describe()
        return text + (f" [{self.tile_note}]" if self.tile_note else "")

    @property
    def tile_plan(self):
        """The backend's own tile plan summary as a dict (None when untiled)."""
        return json.loads(self._impl.tile_json())

    def tiling(self, include_tiles: bool = True, max_tiles: int = 65536) -> dict:
        """The tiling planner's choice for this plan's problem, pass and tile options (see fftconv.tiling).
        On cufft/fbfft with autotune, tile='auto' is answered by timing (Note [measured tile choice]), so the
        plan's own tiles (``tile_plan``) may differ from this model choice."""
        impl = self._impl
        return _fftconv._tiling(impl.problem, impl.pass_, impl.tile, impl.tile_sizes, impl.tile_candidates,
                                impl.workspace_limit, impl.tiling_extra, include_tiles, max_tiles)

    math = property(lambda self: self._impl.math,
                    doc="the products' precision of the last execute() on a GPU backend ('' for others)")

    def prepare_weights(self, weight, *, stream=None):
        """The weight spectra of ``weight`` computed once, for ``execute(..., prepared=...)`` of this plan
        and of other plans of the same backend and basis (fprop and bprop of one training step; pin
        the basis of the second plan, or the tile size of a tiled fftw or fbfft plan, to share them). Plans
        without weight spectra raise ValueError."""
        info = _arrays.inspect(weight, "weight")
        return self._impl.prepare_weights(weight, _arrays.stream_handle(stream, info))

    def execute(self, input=None, weight=None, grad_output=None, *, out=None, stream=None, bias=None,
                grad_bias=None, prepared=None):
        """Runs the pass. fprop reads input and weight, bprop grad_output and weight, accgrad input and
        grad_output; returns ``out`` (allocated when None) holding the result. For a problem with bias,
        fprop also reads ``bias`` (fo values) and accgrad also writes ``grad_bias`` (fo values; required).
        ``prepared`` (from prepare_weights()) replaces ``weight``: its spectra are not computed again."""
        given = {"input": input, "weight": weight, "grad_output": grad_output}
        reads = {"fprop": ("input", "weight"), "bprop": ("grad_output", "weight"),
                 "accgrad": ("input", "grad_output")}[self.pass_]
        if prepared is not None:
            reads = tuple(r for r in reads if r != "weight")
        for name in reads:
            if given[name] is None:
                raise TypeError(f"{self.pass_}: {name} is required")
        infos = {name: _arrays.inspect(given[name], name) for name in reads}
        info = _arrays.same_kind(infos)
        if info.location != self.location:
            raise ValueError(f"{reads[0]}: is in {info.location} memory but the plan ({self.backend}) runs on "
                             f"{self.location}")
        # Other layouts (Fortran order, NHWC views, slices) run on C-contiguous copies.
        for name in reads:
            given[name] = _arrays.contiguous(given[name], infos[name], name)
        handle = _arrays.stream_handle(stream, info)
        if out is None:
            out = _arrays.empty_like_framework(info, given[reads[0]], self.result_shape)
        fo = self.problem.fo
        if self.problem.bias and self.pass_ == "fprop":
            if bias is None:
                raise TypeError("fprop: bias is required (the problem has bias)")
            bias = _arrays.as_row(bias, "bias", fo, info, writable=False)
        if self.problem.bias and self.pass_ == "accgrad":
            if grad_bias is None:
                raise TypeError("accgrad: grad_bias is required (the problem has bias)")
            grad_bias = _arrays.as_row(grad_bias, "grad_bias", fo, info, writable=True)
        if not self.problem.bias:
            bias = grad_bias = None

        def run(result):
            return self._impl.execute(given["input"], given["weight"], given["grad_output"], result, handle,
                                      bias, grad_bias, prepared)

        out_info = _arrays.strided_out(out, self.result_shape, info.dtype)
        if out_info is not None:
            result = _arrays.empty_like_framework(info, given[reads[0]], self.result_shape)
            run(result)
            return _arrays.copy_into(out, result, out_info, "out")
        return run(out)

    def __repr__(self) -> str:
        return (f"fftconv.Plan({self.problem.spec!r}, {self.pass_!r}, backend={self.backend!r}, "
                f"tile={self.tile!r}, dtype={self.dtype!r}, workspace_bytes={self.workspace_bytes})")


def plan(problem, pass_: str, backend: str = "auto", tile=None, *, dtype: str = "float32",
         location: str = "host", device: int = 0, tile_sizes="pow2", workspace_limit: int = 0,
         threads: int = 0, extra: dict | None = None, math: str = "auto",
         prepared_weights: bool = False) -> Plan:
    """Plans one pass ('fprop' | 'bprop' | 'accgrad') of ``problem`` (a Problem or a spec string).

    backend: 'auto' (the first available backend at ``location`` that supports the problem) or a
    name from backends(). tile: None (auto where the backend tiles, else none), 'auto', 'none',
    N or (H, W) (the tile's FFT basis). tile_sizes: 'pow2', 'smooth' or a list of sides for 'auto'.
    math: precision of the GPU backends' frequency-domain products: 'auto' (the faster of 'fp32' and
    '3xtf32', both fp32-accurate), 'fp32', '3xtf32' (tensor cores, split operands) or 'tf32' (one TF32
    product, about 1e-3 relative error: only when asked for).
    threads: the OpenMP team of a CPU plan, 0 (OpenMP's default) or 1 up to the machine's hardware
    threads; a larger count raises ValueError (it only slows the plan down).
    prepared_weights: fprop/bprop with backend='auto': choose the plan that is fastest on weight
    spectra prepared once (Plan.prepare_weights) and passed to every execute(prepared=...), as
    repeated inference or fprop and bprop of one step do; False plans for weights transformed in
    every call.
    Raises ValueError (UnsupportedError) when the backend cannot serve the request, MemoryError when
    memory runs out (planning or execute())."""
    if not isinstance(math, str):
        raise TypeError(f"math: expected 'auto', 'fp32', '3xtf32' or 'tf32', got {math!r}")
    if not isinstance(backend, str):
        raise TypeError(f"backend: expected a str ('auto' or a name), got {type(backend).__name__}")
    if not isinstance(prepared_weights, bool):
        raise TypeError(f"prepared_weights: expected a bool, got {prepared_weights!r}")
    for name, v in (("workspace_limit", workspace_limit), ("threads", threads), ("device", device)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{name}: expected an int, got {v!r}")
        if v < 0:
            raise ValueError(f"{name}: must be >= 0, got {v}")
    policy, candidates = _sizes(tile_sizes)
    impl = _fftconv._make_plan(_problem(problem), pass_, backend, _arrays.tile_text(tile), dtype, location,
                               int(device), policy, candidates, int(workspace_limit), int(threads), _extra(extra),
                               math, prepared_weights)
    return Plan(impl)


@functools.lru_cache(maxsize=64)
def cached_plan(spec: str, pass_: str, backend: str, tile, dtype: str, location: str, device: int) -> Plan:
    """plan() memoized on its arguments (the functional API re-uses plans, as FFT libraries do)."""
    return plan(spec, pass_, backend, tile, dtype=dtype, location=location, device=device)


def tiling(problem, pass_: str, tile="auto", *, tile_sizes="pow2", workspace_limit: int = 0,
           extra: dict | None = None, include_tiles: bool = True, max_tiles: int = 65536,
           max_rows: int = 0) -> dict:
    """The tiling planner's decision as plain data:

    ``plan``: the chosen TilePlan (tiled, fft_h, fft_w, out_tile_h/w, rows/cols axes, count,
    tiles_in_flight, region, cost dict, summary, and ``tiles``: a list of dicts with index, row, col
    and the windows ``window`` (result), ``read`` (transformed operand), ``read_valid`` and ``keep``,
    each {y0, x0, h, w}; None when untiled or more than max_tiles);
    ``candidates``: every candidate considered with its cost-model figures; ``chosen``, ``reason``,
    and ``table`` (the planner's explain() text)."""
    policy, candidates = _sizes(tile_sizes)
    return _fftconv._tiling(_problem(problem), pass_, _arrays.tile_text(tile) or "auto", policy, candidates,
                            int(workspace_limit), _extra(extra), bool(include_tiles), int(max_tiles), int(max_rows))


def tile_plan(problem, pass_: str, fft_h: int, fft_w: int | None = None, *, tiles_in_flight: int = 32,
              reduction: str = "frequency", max_tiles: int = 65536) -> dict:
    """One tiled plan of a fixed tile basis fft_h×fft_w (no search), as in tiling()['plan']."""
    return _fftconv._tile_plan(_problem(problem), pass_, int(fft_h), int(fft_h if fft_w is None else fft_w),
                               int(tiles_in_flight), reduction, int(max_tiles))
