"""Arrays in other layouts than C order run on contiguous copies (Fortran order, NHWC views,
slices, negative strides, a strided out=), and running out of memory inside a plan raises
MemoryError naming the bytes while the interpreter goes on."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fftconv

from conftest import TOL, ref_accgrad, ref_bprop, ref_fprop, rel_l2


def _layouts(a):
    """The same values as `a` (4-D, C order) in four strided layouts."""
    nhwc = np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    wide = np.zeros(a.shape[:3] + (2 * a.shape[3],), a.dtype)
    wide[..., ::2] = a
    flipped = np.ascontiguousarray(a[:, :, ::-1])[:, :, ::-1]
    return {"fortran": np.asfortranarray(a), "nhwc": nhwc, "slice": wide[..., ::2], "reversed": flipped}


@pytest.mark.parametrize("layout", ["fortran", "nhwc", "slice", "reversed"])
def test_strided_operands_give_the_c_order_result(rng, layout):
    x = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    g = rng.standard_normal((2, 4, 11, 9)).astype(np.float32)
    xs, ws, gs = _layouts(x)[layout], _layouts(w)[layout], _layouts(g)[layout]
    assert not (xs.flags.c_contiguous or ws.flags.c_contiguous or gs.flags.c_contiguous)
    assert rel_l2(fftconv.conv2d(xs, ws, padding=1), ref_fprop(x, w, 1, 1, "zeros")) < TOL["float32"]
    assert rel_l2(fftconv.conv2d_input(x.shape, ws, gs, padding=1), ref_bprop(g, w, x.shape, 1, 1, "zeros")) \
        < TOL["float32"]
    assert rel_l2(fftconv.conv2d_weight(xs, w.shape, gs, padding=1), ref_accgrad(x, g, w.shape, 1, 1, "zeros")) \
        < TOL["float32"]
    assert xs.flags.f_contiguous == (layout == "fortran")  # the caller's arrays are left as they were


def test_strided_out_is_written(rng):
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = np.full((2, 10, 10, 4), np.nan, np.float32).transpose(0, 3, 1, 2)  # an NHWC buffer
    got = fftconv.conv2d(x, w, padding=1, out=out)
    assert got is out
    assert rel_l2(out, ref_fprop(x, w, 1, 1, "zeros")) < TOL["float32"]


def test_torch_strided_cpu_tensors_are_still_refused_clearly(rng):
    torch = pytest.importorskip("torch")
    x = torch.zeros((2, 3, 10, 10)).permute(0, 1, 3, 2)
    with pytest.raises(TypeError, match="in CPU memory"):
        fftconv.conv2d(x, np.zeros((4, 3, 3, 3), np.float32))


_OUT_OF_MEMORY = textwrap.dedent("""
    import re, resource
    import numpy as np
    import fftconv
    p = fftconv.plan("S=1,n=4096,k=3", "fprop", backend="fftw", tile="none", threads=1,
                     extra={"fftw_planner": "estimate"})
    x = np.ones((1, 1, 4096, 4096), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    out = np.empty(p.result_shape, np.float32)
    vm = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
    # 400 MB above what the interpreter holds: the frequency buffers (200 MB) fit, one thread's
    # transform scratch (1.1 GB) does not.
    resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), resource.RLIM_INFINITY))
    try:
        p.execute(x, w, out=out)
        print("no error")
    except MemoryError as e:
        print("MemoryError:", e)
    small = fftconv.conv2d(np.ones((1, 1, 8, 8), np.float32), np.ones((1, 1, 3, 3), np.float32), backend="fftw")
    print("alive", float(small.sum()))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc/self/status")
def test_out_of_memory_is_a_memory_error_and_the_interpreter_goes_on():
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "MemoryError: fftw: fftw_malloc of" in r.stdout and "bytes failed" in r.stdout, r.stdout
    assert "alive 324.0" in r.stdout, r.stdout
