#!/usr/bin/env python3
"""`auto`'s tuning cost on the GPU: for each layer of the named sets (`fftconv bench layers --set S
--list`) and each pass, `fftconv plan --backend auto --json` in a fresh process with an empty plan
cache and an empty HOME (tune_ms: a new (problem, pass); neither the process start nor creating the
device context, device_init_ms, is counted), then the same plan in a second process that reads the
caches the first wrote (cached_ms, Note [persistent choices]). The L and modern sets are
planned untiled and the large set with --tile auto, as `bench layers` runs them. Each budget of
--budgets is one FFTCONV_TUNE_BUDGET_MS ('default' leaves it unset; 0: no deadline, Note [tuning
budget]). One JSON (bench/results/<device>/auto-tune.json) with each run's choice and candidates."""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

TILES = {"L": "none", "modern": "none", "large": "auto"}


def layers(binary, name):
    out = subprocess.run([binary, "bench", "layers", "--set", name, "--list"], check=True, capture_output=True,
                         text=True).stdout
    return [(layer["name"], layer["spec"]) for net in json.loads(out)["networks"] for layer in net["layers"]]


def plan(binary, spec, pass_, tile, cache, home, budget="default", extra_env=None):
    """One `fftconv plan --backend auto --json` with its plan cache in `cache` and HOME in `home` (also
    bench/tools/cpu_auto.py's), `extra_env` added to the environment: the parsed output."""
    env = dict(os.environ, HOME=home, FFTCONV_PLAN_CACHE=cache, **(extra_env or {}))
    env.pop("XDG_CACHE_HOME", None)
    env.pop("FFTCONV_TUNE_BUDGET_MS", None)
    if budget != "default":
        env["FFTCONV_TUNE_BUDGET_MS"] = budget
    cmd = [binary, "plan", "--problem", spec, "--pass", pass_, "--backend", "auto", "--tile", tile, "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited {done.returncode}: "
                         f"{done.stderr.strip()}")
    return json.loads(done.stdout)


def gpu_identity():
    """(name, driver version) of the first GPU from nvidia-smi, or ('unrecorded', 'unrecorded')."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        name, driver = (field.strip() for field in out[0].split(",", 1))
        return name, driver
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
        return "unrecorded", "unrecorded"


def merged(old, new):
    """`old` with the rows and runs of `new`: a run replaces the one of the same case and budget."""
    key = lambda r: (r["set"], r["layer"], r["pass"])
    rows = {key(r): r for r in old["rows"]}
    for r in new["rows"]:
        if key(r) not in rows:
            rows[key(r)] = r
            continue
        runs = {run["budget"]: run for run in rows[key(r)]["runs"]}
        runs.update({run["budget"]: run for run in r["runs"]})
        rows[key(r)]["runs"] = list(runs.values())
    union = lambda a, b: a + [x for x in b if x not in a]
    return {**new, "sets": union(old["sets"], new["sets"]), "passes": union(old["passes"], new["passes"]),
            "budgets": union(old["budgets"], new["budgets"]), "command": old["command"] + "; " + new["command"],
            "rows": list(rows.values())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fftconv", default="build-gpu/cli/fftconv", help="the CLI built with CUDA")
    ap.add_argument("--sets", default="L,modern,large", help="named layer sets of `bench layers` (L, modern, large)")
    ap.add_argument("--only", default="", help="only these layers (names, comma-separated)")
    ap.add_argument("--passes", default="fprop,bprop,accgrad")
    ap.add_argument("--budgets", default="default,0",
                    help="FFTCONV_TUNE_BUDGET_MS values, one tuning each ('default': unset; 0: no deadline)")
    ap.add_argument("--out", default="-", help="JSON file ('-': standard output)")
    ap.add_argument("--add-to", default="",
                    help="an earlier output: keep its rows and runs, replacing the runs of the same case and budget")
    a = ap.parse_args(argv)
    sets = [s for s in a.sets.split(",") if s]
    for s in sets:
        if s not in TILES:
            ap.error(f"--sets: unknown set '{s}' (expected {', '.join(TILES)})")
    passes = [p for p in a.passes.split(",") if p]
    for p in passes:
        if p not in ("fprop", "bprop", "accgrad"):
            ap.error(f"--passes: unknown pass '{p}' (expected fprop, bprop, accgrad)")
    budgets = [b for b in a.budgets.split(",") if b]
    for b in budgets:
        if b != "default" and not b.replace(".", "", 1).isdigit():
            ap.error(f"--budgets: '{b}' is neither 'default' nor milliseconds >= 0")
    only = {n for n in a.only.split(",") if n}
    cases = [(s, name, spec, p) for s in sets for name, spec in layers(a.fftconv, s)
             if not only or name in only for p in passes]
    command = "python3 bench/tools/gpu_tune.py " + " ".join(argv if argv is not None else sys.argv[1:])
    earlier = json.load(open(a.add_to)) if a.add_to else None
    device, driver = gpu_identity()
    rows = []

    def write():
        doc = {"benchmark": "auto-tune", "sets": sets, "passes": passes, "budgets": budgets,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "command": command, "device": device, "driver_version": driver, "rows": rows}
        text = json.dumps(merged(earlier, doc) if earlier else doc, indent=1) + "\n"
        if a.out == "-":
            sys.stdout.write(text)
            return
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)

    for k, (s, name, spec, p) in enumerate(cases):
        row = {"set": s, "layer": name, "spec": spec, "pass": p, "tile": TILES[s], "runs": []}
        for b in budgets:
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as home:
                first = plan(a.fftconv, spec, p, TILES[s], cache, home, b)
                again = plan(a.fftconv, spec, p, TILES[s], cache, home, b)
            chosen = next((c for c in first["candidates"] if c["backend"] == first["chosen"]), {})
            row["runs"].append({
                "budget": b, "tune_ms": first["tune_ms"], "chosen": first["chosen"],
                "chosen_ms": chosen.get("measured_ms"), "reason": first["reason"],
                "device_init_ms": first.get("device_init_ms"), "cached_ms": again["tune_ms"],
                "cached_device_init_ms": again.get("device_init_ms"), "cached_from_cache": again["from_cache"],
                "cached_plan": again["plan"], "candidates": first["candidates"]})
        rows.append(row)
        if a.out != "-":
            write()  # after every case: a run cut short keeps what it measured
        summary = ", ".join(f"budget {r['budget']}: {r['tune_ms']:.0f} ms -> {r['chosen']}, cached {r['cached_ms']:.1f} ms"
                            for r in row["runs"])
        print(f"[{k + 1}/{len(cases)}] {name} {p}: {summary}", file=sys.stderr, flush=True)
    if a.out == "-":
        write()


if __name__ == "__main__":
    main()
