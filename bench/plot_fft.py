#!/usr/bin/env python3
"""Draws the paper's Figures 7-8 from `fftconv bench fft --json` files: speedup of fbfft over cuFFT
against batch size, one curve per transform size, one panel per (dims, direction, timer) found.

usage: plot_fft.py RESULT.json [RESULT.json ...] -o fft_speedup.png
"""
import argparse
import json
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    panels = defaultdict(lambda: defaultdict(list))  # (dims, direction, timer) -> size label -> [(batch, speedup)]
    devices = set()
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        devices.add(doc["device"]["name"])
        timer = doc.get("timer", "calls")  # files written before --timer existed were timed as calls
        for row in doc["rows"]:
            dims = 1 if row["n_h"] == 1 else 2
            label = f"{row['n_w']}" if dims == 1 else f"{row['n_h']}x{row['n_w']}"
            panels[(dims, row["direction"], timer)][label].append((row["batch"], row["speedup"]))
    return panels, devices


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("-o", "--output", default="fft_speedup.png")
    args = ap.parse_args()
    panels, devices = load(args.json)
    if not panels:
        raise SystemExit("no rows in the given files")
    keys = sorted(panels)
    fig, axes = plt.subplots(1, len(keys), figsize=(5.5 * len(keys), 4.2), squeeze=False)
    for ax, key in zip(axes[0], keys):
        dims, direction, timer = key
        for label, pts in sorted(panels[key].items(), key=lambda kv: int(kv[0].split("x")[-1])):
            pts.sort()
            ax.plot([b for b, _ in pts], [s for _, s in pts], marker="o", label=label)
        ax.axhline(1.0, color="gray", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch")
        ax.set_ylabel("speedup over cuFFT (x)")
        ax.set_title(f"fbfft {dims}-D {'FFT' if direction == 'forward' else 'IFFT'} ({timer} timing)")
        ax.legend(title="size", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(", ".join(sorted(devices)))
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
