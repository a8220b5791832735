"""cgc.make_graphed_callables and torch.compile(backend="cgc"): the export,
the package cache, the refusals and their reasons (any machine with torch),
and on a GPU the graphed results against eager PyTorch. A GPU machine
without the compiler runs the GPU tests from a package cache filled on the
build machine (utils/gpu/gpu_python_check.sh prepare: this file's
fill_cache(), CGC_CACHE_DIR)."""

import json
import os
import sys
import tempfile
import unittest
import warnings
from pathlib import Path

import _util
from _util import cgc

try:
    import torch
except ImportError:
    torch = None

from cgc import _dynamo, _torch


def need_torch():
    if torch is None:
        raise unittest.SkipTest("no torch: torch is not installed")


def need_cuda():
    need_torch()
    if not torch.cuda.is_available():
        raise unittest.SkipTest("no GPU: torch sees no CUDA device")


def need_compiler():
    if not _util.have_compiler():
        raise unittest.SkipTest("no compiler: no cgc binary")


# The modules of these tests; fill_cache() graphs the same ones, seeded
# alike, so that a GPU machine finds their packages in the cache.
def small_mlp():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                               torch.nn.Linear(64, 16)).eval()


def small_mlp_input(device="cpu", batch=4):
    g = torch.Generator().manual_seed(4)
    return torch.randn(batch, 32, generator=g).to(device)


class TwoOutputs(torch.nn.Module if torch else object):
    """Returns a dict of a tuple and a tensor: the structure comes back."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)

    def forward(self, x, bias):
        y = torch.relu(self.norm(self.conv(x)))
        return {"pair": (y, y.mean((2, 3)) + bias), "sum": x.sum()}


def two_outputs_inputs(device="cpu"):
    g = torch.Generator().manual_seed(6)
    return (torch.randn(2, 3, 8, 8, generator=g).to(device),
            torch.randn(8, generator=g).to(device))


def fill_cache():
    """Compiles the packages the GPU tests use into cgc.cache_dir() (CPU
    export; the key does not depend on the device)."""
    paths = [
        cgc.make_graphed_callables(small_mlp(), (small_mlp_input(),),
                                   compile_only=True),
        cgc.make_graphed_callables(
            small_mlp(), (small_mlp_input(),), precision="bf16",
            compile_only=True),
        cgc.make_graphed_callables(TwoOutputs().eval(),
                                   two_outputs_inputs(), compile_only=True),
        cgc.make_graphed_callables(
            small_mlp(), (small_mlp_input(batch=2),), dims={"N": [1, 2, 4, 8]},
            dynamic_shapes=({0: "N"},), pad_to_bucket=True,
            compile_only=True)]
    torch._dynamo.reset()
    with torch.no_grad():
        compiled = torch.compile(small_mlp(), backend=_dynamo.backend,
                                 dynamic=False,
                                 options={"compile_only": True})
        compiled(small_mlp_input())
    for r in cgc.dynamo_report(clear=True):
        paths.append(r["package"])
    return paths


class CacheTest(unittest.TestCase):
    """Export, key and cache, without a GPU."""

    @classmethod
    def setUpClass(cls):
        need_torch()
        cls.tmp = tempfile.TemporaryDirectory(prefix="cgc-cache-test-")
        cls.saved = os.environ.get("CGC_CACHE_DIR")
        os.environ["CGC_CACHE_DIR"] = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        if cls.saved is None:
            os.environ.pop("CGC_CACHE_DIR", None)
        else:
            os.environ["CGC_CACHE_DIR"] = cls.saved
        cls.tmp.cleanup()

    def test_export_strips_bookkeeping(self):
        proto = _torch.export(small_mlp(), (small_mlp_input(),))
        self.assertEqual(proto.producer_version, "")
        self.assertTrue(proto.graph.node)
        for node in proto.graph.node:
            self.assertEqual(len(node.metadata_props), 0, node.name)
            self.assertEqual(node.doc_string, "")
        self.assertEqual(len(proto.graph.initializer), 4)

    def test_key_covers_weights_and_options(self):
        x = (small_mlp_input(),)
        a = _torch.package_key(_torch.export(small_mlp(), x), {"p": "fp32"})
        b = _torch.package_key(_torch.export(small_mlp(), x), {"p": "fp32"})
        self.assertEqual(a, b)  # same code, same seed: same key
        other = small_mlp()
        with torch.no_grad():
            other[0].weight[0, 0] += 1
        self.assertNotEqual(a, _torch.package_key(_torch.export(other, x),
                                                  {"p": "fp32"}))
        self.assertNotEqual(a, _torch.package_key(
            _torch.export(small_mlp(), x), {"p": "bf16"}))

    def test_cache_hit_miss_and_stale_compiler(self):
        need_compiler()
        first = cgc.make_graphed_callables(small_mlp(), (small_mlp_input(),),
                                           compile_only=True)
        self.assertEqual(first.parent, Path(self.tmp.name))
        stamp = first / "cgc-cache.json"
        made = stamp.stat().st_mtime_ns
        again = cgc.make_graphed_callables(small_mlp(), (small_mlp_input(),),
                                           compile_only=True)
        self.assertEqual(again, first)
        self.assertEqual(stamp.stat().st_mtime_ns, made)  # not compiled again
        # A package of another compiler binary is made again.
        record = json.loads(stamp.read_text())
        record["compiler"] = "another cgc"
        stamp.write_text(json.dumps(record))
        cgc.make_graphed_callables(small_mlp(), (small_mlp_input(),),
                                   compile_only=True)
        self.assertNotEqual(json.loads(stamp.read_text())["compiler"],
                            "another cgc")

    def test_missing_package_without_compiler(self):
        saved = os.environ.get("CGC_BINARY")
        os.environ["CGC_BINARY"] = "/nonexistent/cgc"
        try:
            with self.assertRaises(cgc.CompileError) as cm:
                cgc.make_graphed_callables(
                    torch.nn.Sequential(torch.nn.Linear(5, 3)).eval(),
                    (torch.randn(2, 5),), compile_only=True)
        finally:
            if saved is None:
                os.environ.pop("CGC_BINARY")
            else:
                os.environ["CGC_BINARY"] = saved
        self.assertIn("is not in the package cache", cm.exception.message)
        self.assertIn("/nonexistent/cgc", cm.exception.message)

    def test_refusals(self):
        mlp = small_mlp()
        x = small_mlp_input()
        with self.assertRaisesRegex(ValueError, "training mode.*eval"):
            cgc.make_graphed_callables(mlp.train(), (x,))
        mlp.eval()
        with self.assertRaisesRegex(ValueError, "dynamic_shapes"):
            cgc.make_graphed_callables(mlp, (x,), dims={"N": [1, 2]})
        with self.assertRaisesRegex(TypeError, r"sample_args\[1\] is a int"):
            cgc.make_graphed_callables(mlp, (x, 3))
        with self.assertRaisesRegex(TypeError, "tuple of tensors"):
            cgc.make_graphed_callables(mlp, x)
        with self.assertRaisesRegex(TypeError, "one argument tuple"):
            cgc.make_graphed_callables((mlp, mlp), (x,))
        with self.assertRaisesRegex(ValueError, "precision"):
            cgc.make_graphed_callables(mlp, (x,), precision="int3")

    def test_export_failure_names_the_module(self):
        class DataDependent(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:  # control flow on a value
                    return x * 2
                return x
        with self.assertRaises(cgc.CompileError) as cm:
            cgc.make_graphed_callables(DataDependent().eval(),
                                       (torch.ones(3),), compile_only=True)
        self.assertIn("cannot export DataDependent", cm.exception.message)


class DeviceConstantTest(unittest.TestCase):
    """The CPU copy a CUDA module is exported from: TorchDynamo's graphs
    name their device in ops, which the copy must move too (no GPU needed:
    the graph is only rewritten and printed, never run on CUDA)."""

    def setUp(self):
        if torch is None:
            self.skipTest("no torch")

    def test_cuda_devices_in_a_graph_become_the_cpu(self):
        from cgc import _torch as ct
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        cuda = torch.device("cuda", 0)
        r = graph.call_function(torch.arange, (4,), {"device": cuda})
        s = graph.call_function(torch.zeros, (4,), {"device": "cuda:0"})
        t = graph.call_method("to", (x, cuda))
        a = graph.call_function(torch.add, (r, s))
        graph.output(graph.call_function(torch.add, (a, t)))
        gm = torch.fx.GraphModule(torch.nn.Module(), graph)
        self.assertIn("cuda", gm.code)
        ct._devices_to_cpu(torch, gm)
        self.assertNotIn("cuda", gm.code)
        self.assertEqual(gm(torch.ones(4)).tolist(), [1.0, 2.0, 3.0, 4.0])

    def test_a_cpu_module_is_exported_where_it_is(self):
        from cgc import _torch as ct
        self.assertIsNone(ct._on_cpu(torch, torch.nn.Linear(2, 2),
                                     (torch.ones(1, 2),)))


class StripTest(unittest.TestCase):
    """What the cache key leaves out (needs onnx only, no torch)."""

    def test_bookkeeping_goes_functions_included(self):
        import onnx
        from onnx import helper
        relu = helper.make_node("Relu", ["a"], ["b"], doc_string="at f.py:3")
        relu.metadata_props.add(key="pkg.torch.onnx.stack_trace", value="f.py")
        function = helper.make_function("local", "F", ["a"], ["b"], [relu],
                                        [helper.make_opsetid("", 18)])
        call = helper.make_node("F", ["x"], ["y"], domain="local",
                                doc_string="at g.py:7")
        value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
        graph = helper.make_graph(
            [call], "g", [value],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
        model = helper.make_model(graph, functions=[function], opset_imports=[
            helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
        model.producer_version = "2.11.0+cu130"
        key_before = _torch.package_key(model, {})
        _torch._strip_bookkeeping(model)
        self.assertEqual(model.producer_version, "")
        self.assertEqual(model.graph.node[0].doc_string, "")
        self.assertEqual(model.functions[0].node[0].doc_string, "")
        self.assertEqual(len(model.functions[0].node[0].metadata_props), 0)
        self.assertNotEqual(_torch.package_key(model, {}), key_before)
        # What it computes stays.
        self.assertEqual(model.functions[0].node[0].op_type, "Relu")
        onnx.checker.check_model(model)


class DynamoTest(unittest.TestCase):
    """torch.compile(backend=...) refusals, reported; no GPU needed."""

    def setUp(self):
        need_torch()
        torch._dynamo.reset()
        cgc.dynamo_report(clear=True)

    def compile_and_call(self, module, *args, options=None, grad=False):
        compiled = torch.compile(module, backend=_dynamo.backend,
                                 dynamic=False, options=options)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with torch.set_grad_enabled(grad):
                out = compiled(*args)
        ours = [str(w.message) for w in caught
                if issubclass(w.category, cgc.FallbackWarning)]
        return out, ours, cgc.dynamo_report(clear=True)

    def test_cpu_inputs_run_in_torch_with_the_reason(self):
        mlp, x = small_mlp(), small_mlp_input()
        out, warned, report = self.compile_and_call(mlp, x)
        self.assertTrue(torch.equal(out, mlp(x).detach()))
        self.assertEqual([r["runner"] for r in report], ["torch"])
        self.assertIn("no input is a CUDA tensor", report[0]["reason"])
        self.assertEqual(len(warned), 1)
        self.assertIn("runs in torch: no input is a CUDA tensor", warned[0])

    def test_grad_mode_is_refused(self):
        mlp, x = small_mlp(), small_mlp_input()
        _, _, report = self.compile_and_call(
            mlp, x, grad=True, options={"compile_only": True})
        self.assertIn("inference only", report[0]["reason"])

    def test_in_place_update_of_an_input_is_refused(self):
        class InPlace(torch.nn.Module):
            def forward(self, x):
                x[0].add_(1)  # through a view of the input
                return x * 2
        _, _, report = self.compile_and_call(
            InPlace(), torch.ones(3), options={"compile_only": True})
        self.assertIn("in place (add_)", report[0]["reason"])

    def test_in_place_update_of_an_intermediate_is_a_value(self):
        need_compiler()

        class Residual(torch.nn.Module):
            def forward(self, x):
                y = x * 2
                y += x  # as ResNet's blocks do
                return y.relu_()
        _, _, report = self.compile_and_call(
            Residual(), torch.ones(3), options={"compile_only": True})
        self.assertIsNotNone(report[0]["package"], report)

    def test_strict_raises(self):
        with self.assertRaisesRegex(Exception, "runs in torch: no input is a "
                                    "CUDA tensor"):
            self.compile_and_call(small_mlp(), small_mlp_input(),
                                  options={"strict": True})

    def test_unknown_option(self):
        with self.assertRaisesRegex(Exception, "unknown cgc backend option"):
            self.compile_and_call(small_mlp(), small_mlp_input(),
                                  options={"precisoin": "bf16"})

    def test_compile_only_fills_the_cache(self):
        need_compiler()
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.environ.get("CGC_CACHE_DIR")
            os.environ["CGC_CACHE_DIR"] = tmp
            try:
                mlp, x = small_mlp(), small_mlp_input()
                out, warned, report = self.compile_and_call(
                    mlp, x, options={"compile_only": True})
            finally:
                if saved is None:
                    os.environ.pop("CGC_CACHE_DIR")
                else:
                    os.environ["CGC_CACHE_DIR"] = saved
            self.assertEqual(warned, [])  # asked for: not a fallback
            self.assertTrue(torch.equal(out, mlp(x).detach()))
            self.assertTrue(Path(report[0]["package"], "libmodel.so")
                            .is_file())
            self.assertIn("compile_only", report[0]["reason"])

    def test_entry_point(self):
        # The backend torch finds by name, once the package is installed.
        if sys.version_info < (3, 11):
            self.skipTest("no tomllib before Python 3.11")
        import tomllib
        project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml")
                                .read_text())
        self.assertEqual(project["project"]["entry-points"]
                         ["torch_dynamo_backends"]["cgc"],
                         "cgc._dynamo:backend")


def rel_l2(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return float((a - b).norm() / max(float(b.norm()), 1e-30))


class GraphedGpuTest(unittest.TestCase):
    """The graphed modules on a GPU against eager PyTorch."""

    @classmethod
    def setUpClass(cls):
        need_cuda()
        _util.gpu_model("tiny_mlp").close()  # skips without a CUDA driver

    def test_make_graphed_callables(self):
        mlp = small_mlp().cuda()
        x = small_mlp_input("cuda")
        graphed = cgc.make_graphed_callables(mlp, (x,))
        self.assertIsInstance(graphed, torch.nn.Module)
        self.assertEqual(graphed.model.call_path, "native")
        with torch.no_grad():
            for seed in range(3):
                xs = torch.randn(4, 32, device="cuda",
                                 generator=torch.Generator("cuda")
                                 .manual_seed(seed))
                self.assertLess(rel_l2(graphed(xs), mlp(xs)), 1e-5)
        with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                    "inference only"):
            graphed(x.clone().requires_grad_())

    def test_structured_outputs(self):
        module = TwoOutputs().eval().cuda()
        x, bias = two_outputs_inputs("cuda")
        graphed = cgc.make_graphed_callables(module, (x, bias))
        with torch.no_grad():
            got, ref = graphed(x * 0.5, bias), module(x * 0.5, bias)
        self.assertEqual(sorted(got), ["pair", "sum"])
        self.assertIsInstance(got["pair"], tuple)
        self.assertLess(rel_l2(got["pair"][0], ref["pair"][0]), 1e-5)
        self.assertLess(rel_l2(got["pair"][1], ref["pair"][1]), 1e-5)
        self.assertLess(rel_l2(got["sum"], ref["sum"]), 1e-5)

    def test_bf16(self):
        mlp = small_mlp().cuda()
        x = small_mlp_input("cuda")
        graphed = cgc.make_graphed_callables(mlp, (x,), precision="bf16")
        with torch.no_grad():
            self.assertLess(rel_l2(graphed(x), mlp(x)), cgc.BOUNDS["bf16"])

    def test_buckets(self):
        mlp = small_mlp().cuda()
        graphed = cgc.make_graphed_callables(
            mlp, (small_mlp_input("cuda", batch=2),), dims={"N": [1, 2, 4, 8]},
            dynamic_shapes=({0: "N"},), pad_to_bucket=True)
        self.assertEqual(graphed.model.buckets, (1, 2, 4, 8))
        with torch.no_grad():
            for n in (1, 3, 8):
                x = small_mlp_input("cuda", batch=n)
                y = graphed(x)
                self.assertEqual(tuple(y.shape), (n, 16))
                self.assertLess(rel_l2(y, mlp(x)), 1e-5)

    def test_torch_compile_backend(self):
        torch._dynamo.reset()
        cgc.dynamo_report(clear=True)
        mlp = small_mlp().cuda()
        x = small_mlp_input("cuda")
        # By name, as an installed cgc registers it (the entry point); from
        # the source tree the test registers it.
        from torch._dynamo.backends.registry import list_backends
        if "cgc" not in list_backends(exclude_tags=()):
            torch._dynamo.register_backend(name="cgc")(_dynamo.backend)
        compiled = torch.compile(mlp, backend="cgc", dynamic=False)
        with torch.no_grad():
            y = compiled(x)
            self.assertLess(rel_l2(y, mlp(x)), 1e-5)
            y2 = compiled(x * 2)
            self.assertLess(rel_l2(y2, mlp(x * 2)), 1e-5)
        report = cgc.dynamo_report(clear=True)
        self.assertEqual([r["runner"] for r in report], ["cgc"], report)
        # Frozen weights: a change afterwards is refused, not ignored.
        with torch.no_grad():
            mlp[0].weight.mul_(2)
            with self.assertRaisesRegex(Exception, "changed after"):
                compiled(x)
        torch._dynamo.reset()


if __name__ == "__main__":
    if sys.argv[1:] == ["--fill-cache"]:
        for p in fill_cache():
            print(p)
    else:
        unittest.main()
