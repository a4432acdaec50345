"""bench/plot_fft.py (the paper's Figures 7-8) on the committed batch sweep: one panel per (dims,
direction, timer), one curve per size with a point per batch, a PNG written, and a clear error for
files without rows."""
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "plot_fft.py"
SWEEP = sorted((ROOT / "bench" / "results" / "h100").glob("fft?d_batches_*.json"))
BATCHES = [16, 64, 256, 1024, 16384, 16389, 65536]


def plot_module():
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("plot_fft", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweep_panels_and_curves():
    panels, devices = plot_module().load([str(p) for p in SWEEP])
    assert len(SWEEP) == 4
    assert sorted(panels) == [(d, direction, "graph") for d in (1, 2) for direction in ("forward", "inverse")]
    assert sorted(panels[(2, "forward", "graph")]) == sorted(["8x8", "16x16", "32x32", "64x64", "128x128"])
    assert sorted(panels[(1, "inverse", "graph")]) == sorted(["8", "16", "32", "64", "128", "256"])
    for key, curves in panels.items():
        for label, points in curves.items():
            assert sorted(b for b, _ in points) == BATCHES, (key, label)
            assert all(s > 0 for _, s in points), (key, label)
    assert devices == {"NVIDIA H100 80GB HBM3"}


def test_cli_writes_png(tmp_path):
    plot_module()
    out = tmp_path / "fig.png"
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, SWEEP), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_rejects_files_without_rows(tmp_path):
    plot_module()
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"device": {"name": "none"}, "timer": "graph", "rows": []}))
    r = subprocess.run([sys.executable, str(SCRIPT), str(empty), "-o", str(tmp_path / "x.png")], capture_output=True, text=True)
    assert r.returncode != 0
    assert "no rows" in r.stderr
