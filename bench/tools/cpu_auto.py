#!/usr/bin/env python3
"""`auto` on the CPU against its candidates: `fftconv run` of fftw (untiled and --tile auto), im2col and
auto on L1-L5 at two batch sizes, all three passes, one JSON (bench/results/cpu/auto-cpu.json). Each
case runs its backends one after another, the whole sweep --rounds times (each run the median of
--repeat calls, weights transformed in every call); a backend's time is the fastest of its round
medians: other work on a shared host only ever slows a run down, and within a minute it moved the
same plan's median by up to 1.4x, more than the differences compared here. auto tunes into a fresh
plan cache in the first round and reads its choice from the cache in the later rounds. Before the
rounds, each case is planned by `fftconv plan --backend auto --json` in a fresh process with an empty
plan cache and an empty HOME (tune_ms), then in a second process that reads the caches the first
wrote: auto's choice and FFTW's wisdom (cached_ms, Note [fftw wisdom]).
ratio is auto's time over the fastest candidate's (fftw untiled or tiled, im2col). choice_ratio is
the time of the plan auto ran, measured as the candidates that ran that plan (fftw with tile=auto runs
the untiled plan where the tiling planner keeps the problem untiled), over the same fastest: the
choice itself, without the noise between two processes that run one plan."""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

from gpu_tune import plan as plan_auto  # (this script's folder is on sys.path)


BACKENDS = {"fftw": ["--backend", "fftw"], "fftw_tiled": ["--backend", "fftw", "--tile", "auto"],
            "im2col": ["--backend", "im2col"], "auto": ["--backend", "auto"]}


def run(binary, problem, pass_, backend, repeat, threads, env):
    cmd = [binary, "run", "--problem", problem, "--pass", pass_, *BACKENDS[backend], "--repeat", str(repeat),
           "--threads", str(threads), "--check", "none", "--no-prepared-weights", "--no-progress", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def tune(binary, problem, pass_, threads):
    """auto's tuning of one case in a fresh process with empty caches, then the same plan in a second
    process that reads them, on `threads` threads: (tune_ms, its choice, cached_ms, from the cache)."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as home:
        threads_env = {"OMP_NUM_THREADS": str(threads)}
        first, again = (plan_auto(binary, problem, pass_, "none", cache, home, extra_env=threads_env) for _ in range(2))
    return first["tune_ms"], first["chosen"], again["tune_ms"], again["from_cache"]


# auto's describe() is 'auto -> <candidate> (<reason>): <the candidate's describe()>'.
def choice(plan):
    """The candidate auto chose: 'fftw', 'fftw tile=auto' or 'im2col'."""
    backend = plan.split(" -> ", 1)[1].split(" ", 1)[0]
    return backend + (" tile=auto" if plan.split(" -> ", 1)[1].startswith(backend + " tile=auto") else "")


def ran_plan(plan):
    """The describe() of the plan auto ran."""
    return plan.split("): ", 1)[-1]


def computation(plan):
    """A candidate's plan without the tiling planner's report where it kept the problem untiled: fftw with
    tile=auto then runs the untiled plan, the fftw candidate's, and the two candidates time one plan."""
    return plan.split("; tile auto: none(", 1)[0]


def judge(r):
    """ratio and choice_ratio of a row (the module's docstring)."""
    cands = ("fftw", "fftw_tiled", "im2col")
    fastest = min(r[b]["best_ms"] for b in cands)
    r["ratio"] = r["auto"]["best_ms"] / fastest
    # The plan auto ran is one of the candidates' plans: its time as that candidate (the fastest of the
    # candidates that ran it), over the same base, judges the choice apart from the noise between two
    # processes running one plan.
    same = [r[b]["best_ms"] for b in cands if computation(r[b]["plan"]) == ran_plan(r["auto"]["plan"])]
    r["choice_ratio"] = min(same) / fastest if same else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fftconv", default="build/cli/fftconv")
    ap.add_argument("--layers", default="L1,L2,L3,L4,L5")
    ap.add_argument("--batches", default="2,8")
    ap.add_argument("--passes", default="fprop,bprop,accgrad")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="-")
    a = ap.parse_args(argv)
    cases = [(layer, int(s), p) for layer in a.layers.split(",") for s in a.batches.split(",")
             for p in a.passes.split(",")]
    rounds = {(c, b): [] for c in cases for b in BACKENDS}
    plans = {}
    tuned = {c: tune(a.fftconv, f"{c[0]},S={c[1]}", c[2], a.threads) for c in cases}
    print(f"tuned {len(cases)} cases", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FFTCONV_PLAN_CACHE=cache)
        for k in range(a.rounds):
            for c in cases:
                layer, s, p = c
                for b in BACKENDS:
                    j = run(a.fftconv, f"{layer},S={s}", p, b, a.repeat, a.threads, env)
                    rounds[(c, b)].append(j["time_ms"]["median"])
                    plans.setdefault((c, b), j["plan"])
            print(f"round {k + 1} of {a.rounds} done", file=sys.stderr, flush=True)
    rows = []
    for c in cases:
        layer, s, p = c
        r = {"layer": layer, "S": s, "pass": p}
        for b in BACKENDS:
            t = rounds[(c, b)]
            r[b] = {"plan": plans[(c, b)], "round_medians_ms": t, "median_ms": statistics.median(t), "best_ms": min(t)}
        r["auto_choice"] = choice(r["auto"]["plan"])
        r["tune_ms"], r["tune_choice"], r["cached_ms"], r["cached_from_cache"] = tuned[c]
        judge(r)
        rows.append(r)
        print(f"{layer} S={s} {p:8s} fftw {r['fftw']['best_ms']:8.2f} tiled {r['fftw_tiled']['best_ms']:8.2f} "
              f"im2col {r['im2col']['best_ms']:8.2f} auto {r['auto']['best_ms']:8.2f} "
              f"({r['auto_choice']}) ratio {r['ratio']:.2f}, tuned in {r['tune_ms']:.0f} ms, "
              f"cached {r['cached_ms']:.2f} ms"
              + (f", its plan as a candidate {r['choice_ratio']:.2f}" if r["choice_ratio"] is not None else ""),
              file=sys.stderr, flush=True)
    doc = {"benchmark": "auto-cpu", "device": f"host CPU ({a.threads} OpenMP threads)", "versions": "unrecorded",
           "command": "python3 bench/tools/cpu_auto.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"), "rows": rows}
    text = json.dumps(doc, indent=1) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
