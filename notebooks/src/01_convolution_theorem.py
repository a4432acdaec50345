# %% [markdown]
# # 01 — The convolution theorem and the three passes of a convolutional layer
#
# A convolutional layer computes three things during training (the fbfft paper, Section 2):
#
# * **fprop** (the output): $y_{s,j} = \sum_i x_{s,i} \star w_{j,i}$ — a *cross-correlation*, as in Torch and PyTorch;
# * **bprop** (the gradient with respect to the input): $\partial L/\partial x_{s,i} = \sum_j \partial L/\partial y_{s,j} * w_{j,i}$ — a full *convolution*;
# * **accGrad** (the gradient with respect to the weights): $\partial L/\partial w_{j,i} = \sum_s \partial L/\partial y_{s,j} \star x_{s,i}$.
#
# Each is a sum of 2-D correlations or convolutions, reduced over a different index ($f$, $f'$, $S$).
# This notebook writes them in the **time domain** (plain loops), then in the **frequency domain**
# (FFT, pointwise products, inverse FFT), checks every formula numerically against the `fftconv`
# library, and finally compares the operation counts of Section 2 with measured CPU times.
#
# Shapes follow PyTorch: input `S×f×h×w`, weight `fo×f×kh×kw`, output `S×fo×out_h×out_w` with
# `out_h = h + 2·ph − kh + 1`.

# %%
import time

%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import fftconv

rng = np.random.default_rng(0)
np.set_printoptions(precision=4, suppress=True)
print("backends:", [b["name"] for b in fftconv.backends()])

# %% [markdown]
# ## 1. The three passes in the time domain
#
# Cross-correlation of a plane `x` (size h×w) with a kernel `k` (kh×kw), "valid" part only:
# $(x \star k)[u, v] = \sum_{a,b} x[u+a, v+b]\, k[a, b]$. We write it with explicit sums over the
# kernel offsets (each offset adds a shifted copy of `x`), which is short and exact.

# %%
def correlate_valid(x, k):
    """(x ⋆ k)[u, v] = sum_{a,b} x[u+a, v+b] k[a, b] for every position where k fits inside x."""
    kh, kw = k.shape
    oh, ow = x.shape[0] - kh + 1, x.shape[1] - kw + 1
    out = np.zeros((oh, ow))
    for a in range(kh):
        for b in range(kw):
            out += k[a, b] * x[a:a + oh, b:b + ow]
    return out


def convolve_full(g, k):
    """Full convolution (g * k): every position where g and the flipped k overlap."""
    kh, kw = k.shape
    gp = np.pad(g, ((kh - 1, kh - 1), (kw - 1, kw - 1)))
    return correlate_valid(gp, k[::-1, ::-1])


def time_fprop(x, w):
    S, f = x.shape[:2]
    return np.array([[sum(correlate_valid(x[s, i], w[j, i]) for i in range(f)) for j in range(w.shape[0])]
                     for s in range(S)])


def time_bprop(g, w):
    S, fo = g.shape[:2]
    return np.array([[sum(convolve_full(g[s, j], w[j, i]) for j in range(fo)) for i in range(w.shape[1])]
                     for s in range(S)])


def time_accgrad(x, g):
    S, f = x.shape[:2]
    return np.array([[sum(correlate_valid(x[s, i], g[s, j]) for s in range(S)) for i in range(f)]
                     for j in range(g.shape[1])])


S, f, fo, h, w, kh, kw = 2, 3, 4, 12, 10, 3, 5
x = rng.standard_normal((S, f, h, w))
wt = rng.standard_normal((fo, f, kh, kw))
y = time_fprop(x, wt)
g = rng.standard_normal(y.shape)             # some gradient arriving from the layer above
gi, gw = time_bprop(g, wt), time_accgrad(x, g)
print("output", y.shape, " gradInput", gi.shape, " gradWeight", gw.shape)

# The library's ground truth (`direct`, float64) must agree to rounding error:
for name, mine, lib in [("fprop", y, fftconv.conv2d(x, wt, backend="direct")),
                        ("bprop", gi, fftconv.conv2d_input(x.shape, wt, g, backend="direct")),
                        ("accgrad", gw, fftconv.conv2d_weight(x, wt.shape, g, backend="direct"))]:
    print(f"{name:8s} max |mine - fftconv| = {np.abs(mine - lib).max():.2e}")

# %% [markdown]
# These are adjoint operations: fprop is linear in `x` and in `w`, and bprop and accGrad are its
# transposes. A one-line check of that is the identity
# $\langle \mathrm{fprop}(x,w), g\rangle = \langle x, \mathrm{bprop}(g,w)\rangle = \langle w, \mathrm{accGrad}(x,g)\rangle$:

# %%
print(np.vdot(y, g), np.vdot(x, gi), np.vdot(wt, gw))

# %% [markdown]
# ## 2. Circular against linear correlation
#
# The DFT of length $N$ diagonalizes **circular** shifts. The convolution theorem therefore says
# that $\mathcal{F}^{-1}\big(\mathcal{F}(x)\cdot\overline{\mathcal{F}(k)}\big)$ is the *circular*
# cross-correlation $\sum_a x[(u+a) \bmod N]\,k[a]$: indices that run off the end wrap around.
# To get the *linear* (ordinary) correlation we embed both signals in a basis large enough that
# nothing we keep wraps: for the valid part, $N \ge n$ suffices (the kernel is zero-embedded in
# $N$); for the full convolution (bprop) we need $N \ge n + k - 1$.

# %%
n, k = 16, 5
x1 = rng.standard_normal(n)
k1 = rng.standard_normal(k)

def circular_correlation(x, kern, N):
    xe, ke = np.zeros(N), np.zeros(N)
    xe[:len(x)], ke[:len(kern)] = x, kern
    return np.array([sum(xe[(u + a) % N] * ke[a] for a in range(N)) for u in range(N)])

via_fft = np.fft.ifft(np.fft.fft(x1, n) * np.conj(np.fft.fft(k1, n))).real
direct = circular_correlation(x1, k1, n)
linear = np.correlate(x1, k1, mode="valid")           # length n - k + 1
print("FFT product == circular correlation:", np.allclose(via_fft, direct))
print("valid part equals the linear correlation:", np.allclose(via_fft[:n - k + 1], linear))
# Past the valid part, the circular result reads x[0], x[1], ... where a linear correlation reads zeros:
no_wrap = np.correlate(np.r_[x1, np.zeros(k - 1)], k1, mode="valid")   # basis n + k - 1: nothing wraps
print("last k-1 values, circular:", np.round(via_fft[n - k + 1:], 3))
print("last k-1 values, linear:  ", np.round(no_wrap[n - k + 1:], 3))
print("FFT of length n+k-1 gives the linear result everywhere:",
      np.allclose(np.fft.ifft(np.fft.fft(x1, n + k - 1) * np.conj(np.fft.fft(k1, n + k - 1))).real[:n], no_wrap))

fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(via_fft, "o-", label="circular (FFT of length n)")
ax.plot(np.arange(n - k + 1), linear, "x", ms=10, label="linear, valid part")
ax.axvspan(n - k + 0.5, n - 0.5, color="red", alpha=0.15, label="wrapped around")
ax.set_xlabel("u"); ax.legend(); ax.set_title("circular vs linear correlation")
plt.show()

# %% [markdown]
# ## 3. The three passes in the frequency domain
#
# With $X$ the 2-D FFT of the (padded) input, $W$ the FFT of the zero-embedded weight and $G$ the
# FFT of the zero-embedded gradOutput, all on one basis $N_h \times N_w \ge (h+2p_h)\times(w+2p_w)$,
# unnormalized (divide by $N_h N_w$ after the inverse):
#
# | pass | frequency domain | keep |
# |---|---|---|
# | fprop | $Y_{s,j} = \sum_i X_{s,i}\,\overline{W_{j,i}}$ | $[0, out_h)\times[0, out_w)$ |
# | bprop | $G^p_{s,i} = \sum_j G_{s,j}\,W_{j,i}$ | $[0, h_p)\times[0, w_p)$, then undo the padding |
# | accGrad | $GW_{j,i} = \sum_s \overline{G_{s,j}}\,X_{s,i}$ | $[0, k_h)\times[0, k_w)$ |
#
# For every frequency the sum is a small **matrix product** (e.g. fprop: an $S\times f$ matrix times
# an $f\times f'$ matrix) — the paper's Table 1 pipeline is "FFT, transpose, CGEMM per frequency,
# transpose, IFFT". Below, `np.einsum` plays the CGEMM. `rfft2` keeps only $N_w/2+1$ columns
# (Hermitian symmetry, Section 4).

# %%
def freq_passes(x, wt, g, ph=0, pw=0):
    S, f, h, w = x.shape
    fo, _, kh, kw = wt.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    Nh, Nw = xp.shape[2:]                               # basis = padded input: no wrap-around
    X = np.fft.rfft2(xp, (Nh, Nw))
    W = np.fft.rfft2(wt, (Nh, Nw))                      # zero-embedded kernel
    G = np.fft.rfft2(g, (Nh, Nw))                       # zero-embedded gradOutput
    oh, ow = g.shape[2:]
    Y = np.einsum("siab,jiab->sjab", X, np.conj(W))     # per frequency: (S×f)·(f×fo)
    y = np.fft.irfft2(Y, (Nh, Nw))[:, :, :oh, :ow]
    Gp = np.einsum("sjab,jiab->siab", G, W)
    gp = np.fft.irfft2(Gp, (Nh, Nw))
    gi = gp[:, :, ph:ph + h, pw:pw + w]                 # zero padding: P^T is a crop
    GW = np.einsum("sjab,siab->jiab", np.conj(G), X)
    gw = np.fft.irfft2(GW, (Nh, Nw))[:, :, :kh, :kw]
    return y, gi, gw

ph, pw = 1, 2
y_ref = fftconv.conv2d(x, wt, padding=(ph, pw), backend="direct")
g = rng.standard_normal(y_ref.shape)
refs = (y_ref, fftconv.conv2d_input(x.shape, wt, g, padding=(ph, pw), backend="direct"),
        fftconv.conv2d_weight(x, wt.shape, g, padding=(ph, pw), backend="direct"))
for name, mine, ref in zip(("fprop", "bprop", "accgrad"), freq_passes(x, wt, g, ph, pw), refs):
    print(f"{name:8s} relative error of the frequency-domain formula: "
          f"{np.linalg.norm(mine - ref) / np.linalg.norm(ref):.2e}")

# %% [markdown]
# Why is a basis of the padded input size enough for bprop, whose full convolution is larger?
# Because we only keep $[0,h_p)\times[0,w_p)$: the full convolution of gradOutput
# ($out_h = h_p-k_h+1$ rows) with the kernel has $h_p$ rows exactly, so nothing wraps into what we keep.
#
# The library's `fftw` backend runs exactly this pipeline in float32 (FFTW transforms, Eigen CGEMMs).
# Its plan says what it chose:

# %%
pl = fftconv.plan(fftconv.Problem(S=S, f=f, fo=fo, h=h, w=w, kh=kh, kw=kw, ph=ph, pw=pw), "fprop",
                  backend="fftw", tile="none")
print(pl.describe())
y32 = pl.execute(x.astype(np.float32), wt.astype(np.float32))
print("float32 relative error:", np.linalg.norm(y32 - y_ref) / np.linalg.norm(y_ref))

# %% [markdown]
# ## 4. Hermitian symmetry
#
# The DFT of a real signal satisfies $X[-k] = \overline{X[k]}$ (indices mod $N$). In 2-D,
# $X[-a, -b] = \overline{X[a, b]}$, so half the spectrum is redundant: `rfft2` stores
# $N_h \times (N_w/2+1)$ complex numbers instead of $N_h\times N_w$. The frequency-domain products
# are also done on that half only, which halves the CGEMM work.

# %%
a = rng.standard_normal((8, 8))
A = np.fft.fft2(a)
flip = np.roll(A[::-1, ::-1], 1, axis=(0, 1))          # A[-u, -v]
print("X[-u,-v] == conj(X[u,v]):", np.allclose(flip, np.conj(A)))
print("rfft2 keeps columns 0..N/2:", np.allclose(np.fft.rfft2(a), A[:, :5]))
print("DC and Nyquist entries are real:", np.abs(A[0, 0].imag) < 1e-12, np.abs(A[4, 4].imag) < 1e-12)

fig, axs = plt.subplots(1, 2, figsize=(8, 3.5))
axs[0].imshow(np.abs(np.fft.fftshift(A)), cmap="viridis"); axs[0].set_title("|FFT| (centered): point-symmetric")
axs[1].imshow(np.angle(np.fft.fftshift(A)), cmap="twilight"); axs[1].set_title("phase: odd symmetry")
for ax_ in axs:
    ax_.set_xticks([]); ax_.set_yticks([])
plt.show()

# %% [markdown]
# ## 5. Interpolation by zero padding
#
# The weight is tiny (e.g. 5×5) but it must be transformed on the input's basis (e.g. 64×64): we
# zero-embed it. Zero padding does not add information: the DFT of length $N$ of a length-$k$
# signal samples its continuous spectrum (the DTFT) $K(\omega) = \sum_a k[a] e^{-i\omega a}$ at
# $\omega = 2\pi m/N$. A larger $N$ only samples the same smooth curve more densely — it
# *interpolates* the spectrum. That is why one set of weights can be used with any basis size.

# %%
k5 = rng.standard_normal(5)
omega = np.linspace(0, 2 * np.pi, 1000)
dtft = np.abs(np.exp(-1j * np.outer(omega, np.arange(5))) @ k5)
fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(omega, dtft, "k-", lw=1, label="DTFT of the 5-tap kernel")
for N, mk in [(8, "o"), (16, "s"), (64, ".")]:
    ax.plot(2 * np.pi * np.arange(N) / N, np.abs(np.fft.fft(k5, N)), mk, label=f"FFT, N={N}")
ax.set_xlabel("ω"); ax.set_ylabel("|K(ω)|"); ax.legend(); ax.set_title("zero padding samples the same spectrum")
plt.show()
print("every 8th sample of the N=64 FFT is the N=8 FFT:", np.allclose(np.fft.fft(k5, 64)[::8], np.fft.fft(k5, 8)))

# %% [markdown]
# ## 6. The cost formulas of Section 2 against measured times
#
# With $n = h = w$ and $k = k_h = k_w$ the paper counts
#
# * time domain: $\mathcal{O}(S f f' n^2 k^2)$ multiply-adds;
# * frequency domain: $\mathcal{O}\big(S f f' n^2 + (S f + f f' + S f') n^2 \log n\big)$ — one
#   transform per input, weight and output plane, plus the pointwise products.
#
# The time-domain cost grows with $k^2$, the frequency-domain cost does not depend on $k$ at all.
# We measure the library's `direct`-like time-domain baseline `im2col` (unroll + GEMM) and its
# untiled `fftw` backend on one layer while the kernel grows, and fit each formula with one
# constant per term (least squares on the measured times). If the formulas capture the
# algorithms, the fitted curves follow the measurements and the crossover appears where they cross.
# Both run on one thread (`threads=1`), so that the comparison is about arithmetic, not parallelism.

# %%
def best_time(plan, *args, reps=7):
    """The fastest of a few runs after a warm-up: on a shared machine the minimum is the most
    repeatable estimate of what the algorithm costs (noise only ever adds time)."""
    plan.execute(*args)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        plan.execute(*args)
        ts.append(time.perf_counter() - t0)
    return float(np.min(ts))

S, f, fo, n = 8, 16, 16, 32
ks = [1, 3, 5, 7, 9, 11, 13]
rows = []
for k in ks:
    p = fftconv.Problem(S=S, f=f, fo=fo, n=n, k=k, p=(k - 1) // 2)     # 'same' output size n×n
    xs = rng.standard_normal(p.input_shape).astype(np.float32)
    ws = rng.standard_normal(p.weight_shape).astype(np.float32)
    t_time = best_time(fftconv.plan(p, "fprop", backend="im2col", threads=1), xs, ws)
    pf = fftconv.plan(p, "fprop", backend="fftw", tile="none", threads=1)
    t_fft = best_time(pf, xs, ws)
    rows.append((k, t_time, t_fft, p.wrapped_h))
    print(f"k={k:2d}  im2col {t_time * 1e3:7.2f} ms   fftw {t_fft * 1e3:7.2f} ms")

k_arr = np.array([r[0] for r in rows], float)
t_time = np.array([r[1] for r in rows])
t_fft = np.array([r[2] for r in rows])
N_arr = np.array([r[3] for r in rows], float)            # the transform size grows with the padding (n + p)

time_model = S * f * fo * n**2 * k_arr**2                # multiply-adds
c_time = np.linalg.lstsq(time_model[:, None], t_time, rcond=None)[0]
fft_terms = np.stack([S * f * fo * N_arr**2,                              # pointwise products
                      (S * f + f * fo + S * fo) * N_arr**2 * np.log2(N_arr),  # transforms
                      np.ones_like(N_arr)], axis=1)                        # fixed overhead
c_fft = np.linalg.lstsq(fft_terms, t_fft, rcond=None)[0]

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(k_arr, t_time * 1e3, "o", color="C0", label="im2col (measured)")
ax.plot(k_arr, time_model * c_time * 1e3, "-", color="C0", label="c · S f f' n² k²")
ax.plot(k_arr, t_fft * 1e3, "s", color="C1", label="fftw (measured)")
ax.plot(k_arr, fft_terms @ c_fft * 1e3, "-", color="C1", label="a · S f f' N² + b · (Sf+ff'+Sf') N² log N + c")
ax.set_xlabel("kernel size k"); ax.set_ylabel("ms"); ax.set_title(f"S={S}, f=f'={f}, n={n}: time vs kernel size")
ax.legend(fontsize=8); plt.show()

for name, meas, model in [("time domain", t_time, time_model * c_time), ("frequency domain", t_fft, fft_terms @ c_fft)]:
    print(f"{name:17s}: model/measured ratios {np.round(model / meas, 2)}")

# %% [markdown]
# What to read from the plot:
#
# * the time-domain cost grows like $k^2$, as the formula says (the fit is one constant);
# * the FFT cost depends on $k$ only through the transform size $N = n + p$ (the output stays
#   $n\times n$) — it is nearly flat. Not $n + 2p$: the transform is circular, and with zero padding
#   the indices that wrap around land on the other side's zeros, so one side's $p$ zeros serve both
#   edges (`Problem.wrapped_h`; the library's bases start there);
# * small kernels favour the time domain, large ones the frequency domain. The crossover depends
#   on the constants (cache behaviour, transform sizes), which is why the library measures instead of
#   trusting asymptotics — and why the paper explores several basis sizes and, in its Section 6,
#   **tiling** (the next notebook).
