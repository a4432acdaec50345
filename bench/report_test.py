#!/usr/bin/env python3
"""Tests of bench/report.py (standard library only): the committed docs/results.md and README tables match
bench/results, a changed result file is caught, and the stamp and cgemm-probe helpers."""
import contextlib
import io
import json
import pathlib
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import report  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROBE_LINE = ("L3    fprop   m=128 n=128 k=128 batch=544 | CgemmStridedBatched 0.2068 ms (44.1 TFLOP/s) | "
              "cublasLt best of 4: 0.2058 ms (44.3 TFLOP/s), 1.00x, rel diff 0.0e+00")


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return fn(*args)


class CopyOfTree(unittest.TestCase):
    """A scratch copy of what report.py reads and writes."""

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        shutil.copytree(ROOT / "bench" / "results", self.tmp / "bench" / "results")
        shutil.copytree(ROOT / "validation" / "results", self.tmp / "validation" / "results")
        (self.tmp / "docs").mkdir()
        shutil.copy(ROOT / "docs" / "results.md", self.tmp / "docs" / "results.md")
        shutil.copy(ROOT / "README.md", self.tmp / "README.md")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, name, change):
        path = self.tmp / "bench" / "results" / name
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))

    def test_committed_copies_are_current(self):
        self.assertEqual(quiet(report.main, ["--check", "--root", str(self.tmp)]), 0)

    def test_a_changed_result_is_caught_then_written(self):
        self.edit("h100/layers.json", lambda d: d["rows"][0]["cudnn"]["best"].update(median_ms=1.0))
        self.assertEqual(quiet(report.main, ["--check", "--root", str(self.tmp)]), 1)
        self.assertEqual(quiet(report.main, ["--root", str(self.tmp)]), 0)
        self.assertEqual(quiet(report.main, ["--check", "--root", str(self.tmp)]), 0)
        self.assertIn("| L1 | fprop | 1.000 (FWD_FFT) |", (self.tmp / "docs" / "results.md").read_text())
        self.assertIn("| L1 | fprop | 1.000 (FWD_FFT) |", (self.tmp / "README.md").read_text())

    def test_pytorch_times_join_the_depthwise_table(self):
        layers = json.loads((self.tmp / "bench/results/h100/layers_depthwise.json").read_text())
        auto = {(r["layer"], r["pass"]): (r["problem"], next(b["median_ms"] for b in r["backends"] if b["label"] == "auto"))
                for r in layers["rows"]}
        # the backend auto chose, the column before the PyTorch times
        chose = {(r["layer"], r["pass"]): next(b["plan"] for b in r["backends"] if b["label"] == "auto").split()[2]
                 for r in layers["rows"]}
        net = {"name": "depthwise", "layers": []}
        for (name, p), (spec, ms) in auto.items():
            if not net["layers"] or net["layers"][-1]["name"] != name:
                net["layers"].append({"name": name, "spec": spec, "passes": {}})
            net["layers"][-1]["passes"][p] = {"tf32_off": {"median_ms": 2 * ms}, "tf32_on": {"median_ms": 4 * ms}}
        net["layers"][0]["spec"] = net["layers"][0]["spec"].replace("S=64,", "S=32,")  # another batch: not compared
        doc = {"benchmark": "torch_layers", "set": "depthwise", "device": "NVIDIA H100 80GB HBM3, PyTorch 2.9",
               "command": "bench/torch_networks.py --set depthwise", "date": "2026-11-26T10:00:00Z",
               "networks": [net]}
        (self.tmp / "bench/results/h100/torch_depthwise.json").write_text(json.dumps(doc))
        self.assertEqual(quiet(report.main, ["--root", str(self.tmp)]), 0)
        text = (self.tmp / "docs" / "results.md").read_text()
        section = text.split("## Depthwise, strided and dilated layers on the H100")[1].split("\n## ")[0]
        self.assertIn("- `bench/results/h100/torch_depthwise.json`: command `bench/torch_networks.py --set", section)
        self.assertIn("| PyTorch ms | PyTorch TF32 ms | auto / PyTorch |", section)
        self.assertIn(f"| {chose[('convnext_s1', 'fprop')]} | – | – | – |", section)  # convnext_s1: other batch
        ms = auto[("replk_s1", "bprop")][1]
        self.assertIn(f"| {chose[('replk_s1', 'bprop')]} | {2 * ms:.3f} | {4 * ms:.3f} | 0.50 |", section)
        rows = len(auto) - 3
        self.assertIn(f"geometric mean **0.500** (faster in {rows} of {rows}); over its TF32-on time 0.250.", section)
        other = text.split("## Other result files")[1].split("\n## ")[0] if "## Other result files" in text else ""
        self.assertNotIn("torch_depthwise", other)

    def test_a_file_without_date_is_refused(self):
        self.edit("cpu/tiling.json", lambda d: d.pop("date"))
        with self.assertRaises(SystemExit) as e:
            quiet(report.main, ["--check", "--root", str(self.tmp)])
        self.assertIn("cpu/tiling.json: no 'date' field", str(e.exception))

    def test_every_file_is_listed_with_its_command(self):
        text = report.generate(self.tmp)[report.RESULTS]
        for path in (self.tmp / "bench" / "results").glob("*/*.json"):
            name = path.relative_to(self.tmp / "bench" / "results").as_posix()
            self.assertIn(f"`bench/results/{name}`: command ", text)

    def test_stamp_adds_date_and_keeps_a_recorded_command(self):
        path = self.tmp / "new.json"
        path.write_text(json.dumps({"command": "fftconv bench layers", "device": "x"}))
        quiet(report.main, ["stamp", str(path), "--command", "other", "--set", "versions=unrecorded"])
        doc = json.loads(path.read_text())
        self.assertEqual(doc["command"], "fftconv bench layers")
        self.assertRegex(doc["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(doc["versions"], "unrecorded")


class GpuCandidates(unittest.TestCase):
    def row(self, backend, untiled_ms, ranks):
        cands = [{"label": "none(512x512)", "predicted_cost_ratio": 1.0, "unsupported": "no kernel"}]
        for (label, ratio, ms), (pred, meas) in zip((("32x32", 0.2, 2.5), ("64x64", 0.3, 1.25)), ranks):
            cands.append({"label": label, "predicted_cost_ratio": ratio, "median_ms": ms, "ok": True,
                          "predicted_rank": pred, "measured_rank": meas})
        return {"problem": "S=1,f=8,fo=8,n=256,k=9", "pass": "fprop", "backend": backend, "ok": True,
                "none": {"median_ms": untiled_ms} if untiled_ms else {"unsupported": "no kernel"},
                "auto": {"median_ms": 1.25, "tile": {"fft_h": 64, "fft_w": 64}}, "candidates": cands[::-1]}

    def test_candidates_in_predicted_order_and_the_measured_order_where_it_differs(self):
        doc = {"rows": [self.row("fbfft", None, [(1, 2), (2, 1)]), self.row("cufft", 12.5, [(1, 1), (2, 2)])]}
        lines = report.gpu_candidates_table(doc)
        self.assertEqual(lines[2], "| `S=1,f=8,fo=8,n=256,k=9` | fbfft | 32×32 2.50 ms · 64×64 1.25 · none(512×512) – "
                                   "| 64×64 · 32×32 | 64×64 | 1.25 | – |")
        self.assertTrue(lines[3].endswith("| yes | 64×64 | 1.25 | 12.5 |"), lines[3])
        self.assertIn("The predicted order is the measured one on 1 of 2 lines; every plan's result verified", lines[-1])
        doc["rows"][1]["candidates"][0]["ok"] = False
        lines = report.gpu_candidates_table(doc)
        self.assertIn("64×64 1.25 ✗", lines[3])
        self.assertIn("NOT every plan's result verified against the reference (1 failed;", lines[-1])


class CpuAuto(unittest.TestCase):
    @staticmethod
    def row(fftw, tiled, im2col, auto, choice, tune_ms):
        plans = {"fftw": "untiled", "fftw_tiled": "tiled", "im2col": "gemm"}
        r = {"layer": "L3", "S": 2, "pass": "fprop", "auto_choice": choice, "tune_ms": tune_ms}
        for b, ms in (("fftw", fftw), ("fftw_tiled", tiled), ("im2col", im2col), ("auto", auto)):
            r[b] = {"best_ms": ms, "plan": plans.get(b)}
        fastest = min(fftw, tiled, im2col)
        r["ratio"] = auto / fastest
        r["choice_ratio"] = {"fftw": fftw, "fftw tile=auto": tiled, "im2col": im2col}[choice] / fastest
        return r

    def test_the_tiled_plan_counts_among_the_candidates_and_tuning_is_reported(self):
        doc = {"rows": [self.row(19.0, 12.0, 13.5, 13.6, "im2col", 700), self.row(20.0, 9.0, 13.0, 9.1,
                                                                                   "fftw tile=auto", 400)]}
        lines = report.cpu_auto_table(doc)
        self.assertTrue(lines[0].endswith("| auto / fastest | tune ms |"), lines[0])
        self.assertTrue(lines[2].endswith("| 13.6 | im2col | 1.13 | 700 |"), lines[2])
        self.assertIn("auto within 10% of the fastest candidate in 1 of 2 cases (worst 1.13); it chose the faster "
                      "backend in 1.", lines[-1])
        self.assertIn("Tuning a case without a cache took 400-700 ms (median 550 ms", lines[-1])

    def test_a_cached_plan_in_a_new_process_is_reported_beside_the_tuning(self):
        rows = [self.row(19.0, 12.0, 13.5, 13.6, "im2col", 700), self.row(20.0, 9.0, 13.0, 9.1, "fftw", 2100)]
        for r, ms, hit in zip(rows, (0.4, 2.5), (True, False)):
            r.update(cached_ms=ms, cached_from_cache=hit)
        lines = report.cpu_auto_table({"rows": rows})
        self.assertTrue(lines[0].endswith("| tune ms | cached ms |"), lines[0])
        self.assertTrue(lines[2].endswith("| 700 | 0.40 |"), lines[2])
        self.assertIn("Tuning a new case in a fresh process took 700-2100 ms (median 1400 ms, 1 over 2 s); the same "
                      "plan in a new process that read the caches the first wrote took 0.40-2.50 ms (median 1.45 ms), "
                      "auto's choice read from the cache in 1 of 2", lines[-1])


class AutoTune(unittest.TestCase):
    @staticmethod
    def run_of(budget, tune_ms, chosen, ms, cached_ms):
        return {"budget": budget, "tune_ms": tune_ms, "chosen": chosen, "chosen_ms": ms, "cached_ms": cached_ms}

    def test_budgets_side_by_side_and_the_slow_tunings_counted(self):
        doc = {"budgets": ["default", "0"], "rows": [
            {"layer": "large_21", "pass": "fprop", "tile": "none",
             "runs": [self.run_of("default", 1650, "fbfft", 0.91, 0.3), self.run_of("0", 2400, "fbfft", 0.9, 0.2)]},
            {"layer": "L2", "pass": "accgrad", "tile": "none",
             "runs": [self.run_of("default", 1400, "cufft", 1.2, 0.25), self.run_of("0", 1500, "fbfft", 1.1, 0.3)]}]}
        doc["rows"][0]["runs"][0].update(device_init_ms=180.0, cached_device_init_ms=150.0)
        lines = report.auto_tune_table(doc)
        self.assertIn("| tune ms, default budget | chose (ms), default budget | tune ms, no budget |", lines[0])
        self.assertTrue(lines[2].endswith("| 1650 | fbfft 0.91 | 2400 | fbfft 0.9 | 0.30 |"), lines[2])
        self.assertIn("default budget: 1400-1650 ms (median 1525 ms), 0 of 2 over 2 s", lines[-1])
        self.assertIn("no budget: 1500-2400 ms (median 1950 ms), 1 of 2 over 2 s", lines[-1])
        self.assertIn("a plan from the cache in a new process: 0.20-0.30 ms (median 0.28 ms)", lines[-1])
        self.assertIn("the same choice under every budget in 1 of 2 cases", lines[-1])
        self.assertIn("creating the device context, not counted above: 150-180 ms a process", lines[-1])


class ProductsTable(unittest.TestCase):
    @staticmethod
    def row(layer, fp32, tf32x3, fp32_alone, tf32x3_alone, floor):
        return {"layer": layer, "pass": "fprop", "m": 128, "n": 128, "k": 128, "batch": 144, "fp32_ms": fp32,
                "fp32_tflops": 1.0, "tf32x3_ms": tf32x3, "tf32x3_tflops": 2.0, "tf32x3_speedup": fp32 / tf32x3,
                "fp32_alone_ms": fp32_alone, "tf32x3_alone_ms": tf32x3_alone,
                "tf32x3_alone_speedup": fp32_alone / tf32x3_alone, "tf32x3_rel_diff": 1e-6, "dram_floor_ms": floor}

    def test_queued_and_alone_speedups_are_counted_apart(self):
        doc = {"copy_gbps": 2979.0, "rows": [self.row("L4", 0.066, 0.032, 0.070, 0.038, 0.019),
                                            self.row("L3", 0.200, 0.101, 0.205, 0.101, 0.072),
                                            self.row("L2", 0.200, 0.130, 0.205, 0.131, 0.116)]}
        lines = report.products_table(doc)
        self.assertIn("| 3xtf32 speedup | 3xtf32 speedup, each call alone |", lines[0])
        self.assertIn("| 2.06× | 1.84× |", lines[2])
        self.assertIn("At least 2× the fp32 CGEMM (the faster of 3xtf32 and the small-K kernel): 1 of 3 shapes "
                      "(1 with each call alone); 1 cannot reach 2×", lines[-1])

    def test_a_file_of_one_timing_keeps_its_columns(self):
        r = self.row("L4", 0.070, 0.038, 0.070, 0.038, 0.019)
        for key in ("fp32_alone_ms", "tf32x3_alone_ms", "tf32x3_alone_speedup"):
            del r[key]
        lines = report.products_table({"copy_gbps": 2979.0, "rows": [r]})
        self.assertNotIn("each call alone", "\n".join(lines))


class CgemmProbe(unittest.TestCase):
    def test_parses_a_row(self):
        (row,) = report.parse_cgemm_probe(PROBE_LINE + "\n")
        self.assertEqual((row["layer"], row["pass"], row["m"], row["batch"]), ("L3", "fprop", 128, 544))
        self.assertAlmostEqual(row["strided_ms"], 0.2068)
        self.assertEqual(row["lt_algorithms"], 4)

    def test_rejects_other_text(self):
        with self.assertRaises(ValueError):
            report.parse_cgemm_probe(PROBE_LINE + "\nsomething else\n")
        with self.assertRaises(ValueError):
            report.parse_cgemm_probe("")


if __name__ == "__main__":
    unittest.main()
