# %% [markdown]
# # 02 — Tiling: overlap-save, the accGrad reduction form, and the planner
#
# An untiled FFT convolution transforms every plane on a basis as large as the padded input. The
# fbfft paper's Section 6 proposes instead to cut the problem into **small tiles**: with a kernel of
# size $k$ and a tile basis $N$, each tile produces $d = N - k + 1$ outputs, so the cost goes from
# $\mathcal{O}(n \log n)$ to $\mathcal{O}(\lceil n/d\rceil\, N \log N)$ — and, more importantly on real
# hardware, the small transforms stay in registers, shared memory or cache, and the scratch memory
# no longer grows with the input.
#
# This notebook uses the library's tiling planner (`fftconv.tiling`, `fftconv.tile_plan`): it draws
# the tiles over an input, re-implements the tiled passes in NumPy *from the planner's tile list*
# (so the geometry is checked, not just drawn), and compares the planner's cost model with measured
# times as the tile size changes.

# %%
%matplotlib inline
import time

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

import fftconv

rng = np.random.default_rng(1)

# %% [markdown]
# ## 1. Overlap-save in one dimension
#
# To correlate a long signal $x$ (length $n$) with a short kernel $c$ (length $k$), cut the *output*
# into pieces of $d = N-k+1$ samples. Output piece $t$ needs input $[t d,\; t d + d + k - 1)$ — the
# pieces of input **overlap** by $k-1$ samples. Each piece is correlated on a basis of $N$ by FFT;
# the last $k-1$ values of each inverse wrapped around and are thrown away (*saved* are the first $d$).

# %%
def overlap_save_1d(x, c, N):
    k = len(c)
    d = N - k + 1
    out_len = len(x) - k + 1
    C = np.fft.rfft(c, N)
    y = np.zeros(out_len)
    for start in range(0, out_len, d):
        length = min(d, out_len - start)
        piece = x[start:start + length + k - 1]                      # overlapping input window
        Y = np.fft.rfft(piece, N) * np.conj(C)
        y[start:start + length] = np.fft.irfft(Y, N)[:length]       # keep the non-wrapped part
    return y

x1 = rng.standard_normal(100)
c1 = rng.standard_normal(7)
for N in (8, 16, 32, 128):
    err = np.abs(overlap_save_1d(x1, c1, N) - np.correlate(x1, c1, "valid")).max()
    print(f"N={N:3d}: step d={N - 6:3d}, {int(np.ceil(94 / (N - 6))):2d} tiles, max error {err:.1e}")

# %% [markdown]
# ## 2. The planner's tiles over an input
#
# `fftconv.tile_plan(problem, pass_, fft_h, fft_w)` returns the geometry the backends execute, as
# plain data. For fprop each tile has an output `window` and the padded-input `read` window it
# transforms (`window` grown by $k-1$); tiles touching the padding ring are marked `border`.

# %%
prob = fftconv.Problem(S=2, f=3, fo=4, h=40, w=52, kh=5, kw=5, ph=2, pw=2)
tp = fftconv.tile_plan(prob, "fprop", 16)
print(tp["summary"], "| region", tp["region"], "| tiles", tp["count"])
print("first tile:", tp["tiles"][0])

def draw_tiles(ax, plan, grid_h, grid_w, show_reads=(0,), title=""):
    ax.add_patch(Rectangle((0, 0), grid_w, grid_h, fill=False, lw=1.5, color="k"))
    cmap = plt.get_cmap("tab20")
    for t in plan["tiles"]:
        wdw = t["window"]
        ax.add_patch(Rectangle((wdw["x0"], wdw["y0"]), wdw["w"], wdw["h"], color=cmap(t["index"] % 20), alpha=0.45))
        ax.text(wdw["x0"] + wdw["w"] / 2, wdw["y0"] + wdw["h"] / 2, str(t["index"]), ha="center", va="center", fontsize=7)
    for i in show_reads:
        r = plan["tiles"][i]["read"]
        ax.add_patch(Rectangle((r["x0"], r["y0"]), r["w"], r["h"], fill=False, ls="--", lw=2, color="C3"))
    ax.set_xlim(-1, grid_w + 1); ax.set_ylim(grid_h + 1, -1); ax.set_aspect("equal"); ax.set_title(title, fontsize=9)

fig, axs = plt.subplots(1, 2, figsize=(11, 4.5))
draw_tiles(axs[0], tp, prob.padded_h, prob.padded_w, show_reads=(0, 4),
           title="fprop, 16×16 basis: output windows (colour), read windows of tiles 0 and 4 (dashed)")
axs[0].add_patch(Rectangle((prob.pw, prob.ph), prob.w, prob.h, fill=False, color="k", ls=":", lw=1))
tp8 = fftconv.tile_plan(prob, "fprop", 8)
draw_tiles(axs[1], tp8, prob.padded_h, prob.padded_w, show_reads=(0,), title="the same with an 8×8 basis (step 4)")
plt.tight_layout(); plt.show()

# %% [markdown]
# ## 3. Executing the tile list in NumPy (fprop)
#
# For each tile: copy the padded-input `read` window into an $N_h\times N_w$ buffer at offset 0,
# transform, multiply by $\overline{W}$ (the kernel's transform on the *tile* basis — computed once),
# reduce over input planes, inverse, and keep the first `window.h × window.w` values. If the
# planner's windows were wrong anywhere, the result would not match `direct`.

# %%
def pad(x, p, mode):
    return np.pad(x, ((0, 0), (0, 0), (p.ph, p.ph), (p.pw, p.pw)), mode="constant" if mode == "zero" else "reflect")

def tiled_fprop(x, w, p, plan):
    Nh, Nw = plan["fft_h"], plan["fft_w"]
    xp = pad(x, p, p.padding)
    Wf = np.fft.rfft2(w, (Nh, Nw))
    y = np.full((p.S, p.fo, p.out_h, p.out_w), np.nan)
    for t in plan["tiles"]:
        r, o = t["read"], t["window"]
        X = np.fft.rfft2(xp[:, :, r["y0"]:r["y0"] + r["h"], r["x0"]:r["x0"] + r["w"]], (Nh, Nw))
        Y = np.einsum("siab,jiab->sjab", X, np.conj(Wf))
        y[:, :, o["y0"]:o["y0"] + o["h"], o["x0"]:o["x0"] + o["w"]] = np.fft.irfft2(Y, (Nh, Nw))[:, :, :o["h"], :o["w"]]
    return y

for pad_kind in ("zero", "mirror"):
    p = fftconv.Problem(prob.spec, padding=pad_kind)
    x = rng.standard_normal(p.input_shape)
    w = rng.standard_normal(p.weight_shape)
    ref = fftconv.conv2d(x, w, padding=2, padding_mode="zeros" if pad_kind == "zero" else "reflect", backend="direct")
    for basis in ((16, 16), (8, 16), (32, 8)):
        mine = tiled_fprop(x, w, p, fftconv.tile_plan(p, "fprop", *basis))
        print(f"{pad_kind:6s} basis {basis}: every output written: {not np.isnan(mine).any()}, "
              f"relative error {np.linalg.norm(mine - ref) / np.linalg.norm(ref):.1e}")

# %% [markdown]
# ## 4. The accGrad reduction form
#
# accGrad reduces over the batch and over space: $\partial L/\partial w_{j,i} = \sum_s \sum_{y,x} x^{pad}_{s,i}[y+u, x+v]\, g_{s,j}[y,x]$.
# Split the gradOutput grid into tiles $T$: each tile contributes the correlation of its
# gradOutput piece with the padded-input window it sees, and the sum over tiles is the whole
# gradient — a **reduction** over (image, tile) items:
#
# $$\frac{\partial L}{\partial w_{j,i}} = \sum_{s}\sum_{T} x^{pad}_{s,i}[T + (k-1)] \star g_{s,j}[T]$$
#
# Where to take the sum is a choice (Note [accGrad tile reduction] in `tiling/tile_plan.hpp`):
#
# * **frequency**: accumulate $\overline{G_T}\,X_T$ over every item into one spectrum per $(j,i)$,
#   then a single inverse transform per $(j, i)$ at the end;
# * **time**: inverse per tile and add the $k_h\times k_w$ crops — same products, many more inverses.

# %%
def tiled_accgrad(x, g, p, plan, reduction):
    Nh, Nw = plan["fft_h"], plan["fft_w"]
    xp = pad(x, p, p.padding)
    acc_f = np.zeros((p.fo, p.f, Nh, Nw // 2 + 1), complex)
    acc_t = np.zeros((p.fo, p.f, p.kh, p.kw))
    inverses = 0
    for t in plan["tiles"]:
        r, o = t["read"], t["window"]
        X = np.fft.rfft2(xp[:, :, r["y0"]:r["y0"] + r["h"], r["x0"]:r["x0"] + r["w"]], (Nh, Nw))
        G = np.fft.rfft2(g[:, :, o["y0"]:o["y0"] + o["h"], o["x0"]:o["x0"] + o["w"]], (Nh, Nw))
        prod = np.einsum("sjab,siab->jiab", np.conj(G), X)          # sum over images
        if reduction == "frequency":
            acc_f += prod
        else:
            acc_t += np.fft.irfft2(prod, (Nh, Nw))[:, :, :p.kh, :p.kw]
            inverses += p.fo * p.f
    if reduction == "frequency":
        acc_t = np.fft.irfft2(acc_f, (Nh, Nw))[:, :, :p.kh, :p.kw]
        inverses = p.fo * p.f
    return acc_t, inverses

p = prob
x = rng.standard_normal(p.input_shape)
g = rng.standard_normal(p.output_shape)
ref = fftconv.conv2d_weight(x, p.weight_shape, g, padding=2, backend="direct")
for reduction in ("frequency", "time"):
    plan_a = fftconv.tile_plan(p, "accgrad", 16, reduction=reduction)
    gw, inv = tiled_accgrad(x, g, p, plan_a, reduction)
    print(f"{reduction:9s}: {plan_a['count']} tiles, {inv:4d} inverse transforms, "
          f"relative error {np.linalg.norm(gw - ref) / np.linalg.norm(ref):.1e}")

fig, ax = plt.subplots(figsize=(5.5, 4.5))
draw_tiles(ax, fftconv.tile_plan(p, "accgrad", 16), p.out_h, p.out_w, show_reads=(),
           title="accGrad: tiles partition the gradOutput grid (every element in one tile)")
plt.show()

# %% [markdown]
# ## 5. The planner: candidates and the cost model
#
# `fftconv.tiling(problem, pass_, tile="auto")` enumerates candidate tile bases (powers of two by
# default, or 2,3,5,7-smooth sizes with `tile_sizes="smooth"`) plus the untiled plan, costs each
# with the model of `tiling/cost_model.hpp` (transform flops plus a fixed charge per transform,
# weighted pointwise CGEMM flops, memory traffic charged more when the working set spills out of
# cache; the weights were fitted to measured CPU times) and picks the cheapest that fits the
# workspace limit. The table is the planner's own `explain()` output; the bars show the charged parts.

# %%
layer = fftconv.Problem(S=8, f=16, fo=16, n=64, k=5, p=2)
choice = fftconv.tiling(layer, "fprop", tile="auto", include_tiles=False)
print(choice["table"])

cands = [c for c in choice["candidates"] if c["cost"] is not None]
labels = [c["label"] for c in cands]
parts = {"transforms": [c["transform_cost"] for c in cands], "CGEMM": [c["pointwise_cost"] for c in cands],
         "extra": [c["extra_flops"] for c in cands], "traffic": [c["traffic_cost"] for c in cands]}
for i, c in enumerate(cands):  # the parts add up to the model's cost
    assert abs(sum(v[i] for v in parts.values()) - c["cost"]) <= 1e-9 * c["cost"]
fig, ax = plt.subplots(figsize=(8, 3.5))
bottom = np.zeros(len(cands))
for name, vals in parts.items():
    ax.bar(labels, vals, bottom=bottom, label=name)
    bottom += np.array(vals)
ax.set_ylabel("model cost (flop-equivalents)"); ax.set_title(f"{layer.spec} fprop: cost model per candidate")
ax.legend(fontsize=8); plt.show()

# %% [markdown]
# ## 6. Cost model against measured times
#
# A model is only useful if it ranks candidates the way the machine does. We run the `fftw`
# backend (one thread) with each tile basis in turn, measure it, and put the measured times next to
# the model's costs, both relative to the untiled plan. Perfect agreement is not expected (the
# constants are rough, and a shared machine is noisy); the *ordering* and the trend are what the
# planner relies on.

# %%
def best_time(plan, *args, reps=5):
    plan.execute(*args)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        plan.execute(*args)
        ts.append(time.perf_counter() - t0)
    return float(np.min(ts))

xs = rng.standard_normal(layer.input_shape).astype(np.float32)
ws = rng.standard_normal(layer.weight_shape).astype(np.float32)
ref = fftconv.conv2d(xs, ws, padding=2, backend="direct")
rows = []
for tile in ["none", 8, 16, 32, 64]:
    try:
        pl = fftconv.plan(layer, "fprop", backend="fftw", tile=tile, threads=1)
    except fftconv.UnsupportedError as e:
        print(f"tile {tile}: skipped — {e}")
        continue
    y = pl.execute(xs, ws)
    err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
    t = best_time(pl, xs, ws)
    model = fftconv.tiling(layer, "fprop", tile=tile, include_tiles=False)["plan"]["cost"]["cost"]
    rows.append((str(tile), t, model, pl.workspace_bytes))
    print(f"tile {str(tile):5s}: {t * 1e3:7.2f} ms, model cost {model:.3g}, workspace {pl.workspace_bytes / 2**10:8.1f} KiB, "
          f"rel. error {err:.1e}")

if len(rows) > 1:
    names = [r[0] for r in rows]
    meas = np.array([r[1] for r in rows]); model = np.array([r[2] for r in rows])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    xpos = np.arange(len(rows))
    ax.bar(xpos - 0.2, meas / meas[0], 0.4, label="measured time / untiled")
    ax.bar(xpos + 0.2, model / model[0], 0.4, label="model cost / untiled")
    ax.set_xticks(xpos, names); ax.set_xlabel("tile basis"); ax.legend(); ax.set_title("cost model vs measurement")
    plt.show()
    print("planner's pick:", choice["chosen"], "| fastest measured:", names[int(np.argmin(meas))])
else:
    print("Tiled execution is not available in this build: the comparison needs the fftw tiled path.")

# %% [markdown]
# ## 7. Memory saved
#
# The untiled plan keeps the spectra of whole planes: its workspace grows like $n^2$. A tiled plan
# keeps only the items in flight (a bounded number of (image, tile) pairs), so its workspace is
# independent of the input size — the point of Section 6 for GPUs, where the frequency buffers of a
# large layer otherwise cost more memory than the layer's tensors.
#
# The figures below are the planner's model of a plan that holds whole spectra. (The CPU `fftw`
# backend's untiled plan already caps its own workspace by processing the reduction in chunks —
# see `plan.describe()` — which is why its measured `workspace_bytes` above is smaller than the model's.)

# %%
ns = [32, 64, 128, 256, 512]
untiled, tiled, tensors = [], [], []
for n in ns:
    q = fftconv.Problem(S=8, f=16, fo=16, n=n, k=5, p=2)
    untiled.append(fftconv.tiling(q, "fprop", tile="none", include_tiles=False)["plan"]["cost"]["workspace_bytes"])
    tiled.append(fftconv.tiling(q, "fprop", tile=16, include_tiles=False)["plan"]["cost"]["workspace_bytes"])
    tensors.append(4 * (np.prod(q.input_shape) + np.prod(q.weight_shape) + np.prod(q.output_shape)))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.loglog(ns, np.array(untiled) / 2**20, "o-", label="untiled workspace (model)")
ax.loglog(ns, np.array(tiled) / 2**20, "s-", label="16×16 tiles workspace (model)")
ax.loglog(ns, np.array(tensors) / 2**20, "k:", label="the layer's tensors")
ax.set_xlabel("n (input h = w)"); ax.set_ylabel("MiB"); ax.legend(); ax.set_title("scratch memory, S=8, f=f'=16, k=5")
plt.show()
for n, u, t in zip(ns, untiled, tiled):
    print(f"n={n:4d}: untiled {u / 2**20:8.2f} MiB, tiled {t / 2**20:6.2f} MiB  ({u / t:5.1f}x less)")

# %% [markdown]
# ## 8. On a GPU the choice is measured, not modelled
#
# The cost model above is fitted to the CPU backend (flop and byte charges, an 8 MiB cache). A GPU
# pass is different: each step is one kernel launch over every item in flight, so its cost barely
# grows with the batch, while tiles add transforms, re-read their halos and multiply more
# frequencies. The GPU backends (`cufft`, `fbfft`) therefore answer `tile="auto"` by **timing** the
# untiled plan and the planner's two cheapest tiles (less any the model charges over 4x the cheapest),
# and keep the fastest (Note [measured tile choice] in `gpu/tiles/measured_tile.hpp`).
#
# The cell below reads H100 measurements committed with the library
# (`bench/results/h100/tiling.json`, made with `fftconv bench tiling --candidates`; docs/results.md),
# so it runs without a GPU: five layers with 3×3 kernels and images of 27–64 per side, every pass,
# both GPU backends. Left: every tiled candidate against the untiled plan of the same backend.
# Right: the model's cheapest candidate against the measured `tile="auto"`.

# %%
import json
import os
import pathlib


def find_results(name):
    """bench/results/<name> in the working directory or one of its parents, else under $FFTCONV_ROOT."""
    places = [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]
    if os.environ.get("FFTCONV_ROOT"):
        places.append(pathlib.Path(os.environ["FFTCONV_ROOT"]))
    for d in places:
        if (d / "bench" / "results" / name).is_file():
            return d / "bench" / "results" / name
    raise FileNotFoundError(f"bench/results/{name}: run this notebook inside the fftconv repository "
                            "or set FFTCONV_ROOT to it")


gpu = json.loads(find_results("h100/tiling.json").read_text())
print(gpu["device"], "|", gpu["command"].split(" --json")[0])
lines = [r for r in gpu["rows"] if "median_ms" in r["none"] and "median_ms" in r["auto"]]
tiled = np.array([c["median_ms"] / r["none"]["median_ms"] for r in lines for c in r["candidates"]
                  if "median_ms" in c and not c["label"].startswith("none")])
# the model's pick: its cheapest candidate that the backend ran
pick = [min((c for c in r["candidates"] if "median_ms" in c), key=lambda c: c["predicted_cost_ratio"])
        for r in lines]
planner = np.array([c["median_ms"] / r["none"]["median_ms"] for c, r in zip(pick, lines)])
measured = np.array([r["auto"]["median_ms"] / r["none"]["median_ms"] for r in lines])

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
ax1.semilogy(np.sort(tiled), "o")
ax1.axhline(1, color="k", lw=0.8)
ax1.set_xlabel("tiled candidate (problem, pass, backend, tile), sorted"); ax1.set_ylabel("time / untiled time")
ax1.set_title("tiled plans on the H100")
xs = np.arange(len(lines))
ax2.plot(xs, planner, "s", label="model's cheapest candidate")
ax2.plot(xs, measured, "o", label='tile="auto" measured')
ax2.axhline(1, color="k", lw=0.8)
ax2.set_xlabel("problem × pass × backend"); ax2.set_ylabel("time / untiled time"); ax2.legend()
ax2.set_title("choosing a tile on the H100")
plt.tight_layout(); plt.show()

gm = lambda a: float(np.exp(np.mean(np.log(a))))
print(f"{len(tiled)} tiled plans: {gm(tiled):.2f}x the untiled time in geomean "
      f"(best {tiled.min():.2f}x, worst {tiled.max():.1f}x)")
print(f"{len(lines)} choices: the model's cheapest is a tile on "
      f"{sum(not c['label'].startswith('none') for c in pick)}, {gm(planner):.2f}x the untiled time in "
      f"geomean; the measured choice {gm(measured):.3f}x (untiled on "
      f"{sum(not r['auto'].get('tile') for r in lines)})")
