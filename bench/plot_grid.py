#!/usr/bin/env python3
"""Draws the paper's Figures 1-6 from a `fftconv bench grid` file: for each implementation, six heat
maps, one per kernel size (3, 5, 7, 9, 11, 13); x = output size y, y = problem size S*f*f' in
logarithmic bins; each cell the speed-up of the implementation over the baseline (cuDNN) averaged
over the three passes (geometric mean per configuration, then over the configurations of the cell),
on a logarithmic colour scale centred on 1x. Cells where some configuration did not run (unsupported,
out of memory, error, skipped, or absent) are hatched, cells where none ran are black. `best` is the
fastest of the named backends per (configuration, pass). Also writes the summary table (Markdown):
per kernel size the maximum and median speed-up and the fraction of configurations where FFT wins,
beside the paper's K40 figures.

usage: plot_grid.py GRID.jsonl[.gz] [GRID ...] [--out-dir docs/figures] [--prefix grid]
                    [--baseline cudnn] [--impls cufft,fbfft] [--bin-base 4]
"""
import argparse
import json
import math
import pathlib
import statistics
import sys
import zlib
from collections import defaultdict

KERNELS = (3, 5, 7, 9, 11, 13)
OUTPUTS = (1, 2, 4, 8, 16, 32, 64)
PASSES = ("fprop", "bprop", "accgrad")
# The paper's top speed-ups of cuFFT convolution over cuDNN on the K40m (Section 4.1); the other kernel
# sizes are only in its figures.
PAPER_K40_TOP = {3: 1.84, 5: 5.33, 13: 23.54}
PAPER_GRID_SIZE = 8232  # configurations of `--set paper-grid` (validation/problem_sets.cpp)


# ----- reading ---------------------------------------------------------------------------------------


def read_lines(path):
    """The complete lines of a .jsonl or .jsonl.gz file (gzip members in series; a truncated last
    member, from a killed run, gives what decompresses up to its last newline)."""
    data = pathlib.Path(path).read_bytes()
    if str(path).endswith(".gz"):
        parts = []
        while data:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                parts.append(d.decompress(data))
            except zlib.error:
                break
            if not d.eof:
                break
            data = d.unused_data
        data = b"".join(parts)
    text = data.decode()
    return text.split("\n")[:-1]  # the piece after the last newline is incomplete or empty


def load(paths):
    """(headers, records): the run headers, and one record per (spec, pass, impl), later lines winning."""
    headers, records = [], {}
    for path in paths:
        for line in read_lines(path):
            if not line.strip():
                continue
            j = json.loads(line)
            if "header" in j:
                headers.append(j["header"])
            elif "spec" in j and "pass" in j and "impl" in j:
                records[(j["spec"], j["pass"], j["impl"])] = j
    return headers, records


def parse_spec(spec):
    """'S=1,f=2,...,kh=3,...' -> dict with S, f, fo, k (= kh) and y (= h + 2 ph - kh + 1)."""
    kv = dict(item.split("=", 1) for item in spec.split(","))
    h, kh, ph = int(kv["h"]), int(kv["kh"]), int(kv.get("ph", 0))
    return {"S": int(kv["S"]), "f": int(kv["f"]), "fo": int(kv["fo"]), "k": kh, "y": h + 2 * ph - kh + 1}


# ----- speed-ups -------------------------------------------------------------------------------------

def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def implementations(records, baseline):
    return sorted({impl for (_, _, impl) in records} - {baseline, "cudnn", "cudnn-tc"})


def speedups(records, impl, baseline="cudnn", backends=None, passes=PASSES):
    """{spec: speed-up or None}: baseline time / implementation time per pass, geometric mean over the
    passes; None when a pass of either did not run. impl "best" takes, per pass, the fastest of
    `backends` that ran."""
    specs = {spec for (spec, _, _) in records}
    out = {}
    for spec in specs:
        ratios = []
        for p in passes:
            base = records.get((spec, p, baseline))
            if impl == "best":
                times = [records[(spec, p, b)]["median_ms"] for b in backends
                         if records.get((spec, p, b), {}).get("status") == "ok"]
                mine = min(times) if times else None
            else:
                r = records.get((spec, p, impl), {})
                mine = r["median_ms"] if r.get("status") == "ok" else None
            if not base or base.get("status") != "ok" or mine is None or mine <= 0:
                ratios = None
                break
            ratios.append(base["median_ms"] / mine)
        out[spec] = geomean(ratios) if ratios else None
    return out


def size_bin(problem_size, base):
    return int(math.floor(math.log(problem_size) / math.log(base) + 1e-9))


def heatmap(speedup_by_spec, k, bin_base=4):
    """For kernel size k: (rows, cells) with rows the problem-size bins present (ascending) and
    cells[(bin, y)] = {"value": geometric mean of the speed-ups that ran or None, "ran": n, "total": n}."""
    cells = defaultdict(lambda: {"speedups": [], "total": 0})
    for spec, s in speedup_by_spec.items():
        c = parse_spec(spec)
        if c["k"] != k:
            continue
        cell = cells[(size_bin(c["S"] * c["f"] * c["fo"], bin_base), c["y"])]
        cell["total"] += 1
        if s is not None:
            cell["speedups"].append(s)
    out = {key: {"value": geomean(v["speedups"]) if v["speedups"] else None, "ran": len(v["speedups"]),
                 "total": v["total"]} for key, v in cells.items()}
    rows = sorted({b for (b, _) in out})
    return rows, out


def summary_rows(speedup_by_spec):
    """Per kernel size: configurations, how many ran, max (and its spec), median, fraction above 1."""
    rows = []
    for k in KERNELS:
        runs = [(s, spec) for spec, s in speedup_by_spec.items() if parse_spec(spec)["k"] == k]
        ran = [(s, spec) for s, spec in runs if s is not None]
        row = {"k": k, "configurations": len(runs), "ran": len(ran), "paper_k40_top": PAPER_K40_TOP.get(k)}
        if ran:
            top = max(ran)
            row.update(max=top[0], max_spec=top[1], median=statistics.median(s for s, _ in ran),
                       wins=sum(1 for s, _ in ran if s > 1) / len(ran))
        rows.append(row)
    return rows


def x(v):
    return f"{v:.2f}x" if v is not None else "-"


def pct(r):
    return f"{100 * r['wins']:.0f}%" if "wins" in r else "-"


def summary_markdown(tables, baseline, source):
    """tables: [(impl, summary_rows(...))]; the first gets the full table with the paper's figures,
    the others a column each."""
    lines = [f"Speed-up over {baseline} (its time / the implementation's, geometric mean of the three passes per "
             f"configuration) from {source}.", ""]
    impl, rows = tables[0]
    lines += [f"**{impl}**", "",
              "| kernel | configurations run | max speed-up | at | median | FFT faster in | paper K40m top |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['k']}x{r['k']} | {r['ran']} of {r['configurations']} | {x(r.get('max'))} | "
                     f"{r.get('max_spec', '-')} | {x(r.get('median'))} | {pct(r)} | {x(r['paper_k40_top'])} |")
    if len(tables) > 1:
        lines += ["", "Per implementation: median speed-up, and the share of configurations where it is faster:", "",
                  "| kernel | " + " | ".join(i for i, _ in tables[1:]) + " |",
                  "| --- |" + " --- |" * (len(tables) - 1)]
        for n, k in enumerate(KERNELS):
            cells = [f"{x(rs[n].get('median'))}, {pct(rs[n])}" for _, rs in tables[1:]]
            lines.append(f"| {k}x{k} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ----- drawing ---------------------------------------------------------------------------------------

def size_label(b, base):
    v = base ** b
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if v >= scale and v % scale == 0:
            return f"{v // scale}{unit}"
    return str(v)


def draw_panels(fig, speedup_by_spec, title, bin_base=4, limit=None, baseline="cudnn"):
    """The six heat maps of one implementation on `fig` (2 x 3 panels sharing the problem-size axis and
    one colour scale). Returns {k: {"rows", "cells", "black", "hatched"}} for what was drawn."""
    import matplotlib.colors as mcolors
    import numpy as np
    from matplotlib.patches import Rectangle

    maps = {k: heatmap(speedup_by_spec, k, bin_base) for k in KERNELS}
    rows = sorted({b for _, (rs, _) in maps.items() for b in rs})
    values = [c["value"] for _, (_, cells) in maps.items() for c in cells.values() if c["value"]]
    if limit is None:
        limit = max([2.0] + [max(v, 1 / v) for v in values])
    norm = mcolors.LogNorm(vmin=1 / limit, vmax=limit)  # 1x in the middle of the scale
    cmap = mcolors.LinearSegmentedColormap.from_list("speedup", ["#b2182b", "#f7f7f7", "#2166ac"]).with_extremes(bad="white")
    axes = fig.subplots(2, 3, sharey=True)
    drawn, mesh = {}, None
    for ax, k in zip(axes.flat, KERNELS):
        _, cells = maps[k]
        z = np.full((len(rows), len(OUTPUTS)), np.nan)
        black = hatched = 0
        for (b, y), c in cells.items():
            i, j = rows.index(b), OUTPUTS.index(y)
            if c["value"] is None:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="black", edgecolor="none", zorder=2))
                black += 1
                continue
            z[i, j] = c["value"]
            if c["ran"] < c["total"]:
                ax.add_patch(Rectangle((j, i), 1, 1, fill=False, hatch="///", edgecolor="0.35", lw=0, zorder=2))
                hatched += 1
            ax.text(j + 0.5, i + 0.5, f"{c['value']:.2g}", ha="center", va="center", fontsize=6, zorder=3)
        mesh = ax.pcolormesh(np.arange(len(OUTPUTS) + 1), np.arange(len(rows) + 1), np.ma.masked_invalid(z),
                             cmap=cmap, norm=norm, edgecolors="0.85", linewidth=0.3)
        ax.set_title(f"{k}x{k} kernel", fontsize=10)
        ax.set_xticks(np.arange(len(OUTPUTS)) + 0.5, [str(y) for y in OUTPUTS])
        ax.set_yticks(np.arange(len(rows)) + 0.5, [size_label(b, bin_base) for b in rows])
        ax.set_xlabel("output size y")
        if k in (3, 9):
            ax.set_ylabel(f"problem size S·f·f′ (bins of x{bin_base})")
        drawn[k] = {"rows": rows, "cells": cells, "black": black, "hatched": hatched}
    bar = fig.colorbar(mesh, ax=axes, label=f"speed-up over {baseline} (geometric mean of the passes)", shrink=0.7)
    ticks = [2.0 ** e for e in range(-40, 41) if 1 / limit <= 2.0 ** e <= limit]
    bar.set_ticks(ticks, labels=[f"{v:g}x" if v >= 1 else f"1/{1 / v:g}x" for v in ticks])
    bar.minorticks_off()
    fig.suptitle(title, fontsize=11)
    return drawn


def describe_source(headers, records, paths):
    devices = sorted({h.get("device", "?") for h in headers}) or ["device not recorded"]
    specs = {spec for (spec, _, _) in records}
    sample = sorted({h["selection"]["sample"] for h in headers if h.get("selection", {}).get("sample")})
    what = f"{len(specs)} configurations" + (f" (a seeded sample of {sample[0]})" if len(sample) == 1 else "")
    if not sample and {h.get("set") for h in headers} == {"paper-grid"} and len(specs) < PAPER_GRID_SIZE:
        what = f"{len(specs)} of the {PAPER_GRID_SIZE:,} configurations of paper-grid (the others not measured yet)"
    return f"{what} in {', '.join(pathlib.Path(p).name for p in paths)}, measured on {'; '.join(devices)}"


def panel_sets(records, baseline, impls=None):
    """The headline implementation (auto if timed, else the best of the backends, else the one backend)
    and one set per backend."""
    backends = impls or implementations(records, baseline)
    if not backends:
        raise SystemExit(f"no implementation besides the baseline {baseline} in the records")
    head = "auto" if "auto" in backends else ("best" if len(backends) > 1 else backends[0])
    return head, backends


def impl_label(impl, by_impl):
    return f"fastest of {', '.join(b for b in by_impl if b not in ('best', 'auto'))}" if impl == "best" else impl


def summary_tables(records, baseline, impls=None):
    """(speed-ups by implementation, [(implementation, summary_rows)]): the headline first, then each
    backend."""
    head, backends = panel_sets(records, baseline, impls)
    ours = [b for b in backends if b != "auto"]
    by_impl = {impl: speedups(records, impl, baseline, backends=ours) for impl in [head] + [b for b in backends if b != head]}
    return by_impl, [(impl, summary_rows(s)) for impl, s in by_impl.items()]


def grid_summary(paths, baseline="cudnn"):
    """The summary Markdown of grid files (for docs/results.md)."""
    headers, records = load(paths)
    _, tables = summary_tables(records, baseline)
    return summary_markdown(tables, baseline, describe_source(headers, records, paths))


def plot(paths, out_dir="docs/figures", prefix="grid", baseline=None, impls=None, bin_base=4):
    """Writes the panel sets and the summary; returns (written paths, summary Markdown)."""
    headers, records = load(paths)
    if not records:
        raise SystemExit(f"no records in {', '.join(map(str, paths))}")
    present = {impl for (_, _, impl) in records}
    baseline = baseline or ("cudnn" if "cudnn" in present else None)
    if baseline not in present:
        raise SystemExit(f"baseline {baseline} not in the records (implementations: {', '.join(sorted(present))}); "
                         "name one with --baseline")
    by_impl, tables = summary_tables(records, baseline, impls)
    source = describe_source(headers, records, paths)
    import matplotlib  # only now: bad input is reported where matplotlib is not installed

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for impl, s in by_impl.items():
        fig = plt.figure(figsize=(15, 9), layout="constrained")
        draw_panels(fig, s, f"{impl_label(impl, by_impl)} against {baseline}: {source}", bin_base, baseline=baseline)
        path = out / f"{prefix}_{impl}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    md = summary_markdown(tables, baseline, source)
    path = out / f"{prefix}_summary.md"
    path.write_text(md)
    written.append(path)
    return written, md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("grid", nargs="+", help="grid files (.jsonl or .jsonl.gz); later records replace earlier ones")
    ap.add_argument("--out-dir", default="docs/figures")
    ap.add_argument("--prefix", default="grid", help="file names: PREFIX_<impl>.png, PREFIX_summary.md")
    ap.add_argument("--baseline", help="implementation the speed-ups are over (default cudnn)")
    ap.add_argument("--impls", help="comma list of implementations to draw (default: every one but the baseline)")
    ap.add_argument("--bin-base", type=int, default=4, help="problem-size bins: powers of this (default 4)")
    a = ap.parse_args(argv)
    written, md = plot(a.grid, a.out_dir, a.prefix, a.baseline, a.impls.split(",") if a.impls else None, a.bin_base)
    sys.stdout.write(md)
    for p in written:
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
