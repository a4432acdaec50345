"""bench/torch_networks.py (PyTorch's timings for the networks table): the layer specs it reads, the
sizes and totals it computes, the layer list from `fftconv bench networks --list`, and, where PyTorch
is installed, a whole run on the CPU on a tiny list (the GPU run needs a CUDA host)."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, load_script

SCRIPT = ROOT / "bench" / "torch_networks.py"


def module():
    return load_script("bench/torch_networks.py")


def test_specs_short_and_long_strided_or_not():
    m = module()
    c = m.parse_spec("S=128,f=3,fo=96,n=227,k=11,s=4")
    assert (c["S"], c["f"], c["fo"], c["h"], c["w"], c["kh"], c["kw"], c["ph"], c["sh"], c["sw"]) == \
        (128, 3, 96, 227, 227, 11, 11, 0, 4, 4)
    assert m.output_size(c) == (55, 55)                      # AlexNet's conv1
    c = m.parse_spec("S=128,f=96,fo=256,h=27,w=27,kh=5,kw=5,ph=2,pw=2,pad=zero")
    assert m.output_size(c) == (27, 27)
    assert m.madds(c) == 128 * 96 * 256 * 25 * 27 * 27
    for bad in ("S=1,f=2,n=5,k=3,pad=mirror", "S=1,n=5,k=3,g=2", "S=1,n=2,k=3", "S=0,n=5,k=3", "S=1,n5"):
        with pytest.raises(ValueError):
            m.parse_spec(bad)


def test_totals_sum_each_mode_and_name_missing_layers():
    m = module()
    cell = lambda ms: {"tf32_off": {"median_ms": ms}, "tf32_on": {"median_ms": ms / 2}}  # noqa: E731
    layers = [{"name": "conv1", "passes": {p: cell(1.0) for p in m.PASSES}},
              {"name": "conv2", "passes": {"fprop": cell(2.0), "bprop": cell(3.0)}}]
    t = m.totals(layers, ["tf32_off", "tf32_on"])
    assert t["tf32_off"] == {"fprop": 3.0, "bprop": 4.0, "accgrad": 1.0, "total": 8.0, "complete": False,
                             "missing": ["conv2"]}
    assert t["tf32_on"]["total"] == 4.0


def test_layer_list_from_the_fftconv_binary():
    exe = next((p for p in (ROOT / "build/cli/fftconv", ROOT / "build-gpu/cli/fftconv") if p.is_file()), None)
    if exe is None:
        pytest.skip("no fftconv binary built")
    doc = json.loads(subprocess.run([str(exe), "bench", "networks", "--list"], capture_output=True, text=True,
                                    check=True).stdout)
    assert doc["batch"] == 128
    nets = {n["name"]: n["layers"] for n in doc["networks"]}
    assert [len(nets[n]) for n in ("alexnet", "overfeat", "vgg16")] == [5, 5, 13]
    m = module()
    for layers in nets.values():
        for layer in layers:
            m.parse_spec(layer["spec"])  # every spec is one the script can time
    assert m.output_size(m.parse_spec(nets["overfeat"][0]["spec"])) == (56, 56)


def test_a_cpu_run_on_a_tiny_list(tmp_path):
    pytest.importorskip("torch")
    layers = {"batch": 2, "networks": [{"name": "tiny", "layers": [
        {"name": "conv1", "spec": "S=2,f=3,fo=4,n=15,k=5,s=2", "stride": 2, "same_as": ""},
        {"name": "conv2", "spec": "S=2,f=4,fo=5,h=6,w=6,kh=3,kw=3,ph=1,pw=1,pad=zero", "stride": 1, "same_as": ""},
        {"name": "conv3", "spec": "S=2,f=4,fo=5,h=6,w=6,kh=3,kw=3,ph=1,pw=1,pad=zero", "stride": 1, "same_as": "conv2"}]}]}
    (tmp_path / "layers.json").write_text(json.dumps(layers))
    out = tmp_path / "torch.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--layers", str(tmp_path / "layers.json"), "--networks", "tiny",
                        "--device", "cpu", "--repeat", "2", "--warmup", "1", "--json", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    net = doc["networks"][0]
    assert [lay["name"] for lay in net["layers"]] == ["conv1", "conv2", "conv3"]
    assert net["layers"][2]["same_as"] == "conv2"
    for layer in net["layers"]:
        for p in ("fprop", "bprop", "accgrad"):
            for mode in ("tf32_off", "tf32_on"):
                c = layer["passes"][p][mode]
                assert c["median_ms"] > 0 and c["min_ms"] <= c["median_ms"]
                assert c["rel_l2"] < 1e-5          # float32 on the CPU against float64
    assert net["totals"]["tf32_off"]["complete"]
    assert "PyTorch tf32_off" in r.stdout
