"""bench/plot_grid.py (the paper's Figures 1-6 and the summary table) on a small synthetic grid file
written here: speed-ups averaged over the passes, the best of the backends, heat-map cells and their
marks (black where nothing ran, hatched where part did not), the table beside the paper's K40
figures, gzip files cut short, and the one command that writes every figure."""
import gzip
import json
import math
import subprocess
import sys

import pytest

from conftest import ROOT, load_script

SCRIPT = ROOT / "bench" / "plot_grid.py"


def module():
    return load_script("bench/plot_grid.py")


def spec(S, f, fo, k, y):
    n = y + k - 1
    return f"S={S},f={f},fo={fo},h={n},w={n},kh={k},kw={k},ph=0,pw=0,pad=zero"


A = spec(16, 4, 4, 3, 8)     # S*f*f' = 256
B = spec(1, 16, 16, 3, 8)    # 256 as well: the same heat-map cell as A
C = spec(1, 1, 1, 5, 1)
D = spec(128, 256, 256, 13, 64)
PASSES = ("fprop", "bprop", "accgrad")
# (spec, impl) -> ms per pass, or a status for every pass, or {pass: ms or status}.
TIMES = {
    (A, "cudnn"): 2.0, (A, "cufft"): 1.0, (A, "fbfft"): 0.5,
    (B, "cudnn"): 1.0, (B, "cufft"): 2.0, (B, "fbfft"): {"fprop": 0.25, "bprop": "unsupported", "accgrad": 0.25},
    (C, "cudnn"): 3.0, (C, "cufft"): "out of memory", (C, "fbfft"): 1.0,
    (D, "cudnn"): 235.4, (D, "cufft"): 10.0, (D, "fbfft"): 20.0,
}


def records():
    out = []
    for (s, impl), t in TIMES.items():
        for p in PASSES:
            v = t[p] if isinstance(t, dict) else t
            r = {"label": "grid#0", "spec": s, "pass": p, "impl": impl}
            r.update({"status": "ok", "median_ms": v, "min_ms": v} if isinstance(v, float) else {"status": v, "reason": "x"})
            out.append(json.dumps(r))
    return out


def write_grid(path, lines):
    header = json.dumps({"header": {"benchmark": "grid", "device": "synthetic device", "impls": ["cudnn", "cufft", "fbfft"]}})
    data = "\n".join([header] + lines) + "\n"
    if str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(data.encode()))
    else:
        path.write_text(data)
    return path


def test_speedups_average_the_passes_and_best_takes_the_fastest_backend(tmp_path):
    m = module()
    _, recs = m.load([write_grid(tmp_path / "g.jsonl", records())])
    cufft = m.speedups(recs, "cufft")
    assert cufft[A] == pytest.approx(2.0)
    assert cufft[B] == pytest.approx(0.5)
    assert cufft[C] is None                     # out of memory: did not run
    assert cufft[D] == pytest.approx(23.54)
    fbfft = m.speedups(recs, "fbfft")
    assert fbfft[B] is None                     # one pass unsupported
    assert fbfft[C] == pytest.approx(3.0)
    best = m.speedups(recs, "best", backends=["cufft", "fbfft"])
    assert best[A] == pytest.approx(4.0)
    assert best[B] == pytest.approx((4 * 0.5 * 4) ** (1 / 3))  # fbfft, cufft (fbfft refused bprop), fbfft
    assert best[C] == pytest.approx(3.0)


def test_heatmap_cells_count_what_ran(tmp_path):
    m = module()
    _, recs = m.load([write_grid(tmp_path / "g.jsonl", records())])
    rows, cells = m.heatmap(m.speedups(recs, "cufft"), 3, bin_base=4)
    assert rows == [4]                          # 256 = 4^4
    assert cells[(4, 8)] == {"value": pytest.approx(1.0), "ran": 2, "total": 2}   # sqrt(2 * 0.5)
    _, cells = m.heatmap(m.speedups(recs, "fbfft"), 3, bin_base=4)
    assert cells[(4, 8)] == {"value": pytest.approx(4.0), "ran": 1, "total": 2}
    _, cells = m.heatmap(m.speedups(recs, "cufft"), 5, bin_base=4)
    assert cells[(0, 1)]["value"] is None
    _, cells = m.heatmap(m.speedups(recs, "cufft"), 13, bin_base=2)
    assert list(cells) == [(23, 64)]            # 128 * 256 * 256 = 2^23


def test_summary_table_per_kernel_beside_the_paper(tmp_path):
    m = module()
    _, recs = m.load([write_grid(tmp_path / "g.jsonl", records())])
    rows = {r["k"]: r for r in m.summary_rows(m.speedups(recs, "cufft"))}
    assert rows[3]["ran"] == 2 and rows[3]["configurations"] == 2
    assert rows[3]["max"] == pytest.approx(2.0) and rows[3]["max_spec"] == A
    assert rows[3]["median"] == pytest.approx(1.25)
    assert rows[3]["wins"] == pytest.approx(0.5)
    assert rows[5]["ran"] == 0 and "max" not in rows[5]
    assert rows[7]["configurations"] == 0
    assert rows[13]["max"] == pytest.approx(23.54)
    md = m.summary_markdown([("cufft", list(rows.values())), ("fbfft", m.summary_rows(m.speedups(recs, "fbfft")))],
                            "cudnn", "a synthetic file")
    assert "| 3x3 | 2 of 2 | 2.00x |" in md
    assert "| 1.25x | 50% | 1.84x |" in md     # median, share where FFT wins, the paper's K40m top
    assert "| 13x13 | 1 of 1 | 23.54x |" in md and md.rstrip().endswith("|")
    assert "| 5x5 | 3.00x, 100% |" in md          # the per-backend table: fbfft at 5x5


def test_gzip_files_cut_short_keep_their_complete_records(tmp_path):
    m = module()
    lines = records()
    path = tmp_path / "g.jsonl.gz"
    first = gzip.compress(("\n".join(lines[:20]) + "\n").encode())
    second = gzip.compress(("\n".join(lines[20:]) + "\n").encode())
    path.write_bytes(first + second[: len(second) // 2])   # a second member cut in half
    _, recs = m.load([path])
    assert 20 <= len(recs) < len(lines)
    assert all(r["status"] in ("ok", "unsupported", "out of memory") for r in recs.values())


def test_panels_mark_cells_that_did_not_run(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = module()
    _, recs = m.load([write_grid(tmp_path / "g.jsonl", records())])
    fig = plt.figure()
    drawn = m.draw_panels(fig, m.speedups(recs, "cufft"), "test")
    assert sorted(drawn) == [3, 5, 7, 9, 11, 13]
    assert drawn[5]["black"] == 1 and drawn[3]["black"] == 0
    assert drawn[3]["hatched"] == 0
    fig = plt.figure()
    drawn = m.draw_panels(fig, m.speedups(recs, "fbfft"), "test")
    assert drawn[3]["hatched"] == 1 and drawn[5]["black"] == 0
    plt.close("all")


def test_one_command_writes_every_panel_set_and_the_table(tmp_path):
    pytest.importorskip("matplotlib")
    grid = write_grid(tmp_path / "g.jsonl.gz", records())
    out = tmp_path / "figures"
    r = subprocess.run([sys.executable, str(SCRIPT), str(grid), "--out-dir", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["grid_best.png", "grid_cufft.png", "grid_fbfft.png",
                                                     "grid_summary.md"]
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "grid_summary.md").read_text()
    assert md.startswith("Speed-up over cudnn") and "**best**" in md and "synthetic device" in md
    assert "4 configurations" in md


def test_files_without_records_or_baseline_are_refused(tmp_path):
    empty = write_grid(tmp_path / "e.jsonl", [])
    r = subprocess.run([sys.executable, str(SCRIPT), str(empty), "--out-dir", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode != 0 and "no records" in r.stderr
    grid = write_grid(tmp_path / "g.jsonl", records())
    r = subprocess.run([sys.executable, str(SCRIPT), str(grid), "--baseline", "nope", "--out-dir", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "baseline nope" in r.stderr
    assert math.isclose(module().geomean([2, 8]), 4)
