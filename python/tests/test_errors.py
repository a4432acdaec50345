"""Every bad argument raises the documented error (TypeError / ValueError / UnsupportedError, a
ValueError) with a message naming the argument; nothing crashes."""
import numpy as np
import pytest

import fftconv


@pytest.fixture
def xw(rng):
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    g = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    return x, w, g


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.complex64, np.bool_])
def test_wrong_dtype(xw, dtype):
    x, w, _ = xw
    with pytest.raises(TypeError, match="input: expected dtype float32 or float64"):
        fftconv.conv2d(x.astype(dtype), w)


def test_mixed_dtypes(xw):
    x, w, _ = xw
    with pytest.raises(TypeError, match="weight: dtype float64 differs"):
        fftconv.conv2d(x, w.astype(np.float64))


def test_non_native_byte_order(xw):
    x, w, _ = xw
    with pytest.raises(TypeError, match="input: expected native byte order"):
        fftconv.conv2d(x.astype(">f4"), w)


@pytest.mark.parametrize("shape", [(3, 10, 10), (1, 2, 3, 10, 10), (10,)])
def test_wrong_ndim(xw, shape):
    _, w, _ = xw
    with pytest.raises(ValueError, match="input: expected a 4-D array"):
        fftconv.conv2d(np.zeros(shape, np.float32), w)


def test_zero_size(xw):
    _, w, _ = xw
    with pytest.raises(ValueError, match="input: every dimension must be >= 1"):
        fftconv.conv2d(np.zeros((0, 3, 10, 10), np.float32), w)


@pytest.mark.parametrize("bad", [[[[[1.0]]]], 3.0, None, "x"])
def test_not_an_array(xw, bad):
    _, w, _ = xw
    with pytest.raises(TypeError, match="input: expected a NumPy array"):
        fftconv.conv2d(bad, w)


def test_mismatched_channels(xw):
    x, _, _ = xw
    with pytest.raises(ValueError, match="weight has 2 input channels"):
        fftconv.conv2d(x, np.zeros((4, 2, 3, 3), np.float32))


@pytest.mark.parametrize("padding", [-1, (1, -2)])
def test_negative_padding(xw, padding):
    x, w, _ = xw
    with pytest.raises(ValueError, match="padding: must be >= 0"):
        fftconv.conv2d(x, w, padding=padding)


@pytest.mark.parametrize("padding", [1.5, (1, 2, 3), "full", True])
def test_malformed_padding(xw, padding):
    x, w, _ = xw
    with pytest.raises((TypeError, ValueError), match="padding"):
        fftconv.conv2d(x, w, padding=padding)


def test_same_needs_odd_kernel(xw):
    x, _, _ = xw
    with pytest.raises(ValueError, match="'same' needs an odd kernel"):
        fftconv.conv2d(x, np.zeros((1, 3, 2, 2), np.float32), padding="same")


def test_padding_mode(xw):
    x, w, _ = xw
    with pytest.raises(ValueError, match="padding_mode: expected 'zeros', 'reflect' or 'circular'"):
        fftconv.conv2d(x, w, padding=1, padding_mode="spiral")
    with pytest.raises(ValueError, match="'reflect' padding 10,10 must be smaller"):
        fftconv.conv2d(x, w, padding=10, padding_mode="reflect")


def test_unknown_backend(xw):
    x, w, _ = xw
    with pytest.raises(ValueError, match="backend: unknown name 'cudnn'.*known: .*direct"):
        fftconv.conv2d(x, w, backend="cudnn")
    with pytest.raises(TypeError, match="backend: expected a str"):
        fftconv.conv2d(x, w, backend=3)


@pytest.mark.skipif(fftconv.cuda_built, reason="a CUDA build has the CUDA backends")
@pytest.mark.parametrize("name", ["cufft", "fbfft"])
def test_cuda_backend_in_a_cpu_build(xw, name):
    x, w, _ = xw
    with pytest.raises(fftconv.UnsupportedError, match=f"backend: '{name}' is not built with CUDA"):
        fftconv.conv2d(x, w, backend=name)
    with pytest.raises(fftconv.UnsupportedError, match="not built with CUDA"):
        fftconv.plan("n=8,k=3", "fprop", backend=name)


@pytest.mark.parametrize("threads", [100000, 1 << 20])
def test_threads_above_the_hardware(threads):
    with pytest.raises(ValueError, match=f"threads: {threads} exceeds the .* hardware threads"):
        fftconv.plan("n=16,k=3", "fprop", backend="fftw", threads=threads)
    with pytest.raises(ValueError, match="threads: .* exceeds"):
        fftconv.plan("n=16,k=3", "fprop", backend="im2col", threads=threads)


@pytest.mark.parametrize("tile,err", [("banana", ValueError), (1, ValueError), (5000, ValueError),
                                      ("0x16", ValueError), (3.5, TypeError), ((16,), TypeError),
                                      ((16, "a"), TypeError)])
def test_bad_tile(xw, tile, err):
    x, w, _ = xw
    with pytest.raises(err, match="tile"):
        fftconv.conv2d(x, w, tile=tile)


def test_tile_smaller_than_kernel(xw):
    x, _, _ = xw
    with pytest.raises(ValueError):
        fftconv.conv2d(x, np.zeros((1, 3, 9, 9), np.float32), tile=4, backend="fftw")


def test_direct_is_never_tiled(xw):
    x, w, _ = xw
    with pytest.raises(fftconv.UnsupportedError, match="direct: tile must be none"):
        fftconv.conv2d(x, w, backend="direct", tile=16)
    assert issubclass(fftconv.UnsupportedError, ValueError)


def test_kernel_larger_than_input(xw):
    x, _, _ = xw
    with pytest.raises(ValueError, match="kernel 11x11 is larger than the padded input 10x10"):
        fftconv.conv2d(x, np.zeros((1, 3, 11, 11), np.float32))


def test_float64_backends(xw):
    # float64 runs on direct and fftw (documented); im2col is float32 only and says so.
    x, w, _ = xw
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    a = fftconv.conv2d(x64, w64, backend="fftw", tile="none")
    b = fftconv.conv2d(x64, w64, backend="direct")
    assert np.linalg.norm(a - b) <= 1e-12 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="im2col.*float32"):
        fftconv.conv2d(x64, w64, backend="im2col")


def test_grad_shapes(xw):
    x, w, g = xw
    with pytest.raises(ValueError, match="grad_output: expected shape \\(2, 4, 8, 8\\)"):
        fftconv.conv2d_input(x.shape, w, g[:, :, :7].copy())
    with pytest.raises(ValueError, match="grad_output: expected shape"):
        fftconv.conv2d_weight(x, w.shape, np.zeros((2, 5, 8, 8), np.float32))
    with pytest.raises(ValueError, match="input_size: expected 4 ints"):
        fftconv.conv2d_input((2, 3, 10), w, g)
    with pytest.raises(ValueError, match="weight_size: every size must be >= 1"):
        fftconv.conv2d_weight(x, (4, 3, 0, 3), g)
    with pytest.raises(TypeError, match="input_size: expected a sequence"):
        fftconv.conv2d_input(5, w, g)


def test_bad_out(xw):
    x, w, _ = xw
    with pytest.raises(ValueError, match="out \\(output\\): expected shape"):
        fftconv.conv2d(x, w, out=np.zeros((2, 4, 8, 7), np.float32))
    ro = np.zeros((2, 4, 8, 8), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fftconv.conv2d(x, w, out=ro)
    with pytest.raises(TypeError, match="expected dtype float32"):
        fftconv.conv2d(x, w, out=np.zeros((2, 4, 8, 8), np.float64))


def test_out_aliasing_an_operand(rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)  # output has the input's shape
    with pytest.raises(ValueError, match="must not overlap input"):
        fftconv.conv2d(x, w, out=x)


def test_stream_with_host_arrays(xw):
    x, w, _ = xw
    with pytest.raises(ValueError, match="stream: only CUDA tensors"):
        fftconv.conv2d(x, w, stream=5)


def test_problem_errors():
    with pytest.raises(ValueError, match="unknown key 'q'"):
        fftconv.Problem("q=3")
    with pytest.raises(ValueError, match="S: must be >= 1"):
        fftconv.Problem(S=0)
    with pytest.raises(ValueError, match="kh: kernel height"):
        fftconv.Problem(n=4, k=5)
    with pytest.raises(ValueError, match="pad: unknown value"):
        fftconv.Problem(n=8, padding="spiral")
    with pytest.raises(TypeError):
        fftconv.Problem(S="two")


def test_plan_errors():
    p = fftconv.Problem("n=16,k=3")
    with pytest.raises(ValueError, match="pass: unknown value 'forward'"):
        fftconv.plan(p, "forward")
    with pytest.raises(ValueError, match="dtype: expected"):
        fftconv.plan(p, "fprop", dtype="float16")
    with pytest.raises(ValueError, match="location: expected"):
        fftconv.plan(p, "fprop", location="tpu")
    with pytest.raises(ValueError, match="tile-sizes"):
        fftconv.plan(p, "fprop", tile="auto", tile_sizes="odd")
    with pytest.raises(ValueError, match="workspace_limit: must be >= 0"):
        fftconv.plan(p, "fprop", workspace_limit=-1)
    with pytest.raises(TypeError, match="problem: expected"):
        fftconv.plan(42, "fprop")
    if not fftconv.cuda_built:
        with pytest.raises(ValueError, match="backend: 'auto' is not available here: no backend runs at cuda"):
            fftconv.plan(p, "fprop", location="cuda")


def test_plan_execute_checks():
    pl = fftconv.plan("S=2,f=3,fo=4,n=10,k=3", "fprop", backend="direct")
    x = np.zeros((2, 3, 10, 10), np.float32)
    with pytest.raises(TypeError, match="fprop: weight is required"):
        pl.execute(x)
    with pytest.raises(ValueError, match="weight: expected shape \\(4, 3, 3, 3\\)"):
        pl._impl.execute(x, np.zeros((4, 3, 3, 2), np.float32), None, np.zeros((2, 4, 8, 8), np.float32), 0)
    with pytest.raises(TypeError, match="input: expected dtype float32, got float64"):
        pl._impl.execute(x.astype(np.float64), np.zeros((4, 3, 3, 3), np.float32), None,
                         np.zeros((2, 4, 8, 8), np.float32), 0)
    with pytest.raises(TypeError, match="input: expected an array, got None"):
        pl._impl.execute(None, None, None, None, 0)


def test_torch_cpu_tensor_is_refused_clearly(xw):
    torch = pytest.importorskip("torch")
    x, w, _ = xw
    with pytest.raises(TypeError, match="in CPU memory"):
        fftconv.conv2d(torch.from_numpy(x), w)
