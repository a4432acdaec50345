# %% [markdown]
# # 03 — Inside the FFT: decimation, butterflies, bit reversal, and one warp of 32 lanes
#
# The GPU backend `fbfft` computes many small FFTs (sizes 2…256) with each transform held by one
# **warp**: 32 threads (lanes) executing in lockstep, exchanging registers with *shuffle*
# instructions instead of going through memory (the fbfft paper, Section 5). This notebook builds
# that algorithm up from the definition of the DFT, in NumPy, checking every step against
# `numpy.fft`:
#
# 1. the DFT and the radix-2 split (decimation in time, DIT);
# 2. butterflies and the bit-reversal permutation; decimation in frequency (DIF);
# 3. why DIF forward + DIT inverse needs no bit reversal in a convolution;
# 4. a simulation of one warp running a 32-point DIF transform with `shfl_xor` butterflies;
# 5. the 2-D real transform from 1-D ones;
# 6. mixed radix for the non-power-of-two (7-smooth) sizes the convolution's basis can use.

# %%
%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(3)

def dft(x):
    """X[k] = sum_n x[n] exp(-2πi kn/N): N² multiply-adds."""
    N = len(x)
    n = np.arange(N)
    return np.exp(-2j * np.pi * np.outer(n, n) / N) @ x

x = rng.standard_normal(16) + 1j * rng.standard_normal(16)
print("DFT by definition == numpy.fft.fft:", np.allclose(dft(x), np.fft.fft(x)))

# %% [markdown]
# ## 1. Decimation in time
#
# Split $x$ into even and odd samples. With $E = \mathrm{DFT}(x_{0,2,4,\dots})$,
# $O = \mathrm{DFT}(x_{1,3,5,\dots})$ (each of length $N/2$) and the *twiddle factor*
# $\omega_N = e^{-2\pi i/N}$:
#
# $$X[k] = E[k] + \omega_N^k O[k], \qquad X[k + N/2] = E[k] - \omega_N^k O[k], \qquad 0 \le k < N/2.$$
#
# This pair of equations is a **butterfly**. Applied recursively, $\log_2 N$ levels of $N/2$
# butterflies cost $\mathcal{O}(N\log N)$ instead of $N^2$.

# %%
def fft_dit_recursive(x):
    N = len(x)
    if N == 1:
        return x.copy()
    E, O = fft_dit_recursive(x[0::2]), fft_dit_recursive(x[1::2])
    t = np.exp(-2j * np.pi * np.arange(N // 2) / N) * O
    return np.concatenate([E + t, E - t])

print("recursive DIT == numpy:", np.allclose(fft_dit_recursive(x), np.fft.fft(x)))

# %% [markdown]
# ## 2. Bit reversal and the iterative form
#
# Unrolling the recursion, the leaves are visited in an order where sample $n$ sits at position
# $\mathrm{bitrev}(n)$: the even/odd split looks at the lowest bit first. An iterative DIT therefore
# first permutes the input into **bit-reversed order**, then runs $\log_2 N$ stages of butterflies
# in place, with spans 1, 2, 4, … .
#
# **Decimation in frequency** (DIF) splits the *output* instead: butterflies come first
# ($a+b$ and $(a-b)\,\omega^j$, spans N/2, N/4, …, 1) and the result comes out in bit-reversed order.

# %%
def bitrev(n, bits):
    return int(format(n, f"0{bits}b")[::-1], 2)

def fft_dit(x):
    """Iterative DIT: bit-reverse the input, then stages with spans 1, 2, 4, ..."""
    N = len(x); bits = N.bit_length() - 1
    a = np.array([x[bitrev(n, bits)] for n in range(N)], complex)
    span = 1
    while span < N:
        w = np.exp(-2j * np.pi * np.arange(span) / (2 * span))
        for start in range(0, N, 2 * span):
            top, bot = a[start:start + span].copy(), a[start + span:start + 2 * span] * w
            a[start:start + span], a[start + span:start + 2 * span] = top + bot, top - bot
        span *= 2
    return a

def fft_dif(x):
    """Iterative DIF: stages with spans N/2, N/4, ..., 1; output in bit-reversed order."""
    N = len(x)
    a = np.array(x, complex)
    span = N // 2
    while span >= 1:
        w = np.exp(-2j * np.pi * np.arange(span) / (2 * span))
        for start in range(0, N, 2 * span):
            top, bot = a[start:start + span].copy(), a[start + span:start + 2 * span].copy()
            a[start:start + span], a[start + span:start + 2 * span] = top + bot, (top - bot) * w
        span //= 2
    return a

N, bits = 16, 4
perm = [bitrev(n, bits) for n in range(N)]
print("bit-reversal permutation of 0..15:", perm)
print("DIT == numpy:", np.allclose(fft_dit(x), np.fft.fft(x)))
print("DIF output, un-permuted, == numpy:", np.allclose(fft_dif(x)[perm], np.fft.fft(x)))

# %% [markdown]
# The butterfly diagram of an 8-point DIF transform: each stage pairs elements a span apart.

# %%
def draw_dif(ax, N=8):
    stages = N.bit_length() - 1
    span = N // 2
    for s in range(stages):
        for i in range(N):
            j = i ^ span                                   # the partner: differs in one bit
            ax.plot([s, s + 1], [i, j], color="C0" if i & span == 0 else "C3", lw=1)
            ax.plot([s, s + 1], [i, i], color="gray", lw=0.6)
        span //= 2
    for i in range(N):
        ax.text(-0.15, i, f"x[{i}]", ha="right", va="center", fontsize=8)
        ax.text(stages + 0.15, i, f"X[{bitrev(i, stages)}]", ha="left", va="center", fontsize=8)
    ax.set_xlim(-0.8, stages + 0.8); ax.invert_yaxis(); ax.axis("off")
    ax.set_title("8-point DIF: partners differ in one bit (lane ^ span); output bit-reversed", fontsize=9)

fig, ax = plt.subplots(figsize=(6, 3.5)); draw_dif(ax); plt.show()

# %% [markdown]
# ## 3. Convolution without bit reversal
#
# A convolution multiplies two spectra **pointwise**. A pointwise product does not care in which
# order the frequencies are stored, as long as both operands use the same order. So: transform
# both signals with DIF (bit-reversed output, no permutation), multiply, and invert with a DIT
# stage sequence that *takes* bit-reversed input (the iterative DIT without its first
# permutation). The result comes out in natural order — the bit reversals cancel. The paper lists
# this as a domain-specific optimization for fbfft (Section 5.1).

# %%
def idft_dit_from_bitreversed(a_rev):
    """Inverse DIT whose input is already in bit-reversed order (no permutation step)."""
    N = len(a_rev)
    a = np.array(a_rev, complex)
    span = 1
    while span < N:
        w = np.exp(+2j * np.pi * np.arange(span) / (2 * span))
        for start in range(0, N, 2 * span):
            top, bot = a[start:start + span].copy(), a[start + span:start + 2 * span] * w
            a[start:start + span], a[start + span:start + 2 * span] = top + bot, top - bot
        span *= 2
    return a / N

u, v = rng.standard_normal(N), rng.standard_normal(N)
circ = idft_dit_from_bitreversed(fft_dif(u) * fft_dif(v)).real
print("DIF × DIF → DIT⁻¹ (no bit reversal) == circular convolution:",
      np.allclose(circ, np.fft.ifft(np.fft.fft(u) * np.fft.fft(v)).real))

# %% [markdown]
# ## 4. One warp of 32 lanes
#
# On the GPU a warp is 32 lanes. In fbfft's small transforms each lane holds **one** element in a
# register, and per stage:
#
# * each lane exchanges its value with the lane whose index differs in one bit —
#   `__shfl_xor_sync(mask, v, span)`: lane $l$ receives the register of lane $l \oplus \text{span}$;
# * it combines the two with a butterfly (the upper lane adds, the lower lane subtracts and
#   multiplies by a twiddle);
# * the twiddle each lane needs is fetched from the lane that computed it once at the start, with
#   another shuffle (`__shfl_sync(mask, w, src)`), so `sincos` runs once per lane, not per stage.
#
# After $\log_2 32 = 5$ stages lane $l$ holds $X[\mathrm{bitrev}(l)]$; a single shuffle from lane
# $\mathrm{bitrev}(l)$ puts the result in natural order. We simulate lanes as the last axis of a
# NumPy array (so a whole batch of warps runs at once) and the shuffles as gathers.

# %%
LANES = 32

def shfl(reg, src_lane):
    """__shfl_sync: lane l reads `reg` of lane src_lane[l] (all lanes at once, lockstep)."""
    return reg[..., src_lane]

def shfl_xor(reg, lane_mask):
    """__shfl_xor_sync: lane l reads `reg` of lane l ^ lane_mask."""
    return reg[..., np.arange(LANES) ^ lane_mask]

def warp_fft(values, n=32, trace=None):
    """DIF FFT of size n (a power of two <= 32) on each group of n lanes of a warp; `values` has
    shape (..., 32): 32/n independent transforms per warp. Returns natural-order spectra."""
    lane = np.arange(LANES)
    sub = lane % n                                           # the lane's index inside its transform
    v = values.astype(np.complex64)
    # Each lane computes one twiddle once: w_n^sub.
    twiddle = np.exp(-2j * np.pi * sub / n).astype(np.complex64)
    span = n // 2
    while span >= 1:
        other = shfl_xor(v, span)                           # butterfly partner: lane ^ span
        upper = (lane & span) == 0
        # The lower lane of a butterfly at offset j = sub % span of a block of 2*span needs
        # w_{2 span}^j = w_n^{j * n / (2 span)}: read from the lane that holds that twiddle.
        src = (lane - sub) + (sub % span) * (n // (2 * span))
        w = shfl(twiddle, src)
        v = np.where(upper, v + other, (other - v) * w)
        if trace is not None:
            trace.append(span)
        span //= 2
    # Lane l holds X[bitrev(sub)] of its transform: one shuffle puts it in natural order.
    bits = n.bit_length() - 1
    rev = (lane - sub) + np.array([bitrev(s, bits) if bits else 0 for s in sub])
    return shfl(v, rev)

batch = rng.standard_normal((1000, LANES)).astype(np.float32)   # each lane loads one real element
trace = []
X = warp_fft(batch, 32, trace)
ref = np.fft.fft(batch.astype(np.float64), axis=-1)
print("stages (shfl_xor spans):", trace, " -> 5 shfl_xor + 5 twiddle shfl + 1 bit-reversal shfl")
print("32-point warp FFT, 1000 warps: max relative error vs numpy.fft (float64):",
      f"{np.abs(X - ref).max() / np.abs(ref).max():.2e}")

for n in (2, 4, 8, 16):
    Xn = warp_fft(batch, n)
    refn = np.fft.fft(batch.reshape(1000, LANES // n, n).astype(np.float64), axis=-1).reshape(1000, LANES)
    print(f"{n:2d}-point: {LANES // n:2d} transforms per warp, max relative error {np.abs(Xn - refn).max() / np.abs(refn).max():.2e}")

# %% [markdown]
# The float32 error is a few units of $\varepsilon_{32} \approx 6\times10^{-8}$ times $\log_2 n$ —
# the $\varepsilon \log N$ growth the library's tolerance model assumes. The data flow of the
# simulated warp: at each stage every lane talks to the lane one bit away, so the communication
# pattern is a hypercube and needs no shared memory at all.

# %%
fig, ax = plt.subplots(figsize=(9, 4))
span = 16
for s in range(5):
    for l in range(LANES):
        ax.plot([s, s + 1], [l, l ^ span], color="C0" if l & span == 0 else "C3", lw=0.6, alpha=0.8)
    ax.text(s + 0.5, -2.2, f"shfl_xor {span}", ha="center", fontsize=8)
    span //= 2
ax.plot([5, 6], [[l for l in range(LANES)], [bitrev(l, 5) for l in range(LANES)]], color="C2", lw=0.6)
ax.text(5.5, -2.2, "bit reversal\n(one shfl)", ha="center", fontsize=8)
ax.set_xlim(-0.2, 6.2); ax.set_ylim(33, -5); ax.set_yticks([0, 8, 16, 24, 31]); ax.set_ylabel("lane")
ax.set_xticks([]); ax.set_title("one warp, 32-point DIF: which lane each lane reads at each step")
plt.show()

# %% [markdown]
# ## 5. From one warp to a 2-D real transform
#
# A 2-D FFT is separable: 1-D transforms along the rows, then along the columns. For real input
# only $N/2+1$ columns of the row transforms are needed (Hermitian symmetry), which is what
# `rfft2` returns and what the library stores. Below, the warp routine does the row and column
# passes of a batch of 32×32 real planes; the result matches `numpy.fft.rfft2`.

# %%
planes = rng.standard_normal((4, 32, 32)).astype(np.float32)
rows = warp_fft(planes, 32)                       # one warp per row (32 rows per plane)
cols = warp_fft(np.swapaxes(rows, -1, -2), 32)    # transpose, one warp per column
spec = np.swapaxes(cols, -1, -2)[..., :17]        # keep N/2+1 columns
ref2 = np.fft.rfft2(planes.astype(np.float64))
print("2-D warp FFT == numpy.fft.rfft2:", np.allclose(spec, ref2, rtol=0, atol=1e-4 * np.abs(ref2).max()))

# %% [markdown]
# ## 6. Sizes that are not powers of two: mixed radix
#
# A convolution only needs a basis at least as large as its padded input. A power of two can waste a lot:
# a 13×13 input in a 16×16 basis has $16 \cdot 9 = 144$ complex frequencies, where 14×14 has $14 \cdot 8 = 112$,
# and every frequency is one complex matrix product (the CGEMM) in the convolution pipeline. fbfft's
# register kernels therefore also run **even 7-smooth** sides from 6 to 120 (6, 10, 12, 14, …, 60, 72, …, 120;
# `SmoothFft` in `gpu/fft/reg_fft.cuh`, Note [smooth register FFT]).
#
# The radix-2 split generalizes: for $N = r\,m$, decimation in frequency does $m$ radix-$r$ DFTs on the
# elements $j + m\,l$ ($l < r$), multiplies output $k$ by $W_N^{jk}$, and recurses on the $m$ contiguous
# elements of each $k$. The output lands in **digit-reversed** order,
# $\mathrm{freq}(i) = \lfloor i/m \rfloor + r\,\mathrm{freq}_m(i \bmod m)$ — again harmless for a pointwise product.
# Odd radices use the symmetric pairs $a_l = x_l + x_{r-l}$, $b_l = x_l - x_{r-l}$:
# $y_k = x_0 + \sum_l a_l\cos\theta_{lk} - i\sum_l b_l \sin\theta_{lk}$ and $y_{r-k}$ with the opposite sign, a quarter
# of the multiplications of the term-by-term sum.

# %%
def radix(n):
    return next((r for r in (4, 2, 3, 5, 7) if n % r == 0), None)

def dft_small(x, r, sign=-1):
    """r-point DFT of the rows x[l]; odd r by symmetric pairs (as SmoothFft's dft_small)."""
    if r % 2 == 0:
        l = np.arange(r)
        return np.exp(sign * 2j * np.pi * np.outer(l, l) / r) @ x
    h = (r - 1) // 2
    a = [x[l] + x[r - l] for l in range(1, h + 1)]
    b = [x[l] - x[r - l] for l in range(1, h + 1)]
    y = [None] * r
    y[0] = x[0] + sum(a)
    for k in range(1, h + 1):
        t = x[0] + sum(np.cos(2 * np.pi * l * k / r) * a[l - 1] for l in range(1, h + 1))
        u = sum(np.sin(2 * np.pi * l * k / r) * b[l - 1] for l in range(1, h + 1))
        y[k], y[r - k] = t + sign * 1j * u, t - sign * 1j * u
    return np.array(y)

def fft_mixed_dif(x):
    """Mixed-radix DIF in place (no reordering): returns the array in digit-reversed order."""
    v = np.array(x, dtype=complex)
    def rec(base, M):
        if M == 1:
            return
        r = radix(M); m = M // r
        for j in range(m):
            y = dft_small(v[base + j + m * np.arange(r)], r)
            v[base + j + m * np.arange(r)] = y * np.exp(-2j * np.pi * j * np.arange(r) / M)
        for k in range(r):
            rec(base + m * k, m)
    rec(0, len(v))
    return v

def radices(n):
    out = []
    while n > 1:
        out.append(radix(n)); n //= radix(n)
    return out

def freq_of(i, M):
    if M == 1:
        return 0
    r = radix(M); m = M // r
    return i // m + r * freq_of(i % m, m)

for N in (12, 14, 18, 20, 24, 28, 30):
    x = rng.standard_normal(N) + 1j * rng.standard_normal(N)
    v = fft_mixed_dif(x)
    order = [freq_of(i, N) for i in range(N)]
    assert sorted(order) == list(range(N))
    err = np.abs(v - np.fft.fft(x)[order]).max() / np.abs(x).sum()
    print(f"N={N:2d}: radices {radices(N)}, register i holds X[freq(i)], max error {err:.1e}; "
          f"freq order starts {order[:8]}")


# %% [markdown]
# Above 32 points a transform no longer fits one thread's registers. The kernels then spread it over
# $G$ = 2 or 4 lanes (Note [lane-split register FFT]): the first $\log_2 G$ radix-2 DIF stages pair lanes
# (one shuffle per register), and each lane finishes a smooth transform of $R = N/G$ points in its own
# registers — $60 = 2 \cdot 30$, $84 = 4 \cdot 21$, $120 = 4 \cdot 30$. Lane $p$'s register $r$ then holds
# $X[\mathrm{freq}_R(r)\,G + \mathrm{bitrev}_G(p)]$:

# %%
def lane_split(x, G):
    """The lane stages of a G-lane transform (lane p holds x[p*R:(p+1)*R]), then each lane's smooth DIF."""
    N = len(x); R = N // G
    v = np.array(x, dtype=complex).reshape(G, R)
    span = N // 2
    while span >= R:                                  # spans N/2 .. R: lanes p and p ^ (span / R)
        m = span // R
        out = v.copy()
        for p in range(G):
            if p & m:
                continue
            j = (p % m) * R + np.arange(R)             # index inside the 2*span-point sub-transform
            a, b = v[p], v[p ^ m]
            out[p], out[p ^ m] = a + b, (a - b) * np.exp(-1j * np.pi * j / span)
        v = out
        span //= 2
    return np.array([fft_mixed_dif(v[p]) for p in range(G)])

def bitrev(p, bits):
    return int(format(p, f"0{bits}b")[::-1], 2) if bits else 0

for N, G in ((60, 2), (84, 4), (120, 4)):
    x = rng.standard_normal(N) + 1j * rng.standard_normal(N)
    lanes = lane_split(x, G)
    R = N // G
    k = np.array([[freq_of(r, R) * G + bitrev(p, G.bit_length() - 1) for r in range(R)] for p in range(G)])
    err = np.abs(lanes - np.fft.fft(x)[k]).max() / np.abs(x).sum()
    print(f"N={N:3d} = {G} lanes x {R:2d} (inner radices {radices(R)}): max error {err:.1e}")

# %% [markdown]
# What the smaller basis saves in the convolution's complex products, for the paper's inputs (3×3 kernels,
# valid convolution: the padded input is the input) and a few padded inputs of common layers:

# %%
SMOOTH = (6, 10, 12, 14, 18, 20, 24, 28, 30, 36, 40, 42, 48, 50, 54, 56, 60, 72, 80, 84, 96, 100, 108, 112, 120)
def freqs(n):
    return n * (n // 2 + 1)
print("  x | power of two: side, freqs | smallest smooth side, freqs | ratio")
for x_in in (13, 16, 27, 32, 46, 57, 64, 84, 118):
    p2 = 1 << (x_in - 1).bit_length()
    s = next((n for n in SMOOTH if n >= x_in and freqs(n) < freqs(p2)), None)
    if s is None:
        print(f"{x_in:3d} | {p2:3d} {freqs(p2):5d}            | none (a power of two already)")
    else:
        print(f"{x_in:3d} | {p2:3d} {freqs(p2):5d}            | {s:3d} {freqs(s):5d}                  | {freqs(s) / freqs(p2):.2f}")


# %% [markdown]
# On the H100 the fbfft backend times both bases when it autotunes and keeps the faster: the smooth one won on
# the x = 13 and 27 layers from S = 64 (14 of the 72 rows of the paper's grid), e.g. S = 128, x = 13 fprop 103 → 85 µs,
# S = 64, x = 27 accGrad 91 → 73 µs; at S = 16–32 the power-of-two four-step and lanes kernels are faster than the
# smaller products save (`bench/results/h100/conv.json`, docs/results.md).


# %% [markdown]
# ## Any 7-smooth size: the Stockham autosort
#
# Odd sides, rectangles and 1-D sizes up to 256 (70, 45 × 128, 243, …) have no register kernel. They run on
# one kernel whose sizes are runtime values (Note [stockham kernels]). Each stage of radix $R$ reads one
# buffer and writes the other, so no stage needs a bit reversal and a block needs one barrier per stage.
# With $p$ the product of the radices done so far and $q = N/R$, item $i < q$ takes $x_s = v[i + s q]$,
# multiplies by $e^{-2\pi i\, s k/(pR)}$ with $k = i \bmod p$, runs a DFT of $R$ points, and writes
# $X_s$ to $w[(i - k)R + k + s p]$. After the last stage the output is in natural order:

# %%
def stockham(x, inverse=False):
    """Radix-4/2/3/5/7 Stockham autosort FFT (the stage formula of gpu/fft/stockham.cuh)."""
    v = np.array(x, dtype=complex)
    n = len(v)
    sign = 1 if inverse else -1
    order = []
    m = n
    for r in (4, 2, 3, 5, 7):
        while m % r == 0 and m > 1:
            order.append(r); m //= r
    assert m == 1, "not 7-smooth"
    p = 1
    for r in order:
        q = n // r
        w = np.empty_like(v)
        i = np.arange(q)
        k = i % p
        xs = np.stack([v[i + s * q] * np.exp(sign * 2j * np.pi * s * k / (p * r)) for s in range(r)])
        dft = np.exp(sign * 2j * np.pi * np.outer(np.arange(r), np.arange(r)) / r)
        ys = dft @ xs
        j = (i - k) * r + k
        for s in range(r):
            w[j + s * p] = ys[s]
        v = w
        p *= r
    return v

for N in (42, 45, 70, 126, 243, 250):
    x = rng.standard_normal(N) + 1j * rng.standard_normal(N)
    err = np.abs(stockham(x) - np.fft.fft(x)).max() / np.abs(x).sum()
    print(f"N={N:3d}: max error against numpy.fft {err:.1e}")

# %% [markdown]
# Real rows go two at a time: $z = x_a + i\,x_b$ is one complex transform, and the two half spectra come
# out of it as $X_a[k] = (Z_k + \overline{Z_{-k}})/2$ and $X_b[k] = (Z_k - \overline{Z_{-k}})/(2i)$ — half
# the work of two complex transforms, for any length, odd or even:

# %%
for N in (45, 54):
    xa, xb = rng.standard_normal(N), rng.standard_normal(N)
    Z = stockham(xa + 1j * xb)
    Zm = np.conj(Z[(-np.arange(N)) % N])
    Xa, Xb = (Z + Zm) / 2, (Z - Zm) / 2j
    h = N // 2 + 1
    err = max(np.abs(Xa[:h] - np.fft.rfft(xa)).max(), np.abs(Xb[:h] - np.fft.rfft(xb)).max())
    print(f"N={N}: two real rows from one complex transform, max error {err:.1e}")

# %% [markdown]
# These kernels are general but slower than the register kernels per frequency (13–24 % of the H100's copy
# bandwidth against 35–52 %, docs/results.md), so a plan takes a Stockham basis only where it has at most
# half the frequencies of the others (Note [stockham bases]) — e.g. a 3 × 70 input, whose power-of-two
# basis has no kernel below 32 × 128 and is widened to 128 × 128.
