#!/usr/bin/env python3
"""Times the layers of `fftconv bench networks` (AlexNet, OverFeat-fast, VGG-16; every convolutional
layer at the batch of the list, 128 by default), or of a layer set of `fftconv bench layers` (--set
depthwise: grouped, strided and dilated layers), with PyTorch's default path: F.conv2d and its two
gradients (torch.nn.grad.conv2d_input for bprop, conv2d_weight for accGrad) with the layer's stride,
dilation and groups, on CUDA with torch.backends.cudnn.benchmark = True, once with TF32 off and once
with TF32 on. Each call is timed with CUDA events after warm-up (median and min); each result's error
against float64 is taken on the same operands cut to --verify-batch samples (0: the whole batch), the
reference computed in double.

usage: torch_networks.py [--layers LAYERS.json | --set NAME | --fftconv BIN] [--json OUT]
                         [--networks alexnet,...] [--batch S] [--repeat 20] [--warmup 3]
                         [--verify-batch 16] [--device cuda]

The layer list is `fftconv bench networks --list`, or with --set `fftconv bench layers --set NAME
--list` (run through --fftconv, default build/cli/fftconv or build-gpu/cli/fftconv), or a file of
either from --layers. --device cpu runs the same steps on the CPU (no cuDNN, wall-clock timing): a
check of the script, not a measurement.
"""
import argparse
import datetime
import json
import math
import pathlib
import platform
import shlex
import statistics
import subprocess
import sys
import time

PASSES = ("fprop", "bprop", "accgrad")
MODES = (("tf32_off", False), ("tf32_on", True))
ROOT = pathlib.Path(__file__).resolve().parents[1]


# ----- layers (no torch needed) ----------------------------------------------------------------------

SIZE_KEYS = ("S", "f", "fo", "h", "w", "kh", "kw", "sh", "sw", "dh", "dw", "g")


def parse_spec(spec):
    """A problem spec (`S=128,f=3,fo=96,n=227,k=11,s=4` or the long form of ConvProblem::to_string)
    -> the conv2d sizes: S, f, fo, h, w, kh, kw, ph, pw, sh, sw (stride), dh, dw (dilation), g (groups).
    Mirror or circular padding and a bias are refused (the timed layers use zero padding, no bias)."""
    kv = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        if not _:
            raise ValueError(f"spec: expected key=value, got '{item}' in '{spec}'")
        kv[key.strip()] = value.strip()
    if kv.pop("pad", "zero") not in ("zero", "zeros"):
        raise ValueError(f"spec: only zero padding is timed here, got '{spec}'")
    n = lambda key, default=None: int(kv[key]) if key in kv else default  # noqa: E731
    out = {"S": n("S", 1), "f": n("f", 1), "fo": n("fo", 1)}
    out["h"] = n("h", n("n", 1))
    out["w"] = n("w", n("n", 1))
    out["kh"] = n("kh", n("k", 1))
    out["kw"] = n("kw", n("k", 1))
    out["ph"] = n("ph", n("p", 0))
    out["pw"] = n("pw", n("p", 0))
    out["sh"] = n("sh", n("s", 1))
    out["sw"] = n("sw", n("s", 1))
    out["dh"] = n("dh", n("d", 1))
    out["dw"] = n("dw", n("d", 1))
    out["g"] = n("g", 1)
    unknown = set(kv) - {*SIZE_KEYS, "n", "k", "ph", "pw", "p", "s", "d"}
    if unknown:
        raise ValueError(f"spec: keys {sorted(unknown)} are not timed here, in '{spec}'")
    if min(out.values()) < 0 or min(out[k] for k in SIZE_KEYS) < 1:
        raise ValueError(f"spec: sizes must be positive, got '{spec}'")
    if out["f"] % out["g"] or out["fo"] % out["g"]:
        raise ValueError(f"spec: g = {out['g']} groups must divide f and fo in '{spec}'")
    if out["h"] + 2 * out["ph"] < extent(out, "h") or out["w"] + 2 * out["pw"] < extent(out, "w"):
        raise ValueError(f"spec: the (dilated) kernel is larger than the padded input in '{spec}'")
    return out


def extent(c, axis):
    """The dilated kernel's extent along axis 'h' or 'w'."""
    return c["d" + axis] * (c["k" + axis] - 1) + 1


def output_size(c):
    return tuple((c[a] + 2 * c["p" + a] - extent(c, a)) // c["s" + a] + 1 for a in ("h", "w"))


def madds(c):
    oh, ow = output_size(c)
    return c["S"] * (c["f"] // c["g"]) * c["fo"] * c["kh"] * c["kw"] * oh * ow


def load_layers(args):
    """The layer list document (`fftconv bench networks --list` or `bench layers --set NAME --list`),
    from --layers or by running --fftconv."""
    if args.layers:
        return json.loads(pathlib.Path(args.layers).read_text())
    candidates = [args.fftconv] if args.fftconv else [str(ROOT / "build/cli/fftconv"), str(ROOT / "build-gpu/cli/fftconv")]
    for exe in candidates:
        if exe and pathlib.Path(exe).is_file():
            if args.set:
                cmd = [exe, "bench", "layers", "--list", "--set", args.set]
            else:
                cmd = [exe, "bench", "networks", "--list", "--batch", str(args.batch or 128)]
                if args.networks:
                    cmd += ["--networks", args.networks]
            if args.set and args.batch:
                cmd += ["--batch", str(args.batch)]
            return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    raise SystemExit(f"no layer list: give --layers FILE (from `fftconv bench networks --list` or `fftconv bench "
                     f"layers --set NAME --list`) or --fftconv BIN (looked for {', '.join(candidates)})")


def totals(layers, modes):
    """Per mode: the sum over layers of each pass's median, the total, and the layers missing a time."""
    out = {}
    for mode in modes:
        t, missing = {}, []
        for p in PASSES:
            s = 0.0
            for layer in layers:
                cell = layer["passes"].get(p, {}).get(mode, {})
                if cell.get("median_ms") is None:
                    if layer["name"] not in missing:
                        missing.append(layer["name"])
                    continue
                s += cell["median_ms"]
            t[p] = s
        t = {p: round(v, 5) for p, v in t.items()}
        t["total"] = round(sum(t[p] for p in PASSES), 5)
        t["complete"] = not missing
        if missing:
            t["missing"] = missing
        out[mode] = t
    return out


# ----- measurement (torch) ---------------------------------------------------------------------------

def rel_l2(out, ref):
    d = (out.double() - ref).norm().item()
    r = ref.norm().item()
    return d / r if r > 0 else (0.0 if d == 0 else math.inf)


def pass_call(torch, pass_name, x, w, g, c):
    """A callable computing one pass on (x, w, g) for the conv sizes c."""
    kw = {"stride": (c["sh"], c["sw"]), "padding": (c["ph"], c["pw"]), "dilation": (c["dh"], c["dw"]), "groups": c["g"]}
    if pass_name == "fprop":
        return lambda: torch.nn.functional.conv2d(x, w, **kw)
    if pass_name == "bprop":
        return lambda: torch.nn.grad.conv2d_input(x.shape, w, g, **kw)
    return lambda: torch.nn.grad.conv2d_weight(x, w.shape, g, **kw)


def time_call(torch, fn, warmup, repeat, device):
    """(median ms, min ms) of `repeat` calls after `warmup` (CUDA events on a GPU, a clock elsewhere)."""
    for _ in range(warmup):
        fn()
    times = []
    if device == "cuda":
        torch.cuda.synchronize()
        for _ in range(repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


def set_tf32(torch, on):
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on


def measure_layer(torch, c, args, seed):
    """{pass: {mode: {median_ms, min_ms, rel_l2}}} for one layer."""
    dev = args.device
    gen = torch.Generator(device="cpu").manual_seed(seed)
    oh, ow = output_size(c)
    x = torch.randn(c["S"], c["f"], c["h"], c["w"], generator=gen).to(dev)
    w = torch.randn(c["fo"], c["f"] // c["g"], c["kh"], c["kw"], generator=gen).to(dev)
    g = torch.randn(c["S"], c["fo"], oh, ow, generator=gen).to(dev)
    vb = c["S"] if args.verify_batch <= 0 else min(args.verify_batch, c["S"])
    xv, gv = x[:vb].contiguous(), g[:vb].contiguous()
    out = {}
    for p in PASSES:
        ref = pass_call(torch, p, xv.double(), w.double(), gv.double(), c)()
        out[p] = {}
        for mode, on in MODES:
            set_tf32(torch, on)
            median_ms, min_ms = time_call(torch, pass_call(torch, p, x, w, g, c), args.warmup, args.repeat, dev)
            out[p][mode] = {"median_ms": round(median_ms, 5), "min_ms": round(min_ms, 5),
                            "rel_l2": float(f"{rel_l2(pass_call(torch, p, xv, w, gv, c)(), ref):.3g}")}
        del ref
    del x, w, g, xv, gv
    if dev == "cuda":
        torch.cuda.empty_cache()
    return out


def environment(torch, device):
    env = {"torch": torch.__version__, "python": platform.python_version(), "host": platform.node()}
    if device == "cuda":
        env.update(device=torch.cuda.get_device_name(), cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version(), capability=".".join(map(str, torch.cuda.get_device_capability())))
    else:
        env["device"] = f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    return env


def run(args, doc, torch):
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("torch.cuda.is_available() is False: run on a GPU host, or --device cpu for a check")
    torch.backends.cudnn.benchmark = True
    env = environment(torch, args.device)
    layer_set = args.set or doc.get("set")  # `bench layers --list` names its set; `bench networks --list` none
    result = {"benchmark": "torch_layers" if layer_set else "torch_networks",
              "command": " ".join(shlex.quote(a) for a in sys.argv),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "device": f"{env['device']}, PyTorch {env['torch']}" + (f", cuDNN {env['cudnn']}" if "cudnn" in env else ""),
              "environment": env, "batch": doc["batch"],
              "verify_batch": args.verify_batch, "warmup": args.warmup, "repeat": args.repeat,
              "cudnn_benchmark": True, "modes": {m: {"allow_tf32": on} for m, on in MODES}, "networks": []}
    if layer_set:
        result["set"] = layer_set
    wanted = set(args.networks.split(",")) if args.networks else {net["name"] for net in doc["networks"]}
    for n, net in enumerate(doc["networks"]):
        if net["name"] not in wanted:
            continue
        layers, seen = [], {}
        for i, layer in enumerate(net["layers"]):
            c = parse_spec(layer["spec"])
            row = {"name": layer["name"], "spec": layer["spec"], "madds": madds(c)}
            key = layer.get("same_as") or ""
            if key and key in seen:
                row.update(same_as=key, passes=seen[key])
            else:
                print(f"{net['name']} {layer['name']}: {layer['spec']}", file=sys.stderr, flush=True)
                try:
                    row["passes"] = measure_layer(torch, c, args, seed=1000 * n + i)
                except RuntimeError as e:  # out of memory or an unsupported shape: recorded, the run goes on
                    row["passes"], row["error"] = {}, str(e).splitlines()[0][:300]
                    if args.device == "cuda":
                        torch.cuda.empty_cache()
                seen[layer["name"]] = row["passes"]
            layers.append(row)
        result["networks"].append({"name": net["name"], "layers": layers, "totals": totals(layers, [m for m, _ in MODES])})
    return result


def table(result):
    """Per network its totals; for a layer set each layer's medians first."""
    lines = []
    for net in result["networks"]:
        batch = f"batch {result['batch']}" if result["batch"] else "each layer's batch"
        lines.append(f"{net['name']} ({batch}), ms   fprop      bprop    accGrad      total")
        width = max((len(layer["name"]) for layer in net["layers"]), default=0)
        for layer in net["layers"] if result.get("set") else []:
            for mode, _ in MODES:
                cells = [layer["passes"].get(p, {}).get(mode, {}).get("median_ms") for p in PASSES]
                lines.append(f"  {layer['name']:<{width}}  {mode:<9}"
                             + "".join(f"{v:11.3f}" if v is not None else f"{'-':>11}" for v in cells))
        for mode, t in net["totals"].items():
            cells = "".join(f"{t[p]:11.2f}" for p in (*PASSES, "total"))
            lines.append(f"  PyTorch {mode:<10}{cells}" + ("" if t["complete"] else f"   without {t['missing']}"))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", help="the layer list (`fftconv bench networks --list` or `bench layers --list` output)")
    ap.add_argument("--set", help="time the layer set NAME of `fftconv bench layers` (e.g. depthwise)")
    ap.add_argument("--fftconv", help="the fftconv binary to ask for the list")
    ap.add_argument("--networks", help="the networks of the list to time (default: all; the CLI's: alexnet,overfeat,vgg16)")
    ap.add_argument("--batch", type=int, help="batch of the list asked from --fftconv (networks: 128; a set: "
                                              "each layer's own)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--verify-batch", type=int, default=16, help="samples the float64 check runs on (0: all)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        ap.error("--repeat must be >= 1 and --warmup >= 0")
    if args.batch is not None and args.batch < 1:
        ap.error("--batch must be >= 1")
    if args.set and args.layers:
        ap.error("--set and --layers both name the layer list: give one")
    doc = load_layers(args)
    import torch  # only here: the layer handling above runs without it

    result = run(args, doc, torch)
    sys.stdout.write(table(result))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return result


if __name__ == "__main__":
    main()
