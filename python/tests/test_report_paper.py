"""bench/report.py's sections for the paper's evaluation: the networks table (ours, PyTorch's, the
paper's K40m rows) and the grid summary, generated into docs/results.md from result files written
here, and nothing of them when the files are absent."""
import json

from conftest import load_script
from test_plot_grid import records, write_grid


def networks_doc():
    totals = {"cudnn": {"fprop": 10.0, "bprop": 20.0, "accgrad": 30.0, "total": 60.0, "complete": True},
              "cufft": {"fprop": 5.0, "bprop": 6.0, "accgrad": 7.0, "total": 18.0, "complete": True,
                        "strided_by_cudnn": ["conv1"]},
              "fbfft": {"fprop": 4.0, "total": 4.0, "complete": False, "missing": ["conv2"]}}
    return {"benchmark": "networks", "device": "NVIDIA H100 80GB HBM3 (sm_90), cuDNN 9.14.0",
            "command": "fftconv bench networks --json networks.json", "date": "2026-11-25T12:00:00Z",
            "networks": [{"name": "alexnet", "layers": [], "totals": totals}]}


def torch_doc():
    t = {"fprop": 1.0, "bprop": 2.0, "accgrad": 3.0, "total": 6.0, "complete": True}
    return {"benchmark": "torch_networks", "device": "NVIDIA H100, PyTorch 2.9", "command": "torch_networks.py",
            "date": "2026-11-25T13:00:00Z", "networks": [{"name": "alexnet", "totals": {"tf32_off": t, "tf32_on": t}}]}


def make_root(tmp_path, with_files):
    (tmp_path / "README.md").write_text("# fftconv\n")
    h100 = tmp_path / "bench" / "results" / "h100"
    h100.mkdir(parents=True)
    if with_files:
        (h100 / "networks.json").write_text(json.dumps(networks_doc()))
        (h100 / "torch_networks.json").write_text(json.dumps(torch_doc()))
        write_grid(h100 / "grid.jsonl.gz", records())
    return tmp_path


def test_results_page_has_the_networks_table_and_the_grid_summary(tmp_path):
    report = load_script("bench/report.py")
    page = report.generate(make_root(tmp_path, True))["docs/results.md"]
    assert "## The paper's AlexNet / OverFeat-fast table on the H100, and VGG-16" in page
    assert "| cuFFT (K40m) | 94.34 | 96.69 | 93.20 | 284.23 | the paper |" in page
    assert "| cufft | 5.00 | 6.00 | 7.00 | 18.00 | strided layers by cuDNN |" in page
    assert "| fbfft | 4.00 | – | – | 4.00 | without conv2 |" in page
    assert "| PyTorch tf32_on | 1.00 | 2.00 | 3.00 | 6.00 |  |" in page
    assert "## The paper's Figures 1–6 on the H100: the grid against cuDNN" in page
    assert "| 13x13 | 1 of 1 | 23.54x |" in page        # the grid summary of plot_grid.py
    assert page.index("AlexNet / OverFeat") < page.index("Figures 1–6")


def test_a_sample_of_the_grid_is_summarized_until_the_whole_grid_is_there(tmp_path):
    report = load_script("bench/report.py")
    root = make_root(tmp_path, False)
    write_grid(root / "bench" / "results" / "h100" / "grid-sample.jsonl.gz", records())
    page = report.generate(root)["docs/results.md"]
    assert "`bench/results/h100/grid-sample.jsonl.gz`" in page and "| 13x13 | 1 of 1 | 23.54x |" in page


def test_results_page_without_the_files_has_neither_section(tmp_path):
    report = load_script("bench/report.py")
    page = report.generate(make_root(tmp_path, False))["docs/results.md"]
    assert "AlexNet / OverFeat" not in page and "Figures 1–6" not in page
