"""bench/torch_networks.py (PyTorch's timings for the networks table and the layer sets): the layer
specs it reads (stride, dilation, groups), the sizes and totals it computes, the layer lists from
`fftconv bench networks --list` and `fftconv bench layers --list`, and, where PyTorch is installed,
whole runs on the CPU on tiny lists (the GPU run needs a CUDA host)."""
import argparse
import json
import subprocess
import sys

import pytest

from conftest import ROOT, load_script

SCRIPT = ROOT / "bench" / "torch_networks.py"


def module():
    return load_script("bench/torch_networks.py")


def fftconv_binary():
    exe = next((p for p in (ROOT / "build/cli/fftconv", ROOT / "build-gpu/cli/fftconv", ROOT / "build-cpu/cli/fftconv")
                if p.is_file()), None)
    if exe is None:
        pytest.skip("no fftconv binary built")
    return exe


def test_specs_short_and_long_strided_or_not():
    m = module()
    c = m.parse_spec("S=128,f=3,fo=96,n=227,k=11,s=4")
    assert (c["S"], c["f"], c["fo"], c["h"], c["w"], c["kh"], c["kw"], c["ph"], c["sh"], c["sw"]) == \
        (128, 3, 96, 227, 227, 11, 11, 0, 4, 4)
    assert m.output_size(c) == (55, 55)                      # AlexNet's conv1
    c = m.parse_spec("S=128,f=96,fo=256,h=27,w=27,kh=5,kw=5,ph=2,pw=2,pad=zero")
    assert m.output_size(c) == (27, 27)
    assert m.madds(c) == 128 * 96 * 256 * 25 * 27 * 27
    for bad in ("S=1,f=2,n=5,k=3,pad=mirror", "S=1,n=5,k=3,g=2", "S=1,n=2,k=3", "S=0,n=5,k=3", "S=1,n5",
                "S=1,f=4,fo=6,n=5,k=3,g=4", "S=1,n=5,k=3,d=3", "S=1,n=5,k=3,bias=1", "S=1,n=5,k=3,pad=circular",
                "S=1,n=5,k=3,d=0"):
        with pytest.raises(ValueError):
            m.parse_spec(bad)


def test_specs_with_groups_and_dilation():
    m = module()
    c = m.parse_spec("S=64,f=128,fo=128,h=56,w=56,kh=7,kw=7,ph=3,pw=3,pad=zero,g=128")   # ConvNeXt, depthwise
    assert (c["g"], c["dh"], m.output_size(c)) == (128, 1, (56, 56))
    assert m.madds(c) == 64 * 128 * 49 * 56 * 56                                          # one input channel each
    c = m.parse_spec("S=16,f=256,fo=256,h=64,w=64,kh=3,kw=3,ph=4,pw=4,pad=zero,dh=4,dw=4")  # DeepLab, dilation 4
    assert m.output_size(c) == (64, 64)
    c = m.parse_spec("S=1,f=4,fo=6,h=11,w=9,k=3,p=0,d=2,sh=2,g=2")
    assert (m.extent(c, "h"), m.output_size(c)) == (5, (4, 5))   # stride 2 down, 1 across
    assert m.madds(c) == 2 * 6 * 9 * 4 * 5


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
    exe = fftconv_binary()
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


def test_depthwise_set_list_from_the_fftconv_binary():
    m = module()
    args = argparse.Namespace(layers=None, set="depthwise", fftconv=str(fftconv_binary()), batch=None, networks=None)
    doc = m.load_layers(args)                   # `fftconv bench layers --set depthwise --list`
    assert doc["set"] == "depthwise" and doc["batch"] is None
    layers = {lay["name"]: m.parse_spec(lay["spec"]) for lay in doc["networks"][0]["layers"]}
    assert len(layers) == 11
    assert layers["replk_s1"]["g"] == 128 and layers["replk_s1"]["kh"] == 31
    assert layers["resnet_3x3_s2"]["sh"] == 2 and m.output_size(layers["resnet_3x3_s2"]) == (28, 28)
    assert layers["deeplab_3x3_d2"]["dw"] == 2 and layers["deeplab_3x3_d2"]["S"] == 16
    args.batch = 2
    assert {m.parse_spec(lay["spec"])["S"] for lay in m.load_layers(args)["networks"][0]["layers"]} == {2}


def cpu_run(tmp_path, layers, *options):
    """Runs the script on the CPU on the layer list `layers`: its stdout and its JSON document, every
    cell of which is checked (positive times, float32 against float64)."""
    pytest.importorskip("torch")
    (tmp_path / "layers.json").write_text(json.dumps(layers))
    out = tmp_path / "torch.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--layers", str(tmp_path / "layers.json"), "--device", "cpu",
                        "--repeat", "2", "--warmup", "1", "--json", str(out), *options], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    for layer in doc["networks"][0]["layers"]:
        assert "error" not in layer
        for p in ("fprop", "bprop", "accgrad"):
            for mode in ("tf32_off", "tf32_on"):
                c = layer["passes"][p][mode]
                assert c["median_ms"] > 0 and c["min_ms"] <= c["median_ms"]
                assert c["rel_l2"] < 1e-5          # float32 on the CPU against float64
    return r.stdout, doc


def test_a_cpu_run_on_a_tiny_list(tmp_path):
    layers = {"batch": 2, "networks": [{"name": "tiny", "layers": [
        {"name": "conv1", "spec": "S=2,f=3,fo=4,n=15,k=5,s=2", "stride": 2, "same_as": ""},
        {"name": "conv2", "spec": "S=2,f=4,fo=5,h=6,w=6,kh=3,kw=3,ph=1,pw=1,pad=zero", "stride": 1, "same_as": ""},
        {"name": "conv3", "spec": "S=2,f=4,fo=5,h=6,w=6,kh=3,kw=3,ph=1,pw=1,pad=zero", "stride": 1, "same_as": "conv2"}]}]}
    stdout, doc = cpu_run(tmp_path, layers, "--networks", "tiny")
    net = doc["networks"][0]
    assert doc["benchmark"] == "torch_networks"
    assert [lay["name"] for lay in net["layers"]] == ["conv1", "conv2", "conv3"]
    assert net["layers"][2]["same_as"] == "conv2"
    assert net["totals"]["tf32_off"]["complete"]
    assert "PyTorch tf32_off" in stdout


def test_a_cpu_run_on_a_tiny_layer_set(tmp_path):
    """Depthwise, grouped and dilated, and strided layers in the shape of `fftconv bench layers --list`."""
    specs = {"dw_k5": "S=2,f=4,fo=4,h=12,w=12,kh=5,kw=5,ph=2,pw=2,pad=zero,g=4",
             "grouped_d2": "S=2,f=4,fo=6,h=11,w=11,kh=3,kw=3,ph=2,pw=2,pad=zero,dh=2,dw=2,g=2",
             "strided": "S=3,f=3,fo=5,h=9,w=9,kh=3,kw=3,ph=1,pw=1,pad=zero,sh=2,sw=2"}
    doc = {"batch": None, "set": "tiny", "networks": [{"name": "tiny", "layers": [
        {"name": n, "spec": s, "stride": 1, "same_as": ""} for n, s in specs.items()]}]}
    stdout, res = cpu_run(tmp_path, doc, "--verify-batch", "0")
    assert res["benchmark"] == "torch_layers" and res["set"] == "tiny" and res["batch"] is None
    assert [lay["spec"] for lay in res["networks"][0]["layers"]] == list(specs.values())
    assert "each layer's batch" in stdout and "grouped_d2" in stdout

