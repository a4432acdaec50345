#!/usr/bin/env python3
"""Refits the tiling planner's cost-model constants (Note [cost model], tiling/cost_model.hpp) to
measured candidate times.

Input: JSON files written by `fftconv bench tiling --candidates --json PATH` (each candidate row
carries the terms of its modeled cost, and each problem row the untiled plan's). For constants
theta = (flops per transform, pointwise weight, extra-flop weight, flops per cached byte, flops per
DRAM byte) a candidate's predicted ratio is cost(candidate) / cost(untiled), with

    cost = transform_flops + k_transform * transforms + k_pointwise * pointwise_flops + k_extra * extra_flops
           + traffic_bytes * (k_cached + (k_dram - k_cached) * uncached(workspace_bytes)),
    uncached(w) = max(0, 1 - cache_bytes / w),

and the fit minimizes the sum over candidates of (log predicted - log measured)^2 (Nelder-Mead on
log theta, so every constant stays positive). The measured ratio is the candidate's median time
over the untiled plan's in the same round robin, so the machine's overall rate cancels.

The script first recomputes every prediction with the constants the JSON was written with (given by
--current, default the committed ones) and stops if they do not reproduce the file's
predicted_cost_ratio: the formula here must be the C++ one.

Usage: fit_cost_model.py FILE.json [FILE.json ...] [--exclude REGEX] [--constants C1,...,C5]
                         [--evaluate FILE.json ...] [--json OUT]
"""
import argparse
import json
import math
import re
import sys

CACHE_BYTES = 8.0 * 1024 * 1024  # kCacheBytes (not fitted: a property of the machine's caches)
COMMITTED = (2800.0, 0.4, 1.0, 0.25, 1.5)  # tiling/cost_model.hpp (kExtraWeight: extra flops count in full there)
NAMES = ("kFlopsPerTransform", "kPointwiseWeight", "kExtraWeight", "kFlopsPerCachedByte", "kFlopsPerDramByte")


def cost(terms, theta):
    k_tr, k_pw, k_ex, k_c, k_d = theta
    w = terms["workspace_bytes"]
    unc = 1.0 - CACHE_BYTES / w if w > CACHE_BYTES else 0.0
    per_byte = k_c + (k_d - k_c) * unc
    return (terms["transform_flops"] + k_tr * terms["transforms"] + k_pw * terms["pointwise_flops"]
            + k_ex * terms["extra_flops"] + per_byte * terms["traffic_bytes"])


def load(paths, exclude):
    """(problem, pass, label, candidate terms, untiled terms, measured ratio, file's predicted ratio, file)."""
    points = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for row in doc["rows"]:
            if "candidates" not in row:
                continue
            if "untiled_cost" not in row:
                sys.exit(f"{path}: rows carry no cost terms (written before `bench tiling` recorded them); re-run it")
            for i, c in enumerate(row["candidates"]):
                if i == 0 or not c["ok"]:  # [0] is the untiled plan itself (ratio 1 by construction)
                    continue
                if exclude and re.search(exclude, c["label"]):
                    continue
                points.append((row["problem"], row["pass"], c["label"], c["cost"], row["untiled_cost"],
                               c["measured_time_ratio"], c["predicted_cost_ratio"], path))
    return points


def residuals(points, theta):
    return [math.log(cost(t, theta) / cost(u, theta)) - math.log(m) for _, _, _, t, u, m, _, _ in points]


def rms(values):
    return math.sqrt(sum(v * v for v in values) / len(values))


def parse_constants(text, option, allow_zero):
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        sys.exit(f"{option}: expected {len(NAMES)} comma-separated numbers, got '{text}'")
    if len(values) != len(NAMES) or min(values) < 0 or (not allow_zero and min(values) == 0):
        sys.exit(f"{option}: expected {len(NAMES)} {'non-negative' if allow_zero else 'positive'} numbers "
                 f"({', '.join(NAMES)}), got '{text}'")
    return values


def report_picks(points, before, after):
    """The planner's decision per problem and pass: the candidate (or the untiled plan, ratio 1) of the
    lowest predicted cost, and its measured time over the fastest measured one's."""
    groups = {}  # per file (run), problem and pass
    for p, rb, ra in zip(points, before, after):
        groups.setdefault((p[7], p[0], p[1]), []).append((p[2], p[5], p[5] * math.exp(rb), p[5] * math.exp(ra)))
    print("\nthe planner's pick per problem and pass (measured time over the fastest's in parentheses)")
    print(f"{'problem':34s} {'pass':8s} {'fastest':12s} {'pick before':20s} {'pick after':20s}")
    picks, loss_before, loss_after = [], [], []
    for (_, prob, ps), cands in groups.items():
        cands = [("untiled", 1.0, 1.0, 1.0)] + cands
        fastest = min(cands, key=lambda c: c[1])
        pb = min(cands, key=lambda c: c[2])
        pa = min(cands, key=lambda c: c[3])
        loss_before.append(pb[1] / fastest[1])
        loss_after.append(pa[1] / fastest[1])
        print(f"{prob[:34]:34s} {ps:8s} {fastest[0]:12s} {pb[0]:11s} ({pb[1] / fastest[1]:5.3f}) "
              f"{pa[0]:11s} ({pa[1] / fastest[1]:5.3f})")
        picks.append({"problem": prob, "pass": ps, "fastest": fastest[0], "pick_before": pb[0], "pick_after": pa[0],
                      "loss_before": pb[1] / fastest[1], "loss_after": pa[1] / fastest[1]})
    geo = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
    print(f"picks' measured time over the fastest: geomean {geo(loss_before):.3f} -> {geo(loss_after):.3f}, "
          f"worst {max(loss_before):.3f} -> {max(loss_after):.3f}")
    return picks


def nelder_mead(f, x0, steps, iters=4000, tol=1e-12):
    """Minimizes f from x0 (plain Nelder-Mead, so that the script needs no packages)."""
    n = len(x0)
    simplex = [list(x0)] + [[x0[j] + (steps[j] if j == i else 0.0) for j in range(n)] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: values[i])
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if values[-1] - values[0] < tol:
            break
        centroid = [sum(x[j] for x in simplex[:-1]) / n for j in range(n)]
        def along(t):
            return [centroid[j] + t * (simplex[-1][j] - centroid[j]) for j in range(n)]
        xr = along(-1.0)
        fr = f(xr)
        if fr < values[0]:
            xe = along(-2.0)
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = along(0.5)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    simplex[i] = [simplex[0][j] + 0.5 * (simplex[i][j] - simplex[0][j]) for j in range(n)]
                    values[i] = f(simplex[i])
    best = min(range(n + 1), key=lambda i: values[i])
    return simplex[best], values[best]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="`fftconv bench tiling --candidates --json` outputs")
    ap.add_argument("--exclude", default="", help="leave out candidates whose label matches this regex (e.g. '^8x8')")
    ap.add_argument("--current", default=",".join(str(v) for v in COMMITTED),
                    help="the constants the files were written with, comma-separated in the order " + ", ".join(NAMES)
                         + " (default: the committed ones)")
    ap.add_argument("--constants", help="skip the fit and compare these constants (same order as --current) instead")
    ap.add_argument("--evaluate", nargs="+", default=[],
                    help="also report the rms error and the picks of both constant sets on these files (not fitted: "
                         "a held-out check, e.g. another run or other problems)")
    ap.add_argument("--json", help="write the fit (constants, rms errors, every point) to this path")
    a = ap.parse_args()
    current = parse_constants(a.current, "--current", allow_zero=True)
    points = load(a.files, a.exclude)
    if len(points) < 5:
        sys.exit(f"only {len(points)} candidates to fit; need at least 5")
    for p in points:
        _, _, label, t, u, _, file_pred, _ = p
        pred = cost(t, current) / cost(u, current)
        if abs(pred - file_pred) > 1e-6 * file_pred:
            sys.exit(f"{p[0]} {p[1]} {label}: recomputed prediction {pred:.6f} != the file's {file_pred:.6f} "
                     "(other --current constants, or the formula here differs from tiling/cost_model.cpp)")

    def objective(log_theta):
        return sum(r * r for r in residuals(points, [math.exp(v) for v in log_theta]))

    if a.constants:
        fitted = parse_constants(a.constants, "--constants", allow_zero=True)
    else:
        start = [math.log(max(v, 1e-3)) for v in current]  # log space: a zero constant starts small
        x, _ = nelder_mead(objective, start, [0.5] * len(NAMES))
        x, _ = nelder_mead(objective, x, [0.2] * len(NAMES))  # restart: Nelder-Mead can stall on a ridge
        fitted = tuple(math.exp(v) for v in x)
    before, after = residuals(points, current), residuals(points, fitted)
    print(f"{len(points)} candidates from {len(a.files)} file(s){' (excluding ' + a.exclude + ')' if a.exclude else ''}")
    for name, c, f in zip(NAMES, current, fitted):
        print(f"  {name:22s} {c:12.4g} -> {f:12.4g}")
    print(f"rms of log(predicted / measured): {rms(before):.3f} -> {rms(after):.3f} "
          f"(a typical error of {math.exp(rms(before)) - 1:.0%} -> {math.exp(rms(after)) - 1:.0%})")
    print(f"{'problem':34s} {'pass':8s} {'candidate':12s} {'measured':>9s} {'before':>8s} {'after':>8s}")
    rows = []
    for p, rb, ra in zip(points, before, after):
        prob, ps, label, _, _, meas, _, _ = p
        pb, pa = meas * math.exp(rb), meas * math.exp(ra)
        print(f"{prob[:34]:34s} {ps:8s} {label:12s} {meas:9.3f} {pb:8.3f} {pa:8.3f}")
        rows.append({"problem": prob, "pass": ps, "candidate": label, "measured_time_ratio": meas,
                     "predicted_before": pb, "predicted_after": pa})
    picks = report_picks(points, before, after)
    held_out = {}
    if a.evaluate:
        other = load(a.evaluate, a.exclude)
        ob, oa = residuals(other, current), residuals(other, fitted)
        print(f"\nheld out: {len(other)} candidates from {', '.join(a.evaluate)}: rms of log(predicted / measured) "
              f"{rms(ob):.3f} -> {rms(oa):.3f}")
        other_picks = report_picks(other, ob, oa)
        held_out = {"files": a.evaluate, "rms_log_before": rms(ob), "rms_log_after": rms(oa), "picks": other_picks}
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"files": a.files, "exclude": a.exclude, "cache_bytes": CACHE_BYTES,
                       "current": dict(zip(NAMES, current)), "fitted": dict(zip(NAMES, fitted)),
                       "rms_log_before": rms(before), "rms_log_after": rms(after), "points": rows, "picks": picks,
                       "held_out": held_out},
                      f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
