"""The benchmark's pure-Python parts, without torch or a GPU: model selection,
the accuracy check and its references, the deadline alarm, compile.py's
carry groups, and report.py's tables and merging (test/Tools/bench.test runs
these with the build's Python)."""

import copy
import json
import math
import os
import sys
import tempfile
import time
import unittest

import numpy as np

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(os.path.dirname(BENCH), "python"))

import ab  # noqa: E402
import models  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402


def timing(us, **extra):
    return dict({"status": "ok", "median_us": us, "p99_us": us * 1.1,
                 "spread": 0.01}, **extra)


def results_one_run():
    """A results.json as bench/run.py writes it: two models, fp32 and
    bf16, one FAILED row, one peer left out for time."""
    def entry(cgc_us, bound, **peers):
        e = {"bound": bound, "reference": "onnxruntime fp32",
             "cgc": timing(cgc_us, rel_l2=1e-3, max_abs=2e-2, check_ok=True,
                           kernels=4, graph_nodes=9, launches=1)}
        e.update(peers)
        return e
    bert = {"family": "bert", "batch": 1, "description": "BERT",
            "floor": {"bytes": 4e6, "flops": 1e8, "weight_bytes": 3e6,
                      "io_bytes": 1e6},
            "precisions": {
                "fp32": entry(240, 1e-4, eager=timing(1200, rel_l2=0.0),
                              cuda_graph=timing(400, rel_l2=0.0),
                              compile_ro=timing(380, rel_l2=1e-7,
                                                compile_s=9)),
                "bf16": entry(100, 1e-2, eager=timing(900, rel_l2=8e-3),
                              cuda_graph=timing(250, rel_l2=8e-3),
                              compile_ma={"status": "not run",
                                          "error": report.TIME_BUDGET +
                                          ": 20 s left"})}}
    bad = copy.deepcopy(bert["precisions"]["bf16"])
    bad["cgc"].update(status="FAILED", rel_l2=0.05, check_ok=False)
    resnet = {"family": "resnet50", "batch": 8, "description": "ResNet-50",
              "precisions": {"bf16": bad}}
    return {"env": {"gpu": "H200", "date": "d1"}, "command": "run.py",
            "settings": {"round_seconds": 0.5, "tolerance_rel_l2": 1e-4},
            "ceilings": {"copy_bytes_per_s": 4e12, "fp32_flops_per_s": 5e13,
                         "bf16_flops_per_s": 7e14},
            "models": {"bert_b1": bert, "resnet50_b8": resnet}}


class ModelsTest(unittest.TestCase):
    def test_select(self):
        self.assertEqual(models.select(), list(models.SPECS))
        self.assertEqual(models.select(families_arg="resnet50,vit"),
                         ["resnet50_b1", "resnet50_b8", "vit_b1", "vit_b8"])
        self.assertEqual(models.select("bert_b8,mlp_b1", "bert"),
                         ["bert_b8"])
        with self.assertRaises(ValueError):
            models.select(families_arg="resnet")
        with self.assertRaises(ValueError):
            models.select("vit_b2")

    def test_new_families_inputs(self):
        for name in ("resnet50_b8", "vit_b1"):
            feeds = models.make_inputs(name)
            self.assertEqual(feeds["image"].shape[0],
                             models.SPECS[name][1])
            self.assertEqual(feeds["image"].dtype, np.float32)
        # Families added at the end keep the old families' inputs.
        self.assertEqual(models.FAMILIES[:5], ["mlp", "gpt", "bert",
                                               "squeezenet", "mobilenet"])


class CompareTest(unittest.TestCase):
    def test_bound_and_errors(self):
        ref = np.linspace(1, 2, 100, dtype=np.float32)
        c = run.compare(ref * (1 + 5e-3), ref, 1e-2)
        self.assertTrue(c["ok"])
        self.assertAlmostEqual(c["rel_l2"], 5e-3, places=6)
        self.assertFalse(run.compare(ref * (1 + 5e-3), ref, 2e-3)["ok"])
        self.assertIn("shape", run.compare(ref[:5], ref, 1)["why"])

    def test_overflow_is_reported(self):
        ref = np.ones(8, np.float32)
        got = ref.copy()
        got[3] = np.inf
        c = run.compare(got, ref, math.inf)
        self.assertFalse(c["ok"])
        self.assertIn("1 inf: overflow", c["why"])
        # inf where the reference has inf too is no error
        ref2 = ref.copy()
        ref2[3] = np.inf
        self.assertTrue(run.compare(got, ref2, 1e-6)["ok"])

    def test_worst(self):
        ref = [np.ones(4), np.ones(3)]
        good = run.compare_all([np.ones(4), np.ones(3) * 1.001], ref, 1e-2)
        bad = run.compare_all([np.ones(4) * 1.1, np.ones(3)], ref, 1e-2)
        self.assertTrue(good["ok"])
        self.assertFalse(bad["ok"])
        self.assertIs(run.worst_check([good, bad]), bad)
        self.assertFalse(run.compare_all([np.ones(4)], ref, 1)["ok"])

    def test_references(self):
        eager, ort = [["e0"], ["e1"]], [["o0"], ["o1"]]
        refs = run.References(eager, ort)
        self.assertEqual(refs.for_precision("fp32"),
                         ("torch eager fp32", eager))
        self.assertEqual(refs.for_precision("bf16"),
                         ("onnxruntime fp32", ort))
        self.assertEqual(run.References(eager, None).for_precision("tf32"),
                         ("torch eager fp32", eager))
        self.assertEqual(run.BOUNDS, {"fp32": 1e-4, "tf32": 2e-3,
                                      "fp16": 2e-3, "bf16": 1e-2})

    def test_ort_refs_file(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "refs"))
            np.savez(os.path.join(d, "refs", "m.npz"),
                     seed0_0=np.zeros(2), seed1_0=np.ones(2))
            refs = run.load_ort_refs(d, "m", 1)
            self.assertEqual(refs[1][0].tolist(), [1, 1])
            self.assertIsNone(run.load_ort_refs(d, "m", 2))
            self.assertIsNone(run.load_ort_refs(d, "other", 1))

    def test_alarm(self):
        t = time.monotonic()
        with self.assertRaises(run.DeadlinePassed):
            with run.alarm_at(1.0):
                time.sleep(5)
        self.assertLess(time.monotonic() - t, 3)
        with run.alarm_at(5.0):  # cancelled on leaving
            pass
        time.sleep(0.01)


class GroupsTest(unittest.TestCase):
    def setUp(self):
        import compile as bench_compile
        self.c = bench_compile

        class Parser:
            def error(self, message):
                raise ValueError(message)
        self.parser = Parser()

    def test_groups(self):
        names = models.select(families_arg="mlp,bert,resnet50")
        self.assertEqual(self.c.parse_groups(self.parser, None, names),
                         [["mlp", "bert", "resnet50"]])
        self.assertEqual(self.c.parse_groups(
            self.parser, "mlp,gpt,bert;resnet50,vit", names),
            [["mlp", "bert"], ["resnet50"]])
        for bad in ("mlp;bert", "mlp,bert;resnet50;bert", "mlp,bert;resnet"):
            with self.assertRaises(ValueError):
                self.c.parse_groups(self.parser, bad, names)
        self.assertEqual(self.c.package_name("vit_b8", "bf16"),
                         "vit_b8.bf16")


class ReportTest(unittest.TestCase):
    def render(self, results):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "b.md")
            report.write_markdown(results, path)
            with open(path) as f:
                return f.read()

    def test_tables_per_precision(self):
        md = self.render(results_one_run())
        self.assertIn("## fp32", md)
        self.assertIn("## bf16", md)
        # cgc ÷ peer: 240 / 400 on fp32's torch.cuda.graph
        self.assertIn("0.60×", md)
        self.assertIn("cgc ÷ max-autotune", md)
        self.assertIn("**FAILED**", md)
        self.assertIn("ResNet-50 | 8 | **FAILED**", md)
        # the errors: cgc's (max abs) and eager's own
        self.assertIn("1.0e-03 (2.0e-02) | 8.0e-03", md)
        self.assertIn("torch.compile max-autotune not run (%s) on 2 row(s): "
                      "bert_b1 bf16, resnet50_b8 bf16" % report.TIME_BUDGET,
                      md)
        self.assertIn("resnet50_b8 bf16: cgc FAILED: relative L2 error 0.05 "
                      "(max abs 0.02) against onnxruntime fp32, bound 0.01",
                      md)
        self.assertIn("set_float32_matmul_precision(\"high\")", md)
        self.assertIn("batch-1 rows at most 0.5× torch.cuda.graph: 1 of 1",
                      md)
        # the floors: fp32 by its FLOPs (1e8 / 5e13), bf16 by its bytes,
        # the weights at 2 bytes each ((3e6 / 2 + 1e6) / 4e12)
        self.assertIn("| 2.0 | 1% |", md)
        self.assertIn("| 0.6 | 1% |", md)

    def test_python_call_section(self):
        results = results_one_run()
        fp32 = results["models"]["bert_b1"]["precisions"]["fp32"]
        fp32["cgc"].update(call_path="native",
                           python_call=timing(264),
                           python_host=timing(11.5))
        fp32["cuda_graph"]["host"] = timing(14.0)
        md = self.render(results)
        self.assertIn("## Python call", md)
        # 264 / 240 of the C runtime, the host times beside it
        self.assertIn("| BERT | 1 | fp32 | native | 240.0 | 264.0 | 1.10x | "
                      "11.5 | 14.0 |", md)

    def test_torch_entry_rows(self):
        rows, notes = report.torch_entry_rows([
            {"model": "mlp_b1", "graphed_rel_l2": 3e-7, "compile_rel_l2": 3e-7,
             "compile_graphs": [{"runner": "cgc"}, {"runner": "torch"}],
             "latency_us": {"eager": 370, "cgc_graphed": 37.7,
                            "cgc_compile": 72.2, "cuda_graph": 79.7}},
            {"model": "llama", "error": "CompileError: not in the cache",
             "date": "d"}])
        self.assertEqual(rows[2], "| mlp_b1 | 3.0e-07 | 3.0e-07 | 1/2 | 370.0 "
                         "| 37.7 | 72.2 | 79.7 | — |")
        self.assertIn("not run: see below", rows[3])
        self.assertEqual(notes, ["- llama (d): CompileError: not in the "
                                 "cache"])

    def test_old_results_read_as_fp32(self):
        old = {"env": {}, "settings": {"tolerance_rel_l2": 1e-4},
               "models": {"mlp_b1": {"batch": 1, "description": "MLP",
                                     "cgc": timing(30, rel_l2=1e-7),
                                     "cuda_graph": timing(90)}}}
        norm = report.normalize(old)
        e = norm["models"]["mlp_b1"]["precisions"]["fp32"]
        self.assertEqual(e["cgc"]["median_us"], 30)
        self.assertEqual(e["bound"], 1e-4)
        self.assertIn("| MLP | 1 | **30.0** (33.0) | 90.0 (99.0) | 0.33× |",
                      self.render(old))

    def test_merge(self):
        first = results_one_run()
        second = results_one_run()
        second["env"]["date"] = "d2"
        bf16 = second["models"]["bert_b1"]["precisions"]["bf16"]
        bf16["compile_ma"] = timing(200, compile_s=80, rel_l2=8e-3)
        bf16["eager"] = {"status": "error", "error": "boom"}
        bf16["cgc"]["median_us"] = 90
        del second["models"]["resnet50_b8"]
        merged = report.merge([first, second])
        e = merged["models"]["bert_b1"]["precisions"]["bf16"]
        self.assertEqual(len(merged["runs"]), 2)
        self.assertEqual(e["compile_ma"]["median_us"], 200)  # new, ran
        self.assertEqual(e["eager"]["median_us"], 900)       # old kept
        self.assertEqual(e["cgc"]["median_us"], 90)
        self.assertEqual(e["run"], 1)
        self.assertIn("resnet50_b8", merged["models"])
        md = self.render(merged)
        self.assertIn("| run 2 | d2", md)
        self.assertIn("| 1,2 |", md)
        # a merged file renders the same again
        self.assertEqual(self.render(json.loads(json.dumps(merged))), md)

    def test_skipped_row(self):
        res = results_one_run()
        res["models"]["bert_b1"]["precisions"]["fp32"] = {
            "skipped": report.TIME_BUDGET + ": 3 s left"}
        md = self.render(res)
        self.assertIn("- bert_b1 fp32: not run: time budget", md)
        self.assertIn("skipped", report.summary_table(res))


if __name__ == "__main__":
    unittest.main()


class AbTest(unittest.TestCase):
    """bench/ab.py: variants from separate calls compared on each call's
    torch.cuda.graph scale."""

    @staticmethod
    def results(cgc_us, graph_us, status="ok"):
        return {"models": {"resnet50_b8": {"precisions": {"bf16": {
            "cgc": timing(cgc_us, rel_l2=2e-3) if status == "ok"
            else {"status": status},
            "cuda_graph": timing(graph_us)}}},
            "bert_b1": {"precisions": {"bf16": {
                "cgc": timing(100.0), "cuda_graph": timing(150.0)}}}}}

    def test_ratio_against_the_first_variant(self):
        # B's machine is twice as slow: its cgc time is higher, but on its
        # own torch.cuda.graph scale it is 20% faster than A.
        a = self.results(1000.0, 1000.0)
        b = self.results(1600.0, 2000.0)
        rows = ab.compare([("never", a), ("auto", b)])
        resnet = [r for r in rows if r["model"] == "resnet50_b8"][0]
        self.assertAlmostEqual(resnet["variants"][0]["ratio"], 1.0)
        self.assertAlmostEqual(resnet["variants"][1]["ratio"], 0.8)
        self.assertAlmostEqual(resnet["variants"][1]["against_first"], 0.8)
        text = ab.markdown(rows, ["never", "auto"])
        self.assertIn("| resnet50_b8 | bf16 | 1000.0 | 1000.0 | 1.000 | "
                      "2.0e-03 | 1600.0 | 2000.0 | 0.800 | 2.0e-03 | 0.800 |",
                      text)

    def test_failed_variant_says_why(self):
        rows = ab.compare([("never", self.results(1000.0, 1000.0)),
                           ("auto", self.results(0, 1000.0, "FAILED"))])
        resnet = [r for r in rows if r["model"] == "resnet50_b8"][0]
        self.assertIsNone(resnet["variants"][1]["ratio"])
        self.assertNotIn("against_first", resnet["variants"][1])
        self.assertIn("cgc FAILED", ab.markdown(rows, ["never", "auto"]))

    def test_only_shared_rows_and_bad_arguments(self):
        a = self.results(1000.0, 1000.0)
        b = {"models": {"bert_b1": a["models"]["bert_b1"]}}
        rows = ab.compare([("a", a), ("b", b)])
        self.assertEqual([(r["model"], r["precision"]) for r in rows],
                         [("bert_b1", "bf16")])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump(a, f)
            with self.assertRaises(SystemExit):
                ab.main(["only=" + path])
            with self.assertRaises(SystemExit):
                ab.main(["no-label-" + path, "b=" + path])
