# %% [markdown]
# # 04 — The paper's evaluation on an H100
#
# The fbfft paper evaluates FFT convolution in three ways (its Section 4): **Figures 1–6**, the speed-up
# of cuFFT convolution over cuDNN across the 8,232 configurations of its Table 3, one heat map per
# kernel size; the **AlexNet / OverFeat-fast table**, every convolutional layer per pass and in total;
# and **Table 4**, five representative layers. fftconv measures all three on today's hardware:
#
# | paper | command | result file |
# | --- | --- | --- |
# | Figures 1–6 | `fftconv bench grid` (then `bench/plot_grid.py`) | `bench/results/h100/grid.jsonl.gz` |
# | AlexNet / OverFeat table (and VGG-16) | `fftconv bench networks`, `bench/torch_networks.py` | `bench/results/h100/networks.json`, `bench/results/h100/torch_networks.json` |
# | Table 4 | `fftconv bench layers` | `bench/results/h100/layers.json` |
#
# Every time in those files is a median of CUDA-event timings after warm-up, against cuDNN's fastest
# algorithm in strict fp32 (`CUDNN_FMA_MATH`, every algorithm tried), and every result of ours is
# verified against a float64 reference at the batch it was timed at.
#
# This notebook draws only what is committed under `bench/results`: where a file has not been measured
# yet, it says so and shows nothing in its place. The paper's own K40m numbers are quoted from the
# paper and labelled as such.

# %%
%matplotlib inline
import importlib.util
import json
import os
import pathlib

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display


def repo_root():
    """The fftconv checkout: the working directory or one of its parents, else $FFTCONV_ROOT."""
    places = [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]
    if os.environ.get("FFTCONV_ROOT"):
        places.append(pathlib.Path(os.environ["FFTCONV_ROOT"]))
    for d in places:
        if (d / "bench" / "plot_grid.py").is_file():
            return d
    raise FileNotFoundError("bench/plot_grid.py: run this notebook inside the fftconv repository or set FFTCONV_ROOT")


ROOT = repo_root()
RESULTS = ROOT / "bench" / "results"


def load_script(relative):
    spec = importlib.util.spec_from_file_location(pathlib.Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plot_grid = load_script("bench/plot_grid.py")  # the figures and the summary table
report = load_script("bench/report.py")        # the tables of docs/results.md


def first_existing(*names):
    """The first of bench/results/<name> that exists, or None."""
    return next((RESULTS / n for n in names if (RESULTS / n).is_file()), None)


def not_measured(what, path, command):
    display(Markdown(f"**Not measured yet:** {what} — `{path}` is not in this repository. It is made on a GPU "
                     f"host with\n\n```\n{command}\n```"))


# %% [markdown]
# ## 1. Figures 1–6: where FFT convolution beats cuDNN
#
# Each configuration of Table 3 (S ∈ {1, 16, 64, 128}; f, f′ ∈ {1, 4, 16, 64, 96, 128, 256};
# k ∈ {3, …, 13}; output y ∈ {1, …, 64}) is timed for every pass. Its speed-up is cuDNN's time over
# ours, averaged over the three passes (geometric mean), as the paper averages its figures. The y-axis
# of each panel is the problem size S·f·f′ in bins of ×4, the x-axis the output size; a cell holds
# the geometric mean of its configurations. Blue: FFT faster; red: cuDNN faster; black: nothing in the
# cell ran (unsupported or out of memory: the paper's black cells); hatched: part of it did not.
# The headline panels show the fastest of our backends per configuration and pass (or `auto`, when
# the file has it); `bench/plot_grid.py` also draws one set per backend into `docs/figures/`. The grid
# is measured over several runs (`--shard`, `--resume`); until every configuration is in
# `h100/grid.jsonl.gz`, the title says how many are, and cells with none measured stay blank.

# %%
def show_grid(path, baseline="cudnn"):
    headers, records = plot_grid.load([path])
    by_impl, tables = plot_grid.summary_tables(records, baseline)
    source = plot_grid.describe_source(headers, records, [path])
    head = next(iter(by_impl))
    fig = plt.figure(figsize=(15, 9), layout="constrained")
    plot_grid.draw_panels(fig, by_impl[head], f"{plot_grid.impl_label(head, by_impl)} against {baseline}: {source}",
                          baseline=baseline)
    plt.show()
    display(Markdown(plot_grid.summary_markdown(tables, baseline, source)))


gpu_grid = first_existing("h100/grid.jsonl.gz", "h100/grid-sample.jsonl.gz")  # the grid, else a seeded sample
if gpu_grid:
    show_grid(gpu_grid)
else:
    not_measured("the grid on the H100", "bench/results/h100/grid.jsonl.gz",
                 "fftconv bench grid --out grid.jsonl.gz --seconds 540 --resume   # repeated until done\n"
                 "python3 bench/plot_grid.py grid.jsonl.gz --out-dir docs/figures")

# %% [markdown]
# ### The same machinery on a CPU run
#
# `bench/results/cpu/grid-sample.jsonl.gz` is a real measurement, but **not** the paper's comparison:
# a seeded sample of the grid run on a development machine's CPU with the host backends only —
# `fftw` (FFT convolution) against `im2col` (time-domain GEMM) as the baseline, no GPU and no cuDNN,
# with S shrunk until the largest tensor fits 262,144 elements (its header records the command).
# It is drawn with the code above so that the figures, the marks and the table are exercised on
# measured data; it says how FFT fares against a GEMM on one CPU, nothing about the H100.

# %%
cpu_grid = first_existing("cpu/grid-sample.jsonl.gz")
if cpu_grid:
    show_grid(cpu_grid, baseline="im2col")
else:
    not_measured("the CPU run of the grid", "bench/results/cpu/grid-sample.jsonl.gz",
                 "fftconv bench grid --backends fftw,im2col --sample 240 --seed 42 --max-elements 262144 "
                 "--out grid-sample.jsonl.gz")

# %% [markdown]
# ## 2. AlexNet, OverFeat-fast and VGG-16 at batch 128
#
# `fftconv bench networks` times every convolutional layer (VGG-16's repeated shapes once) for each
# pass: cuDNN's best algorithm in FMA math (`cudnn`) and with tensor-op math allowed (`cudnn-tc`,
# TF32), and each of our backends. As in the paper, a strided first layer that a backend cannot run
# is counted at cuDNN's FMA time ("strided by cuDNN"); a layer that nothing ran is named as missing.
# `bench/torch_networks.py` times the same layers with PyTorch (`cudnn.benchmark = True`, TF32 off
# and on). The paper's K40m rows are quoted from its table (`bench/report.py` keeps them).

# %%
nets_file = first_existing("h100/networks.json")
torch_file = first_existing("h100/torch_networks.json")
ours = json.loads(nets_file.read_text()) if nets_file else None
torch_doc = json.loads(torch_file.read_text()) if torch_file else None
if ours:
    print(ours["device"], "|", ours["command"])
else:
    not_measured("the networks table on the H100", "bench/results/h100/networks.json",
                 "fftconv bench networks --json networks.json")
if not torch_doc:
    not_measured("PyTorch's timings of the same layers", "bench/results/h100/torch_networks.json",
                 "python3 bench/torch_networks.py --fftconv build/cli/fftconv --json torch_networks.json")
display(Markdown("\n".join(report.networks_lines(ours, torch_doc, paper=True))))

# %% [markdown]
# ## 3. Table 4: five representative layers, K40m then, H100 now
#
# The paper's Table 4 gives, for L1–L5 at S = 128, cuDNN's and cuFFT convolution's times on a K40m.
# `fftconv bench layers` measures the same layers on the H100 against cuDNN 9's fastest FMA-math
# algorithm. The times are not comparable across the two GPUs (an H100 has about 16× the K40m's
# fp32 throughput); the **speed-ups over cuDNN on the same GPU** are.

# %%
PAPER_TABLE4 = {  # (layer, pass): (cuDNN ms, cuFFT ms) on the K40m, from the paper's Table 4
    ("L1", "fprop"): (125.11, 80.98), ("L1", "bprop"): (153.39, 66.49), ("L1", "accgrad"): (155.07, 69.63),
    ("L2", "fprop"): (354.83, 46.44), ("L2", "bprop"): (579.37, 46.25), ("L2", "accgrad"): (416.34, 47.03),
    ("L3", "fprop"): (130.89, 17.77), ("L3", "bprop"): (245.57, 16.97), ("L3", "accgrad"): (154.96, 17.00),
    ("L4", "fprop"): (15.13, 4.88), ("L4", "bprop"): (20.80, 4.71), ("L4", "accgrad"): (18.17, 4.70),
    ("L5", "fprop"): (39.82, 21.35), ("L5", "bprop"): (28.33, 20.22), ("L5", "accgrad"): (47.84, 21.26),
}

layers_file = first_existing("h100/layers.json")
rows = []
if layers_file:
    doc = json.loads(layers_file.read_text())
    print(doc["device"]["name"] if isinstance(doc["device"], dict) else doc["device"], "|", doc["command"])
    for r in doc["rows"]:
        key = (r["layer"], r["pass"])
        best = r["cudnn"].get("best", {}).get("median_ms")
        if key not in PAPER_TABLE4 or not best:
            continue
        ours_ms = {b["label"]: b["median_ms"] for b in r["backends"] if b.get("median_ms")}
        rows.append((key, PAPER_TABLE4[key], best, ours_ms))
    labels = sorted({lab for *_, o in rows for lab in o if not lab.endswith("naive")})
    lines = ["| layer | pass | K40m cuDNN | K40m cuFFT | K40m speed-up | H100 cuDNN | "
             + " | ".join(f"H100 {lab} | speed-up" for lab in labels) + " |",
             "| --- | --- | --- | --- | --- | --- |" + " --- | --- |" * len(labels)]
    for (layer, p), (kc, kf), best, o in rows:
        cells = " | ".join(f"{o[lab]:.3f} | {best / o[lab]:.2f}x" if lab in o else "- | -" for lab in labels)
        lines.append(f"| {layer} | {p} | {kc:.2f} | {kf:.2f} | {kc / kf:.2f}x | {best:.3f} | {cells} |")
    display(Markdown("Times in ms, speed-up = cuDNN's time / ours on the same GPU.\n\n" + "\n".join(lines)))
else:
    not_measured("Table 4 on the H100", "bench/results/h100/layers.json", "fftconv bench layers --json layers.json")

# %%
if rows:
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(12, 3.8))
    width = 0.8 / (1 + len(labels))
    ax.bar(x, [kc / kf for _, (kc, kf), _, _ in rows], width, label="cuFFT over cuDNN, K40m (the paper)", color="0.6")
    for i, lab in enumerate(labels, 1):
        ax.bar(x + i * width, [best / o.get(lab, np.nan) for *_, best, o in rows], width, label=f"{lab} over cuDNN 9, H100")
    ax.axhline(1, color="black", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(x + width * len(labels) / 2, [f"{layer} {p}" for (layer, p), *_ in rows], rotation=60, fontsize=8)
    ax.set_ylabel("speed-up over cuDNN")
    ax.legend(fontsize=8)
    plt.show()

# %% [markdown]
# On the K40m, cuFFT convolution beat cuDNN (v1, 2014) on every row of Table 4, by up to 14.5×. On
# the H100 the baseline is cuDNN 9 with implicit-GEMM, Winograd and its own FFT algorithms, each
# tried; the coloured bars show how much of the paper's margin remains layer by layer. The grid above,
# once measured, tells the same over the whole of Table 3: which kernel sizes and problem sizes still
# favour FFT convolution, and by how much.
