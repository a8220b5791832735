"""cgc.compile: the compile path and its errors (no GPU needed)."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path

from _util import BAD_MATMUL, EAGER, TINY_MLP, cgc, have_compiler

SYMBOLIC = """<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x) => (float[N,4] y) {
  y = Relu(x)
}
"""


@unittest.skipUnless(have_compiler(), "no compiler: no cgc binary "
                     "(build/bin/cgc, CGC_BINARY or PATH)")
class CompileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cgc-compile-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def compile(self, *args, **kwargs):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            result = cgc.compile(*args, **kwargs)
        return result, err.getvalue()

    def test_package_files_and_info(self):
        out, log = self.compile(TINY_MLP, self.dir / "pkg")
        self.assertEqual(out, self.dir / "pkg")
        for name in ("libmodel.so", "kernels.cubin", "weights.bin",
                     "metadata.json", "model.cpp"):
            self.assertTrue((out / name).is_file(), name)
        info = cgc.package_info(out)
        self.assertEqual([(t.name, t.dtype, t.shape) for t in info["inputs"]],
                         [("x", "float32", (1, 64))])
        self.assertEqual([(t.name, t.dtype, t.shape, t.bytes)
                          for t in info["outputs"]],
                         [("y", "float32", (1, 64), 256)])
        # Four fused kernels (--explain's count) in two distinct functions.
        self.assertEqual(info["kernels"], 4)
        self.assertEqual(info["kernel_functions"], 2)

    def test_progress_on_stderr(self):
        _, log = self.compile(TINY_MLP, self.dir / "pkg")
        # stderr is no terminal here: one line per stage, then a summary
        self.assertIn("cgc: model.onnx: importing and optimizing", log)
        self.assertIn("cgc: model.onnx: 4 kernels, 1 graph(s) of 4 nodes", log)
        self.assertTrue(log.endswith("s\n"), log)

    def test_progress_off(self):
        _, log = self.compile(TINY_MLP, self.dir / "pkg", progress=False)
        self.assertEqual(log, "")

    def test_sources_only(self):
        out, _ = self.compile(TINY_MLP, self.dir / "pkg", library=False,
                              progress=False)
        self.assertTrue((out / "model.cpp").is_file())
        self.assertFalse((out / "libmodel.so").exists())

    def test_dims_and_shapes(self):
        model = self.dir / "sym.onnxtxt"
        model.write_text(SYMBOLIC)
        out, _ = self.compile(model, self.dir / "a", dims={"N": 3},
                              library=False, progress=False)
        self.assertEqual(cgc.package_info(out)["inputs"][0].shape, (3, 4))
        out, _ = self.compile(model, self.dir / "b", shapes={"x": (5, 4)},
                              library=False, progress=False)
        self.assertEqual(cgc.package_info(out)["outputs"][0].shape, (5, 4))

    def test_shape_buckets(self):
        import json
        model = self.dir / "sym.onnxtxt"
        model.write_text(SYMBOLIC)
        out, _ = self.compile(model, self.dir / "buckets", dims={"N": [4, 1, 2]},
                              pad_to_bucket=True, library=False,
                              progress=False)
        meta = json.loads((out / "metadata.json").read_text())
        self.assertEqual([b["value"] for b in meta["buckets"]], [1, 2, 4])
        self.assertTrue(meta["pad_to_bucket"])
        with self.assertRaises(ValueError):
            self.compile(model, self.dir / "c", dims={"N": []}, progress=False)

    def test_cublaslt_policy(self):
        # The compiler takes the policy (always: the MLP's products are
        # cuBLASLt nodes; never: none, so the package needs no cuBLASLt); a
        # value it does not know is refused before the compiler runs.
        import json

        def library_nodes(policy):
            out, _ = self.compile(TINY_MLP, self.dir / policy,
                                  cublaslt=policy, library=False,
                                  progress=False)
            meta = json.loads((out / "metadata.json").read_text())
            return json.dumps(meta["cgraph"]).count("cublaslt_matmul_node")

        self.assertGreater(library_nodes("always"), 0)
        self.assertEqual(library_nodes("never"), 0)
        with self.assertRaises(ValueError) as cm:
            self.compile(TINY_MLP, self.dir / "bad", cublaslt="sometimes",
                         progress=False)
        self.assertIn("cublaslt must be one of auto, always, never",
                      str(cm.exception))

    def cudnn_conv_nodes(self, model, out, **options):
        """The cudnn_conv_node entries of `model` compiled (sources only)
        into `out` with `options`."""
        import json
        out, _ = self.compile(model, out, library=False, progress=False,
                              **options)
        meta = json.loads((out / "metadata.json").read_text())
        return [n for g in meta["cgraph"]["graphs"] for n in g["nodes"]
                if n["op"] == "cudnn_conv_node"]

    def test_channels_last_policy(self):
        # channels_last reaches the compiler: with cuDNN taking the
        # convolution, "always" stores it NHWC (the node says so), "never"
        # keeps NCHW; a value it does not know is refused before it runs.
        model = self.dir / "conv.onnxtxt"
        model.write_text(
            '<ir_version: 8, opset_import: ["" : 17]>\n'
            "g (float[1,2,3,3] x) => (float[1,2,3,3] y)\n"
            "  <float[2,2,1,1] w = {1.0, 2.0, 3.0, 4.0}> {\n"
            "  c = Conv(x, w)\n  y = Relu(c)\n}\n")

        def channels_last_nodes(policy):
            return [n.get("channels_last", False) for n in
                    self.cudnn_conv_nodes(model, self.dir / policy,
                                          cudnn="always",
                                          channels_last=policy)]

        self.assertEqual(channels_last_nodes("always"), [True])
        self.assertEqual(channels_last_nodes("never"), [False])
        with self.assertRaises(ValueError) as cm:
            self.compile(model, self.dir / "bad", channels_last="sometimes",
                         progress=False)
        self.assertIn("channels_last must be one of auto, always, never",
                      str(cm.exception))

    def test_narrow_storage_policy(self):
        # narrow_storage reaches the compiler: with cuDNN taking the
        # convolution (its input a ReLU's output, which can be stored
        # narrow), bf16 gives cuDNN bf16 tensors by default and "never"
        # keeps f32; fp16 convolutions only under "always". A value it does
        # not know is refused before it runs.
        model = self.dir / "relu_conv.onnxtxt"
        model.write_text(
            '<ir_version: 8, opset_import: ["" : 17]>\n'
            "g (float[1,2,3,3] x) => (float[1,2,3,3] y)\n"
            "  <float[2,2,1,1] w = {1.0, 2.0, 3.0, 4.0}> {\n"
            "  r = Relu(x)\n  y = Conv(r, w)\n}\n")

        def conv_node_types(precision, policy):
            out = self.dir / ("%s-%s" % (precision, policy))
            return [n["type"] for n in
                    self.cudnn_conv_nodes(model, out, precision=precision,
                                          cudnn="always",
                                          narrow_storage=policy)]

        self.assertEqual(conv_node_types("bf16", None), ["bf16"])
        self.assertEqual(conv_node_types("bf16", "never"), ["f32"])
        self.assertEqual(conv_node_types("fp16", None), ["f32"])
        self.assertEqual(conv_node_types("fp16", "always"), ["f16"])
        with self.assertRaises(ValueError) as cm:
            self.compile(model, self.dir / "bad", narrow_storage="sometimes",
                         progress=False)
        self.assertIn("narrow_storage must be one of auto, always, never",
                      str(cm.exception))

    def test_training_step(self):
        # train= compiles the step: the label is an input, the loss the
        # output, and the optimizer's settings reach the compiler.
        import json
        out, _ = self.compile(TINY_MLP, self.dir / "train", library=False,
                              progress=False, train=dict(
                                  loss="mse", optimizer={
                                      "name": "adamw", "lr": 1e-3,
                                      "betas": (0.9, 0.99)}))
        meta = json.loads((out / "metadata.json").read_text())
        self.assertEqual([i["name"] for i in meta["inputs"]], ["x", "label"])
        self.assertEqual([o["name"] for o in meta["outputs"]], ["loss"])
        self.assertIn("step", [t["name"] for t in meta["state"]])
        with self.assertRaises(ValueError) as cm:
            self.compile(TINY_MLP, self.dir / "bad", train={"lr": 1})
        self.assertIn("train has unknown key(s) lr", str(cm.exception))
        with self.assertRaises(cgc.CompileError) as cm:
            self.compile(TINY_MLP, self.dir / "bad", progress=False,
                         train=dict(optimizer="adam"))
        self.assertIn("optimizer 'adam' is none of sgd, adamw, none",
                      cm.exception.message)

    def test_data_dependent_output_info(self):
        out, _ = self.compile(EAGER, self.dir / "pkg", library=False,
                              progress=False)
        nz = cgc.package_info(out)["outputs"][1]
        self.assertEqual((nz.name, nz.dtype, nz.shape), ("nz", "int64", (2, None)))
        self.assertTrue(nz.data_dependent)

    def test_compiler_diagnostic_is_raised(self):
        with self.assertRaises(cgc.CompileError) as cm:
            self.compile(BAD_MATMUL, self.dir / "pkg")
        e = cm.exception
        self.assertIn("matmul contraction dims differ: 3 vs 4", e.message)
        self.assertIn("bad_matmul.onnxtxt: error:", str(e))
        self.assertEqual(e.returncode, 1)
        self.assertIn(str(BAD_MATMUL), e.command)

    def test_missing_model(self):
        with self.assertRaises(cgc.CompileError) as cm:
            self.compile(self.dir / "nope.onnx", self.dir / "pkg",
                         progress=False)
        self.assertIn("nope.onnx", cm.exception.message)

    def test_conflicting_shape(self):
        with self.assertRaises(cgc.CompileError) as cm:
            self.compile(TINY_MLP, self.dir / "pkg", shapes={"x": (2, 64)},
                         progress=False)
        self.assertIn("--shape x sets dim 0 to 2 but the model fixes it to 1",
                      cm.exception.message)

    def test_argument_errors(self):
        with self.assertRaises(ValueError):
            cgc.compile(TINY_MLP, self.dir / "pkg", precision="int3")
        with self.assertRaises(TypeError):
            cgc.compile(TINY_MLP, self.dir / "pkg", dims={"N": "four"})
        with self.assertRaises(ValueError):
            cgc.compile(TINY_MLP, self.dir / "pkg", shapes={"x": (1, -64)})

    def test_reduced_precision(self):
        # The products run on tensor cores; the package's inputs and
        # outputs keep the model's f32.
        out, _ = self.compile(TINY_MLP, self.dir / "pkg", precision="bf16")
        kernels = (out / "kernels.cu").read_text() \
            if (out / "kernels.cu").exists() else ""
        self.assertTrue((out / "libmodel.so").is_file())
        if kernels:
            self.assertIn("cgc_mma_bf16(", kernels)

    def test_explicit_binary(self):
        binary = cgc.find_compiler()
        out, _ = self.compile(TINY_MLP, self.dir / "pkg", cgc_binary=binary,
                              progress=False)
        self.assertTrue((out / "libmodel.so").is_file())


class CompilerLookupTest(unittest.TestCase):
    def test_missing_binary_argument(self):
        with self.assertRaises(cgc.CompileError) as cm:
            cgc.compile(TINY_MLP, "unused", cgc_binary="/nonexistent/cgc")
        self.assertIn("/nonexistent/cgc", cm.exception.message)

    def test_missing_binary_env(self):
        old = os.environ.get("CGC_BINARY")
        os.environ["CGC_BINARY"] = "/nonexistent/bin/cgc"
        try:
            with self.assertRaises(cgc.CompileError) as cm:
                cgc.find_compiler()
            self.assertIn("CGC_BINARY", cm.exception.message)
        finally:
            if old is None:
                del os.environ["CGC_BINARY"]
            else:
                os.environ["CGC_BINARY"] = old


if __name__ == "__main__":
    unittest.main()
