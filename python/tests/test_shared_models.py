"""compile -> load -> run on the shared models (../shared/models), against
onnxruntime: mlp8x512 and mobilenet_v2_dynbatch (--dim N=1). The compile
part runs wherever the compiler is; the run part skips without a CUDA
driver or GPU, and everything skips without the shared models.

On the GPU machine (no compiler) set CGC_TEST_PACKAGES to a folder with
prebuilt `mlp8x512/` and `mobilenet_v2/` packages and CGC_SHARED_MODELS to
a folder with the two .onnx files (utils/gpu/gpu_python_check.sh does both).
"""

import os
import tempfile
import unittest
from pathlib import Path

import numpy as np

from _util import REPO, cgc, have_compiler, torch_cuda

MODELS = Path(os.environ.get("CGC_SHARED_MODELS",
                             REPO.parent / "shared" / "models"))

# name: (onnx file, dims)
CASES = {
    "mlp8x512": ("mlp8x512.onnx", {}),
    "mobilenet_v2": ("mobilenet_v2_dynbatch.onnx", {"N": 1}),
}

_packages = {}
_tmp = None


def model_path(name):
    path = MODELS / CASES[name][0]
    if not path.is_file():
        raise unittest.SkipTest("no shared models: %s is missing" % path)
    return path


def shared_package(name):
    """The package of a shared model: prebuilt, else compiled once."""
    global _tmp
    if name in _packages:
        return _packages[name]
    prebuilt = os.environ.get("CGC_TEST_PACKAGES")
    if prebuilt and (Path(prebuilt) / name / "libmodel.so").is_file():
        _packages[name] = Path(prebuilt) / name
        return _packages[name]
    source = model_path(name)
    if not have_compiler():
        raise unittest.SkipTest("no compiler: no cgc binary and no prebuilt "
                                "%r" % name)
    if _tmp is None:
        _tmp = tempfile.TemporaryDirectory(prefix="cgc-shared-")
    _packages[name] = cgc.compile(source, Path(_tmp.name) / name,
                                  dims=CASES[name][1], progress=False)
    return _packages[name]


def inputs_for(model, seed=0):
    rng = np.random.default_rng(seed)
    return {t.name: rng.standard_normal(t.shape).astype(t.numpy_dtype)
            for t in model.inputs}


def onnxruntime_outputs(name, feeds):
    try:
        import onnxruntime
    except ImportError:
        raise unittest.SkipTest("no onnxruntime: onnxruntime is not "
                                "installed")
    session = onnxruntime.InferenceSession(
        str(model_path(name)), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def relative_error(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)


class CompileTest(unittest.TestCase):
    """The package the compile path writes describes the model's I/O."""

    def test_packages(self):
        for name in CASES:
            with self.subTest(name):
                model_path(name)
                info = cgc.package_info(shared_package(name))
                self.assertTrue(info["inputs"])
                self.assertTrue(info["outputs"])
                self.assertEqual(len(info["graphs"]), 1)  # one island
                if name == "mobilenet_v2":
                    self.assertEqual(info["inputs"][0].shape,
                                     (1, 3, 224, 224))
                    self.assertEqual(info["outputs"][0].shape, (1, 1000))


class RunTest(unittest.TestCase):
    """cgc on the GPU against onnxruntime on the CPU, same inputs."""

    def load(self, name):
        pkg = shared_package(name)
        model_path(name)
        try:
            return cgc.load(pkg)
        except cgc.NoDeviceError as e:
            raise unittest.SkipTest("no GPU: %s" % e.message)

    def reference(self, model, name):
        """Seeded inputs for `model` and onnxruntime's outputs for them."""
        feeds = inputs_for(model)
        return feeds, onnxruntime_outputs(name, feeds)

    def assertClose(self, name, out, got, ref, tol, how=""):
        err = relative_error(got, ref)
        print("%s %s%s: relative L2 error vs onnxruntime %.3g"
              % (name, out, how, err))
        self.assertLess(err, tol, out)

    def check(self, name, tol):
        """numpy arrays in and out."""
        with self.load(name) as model:
            feeds, ref = self.reference(model, name)
            got = model.run(feeds)
            self.assertEqual(list(got), list(ref))
            for out in ref:
                self.assertEqual(got[out].shape, ref[out].shape)
                self.assertClose(name, out, got[out], ref[out], tol)

    def check_torch(self, name, tol):
        """torch CUDA tensors in and out (a test of its own, so that a
        machine without torch's CUDA counts it as a skip with its cause)."""
        torch = torch_cuda()
        with self.load(name) as model:
            feeds, ref = self.reference(model, name)
            tensors = [torch.from_numpy(feeds[t.name]).cuda()
                       for t in model.inputs]
            outs = model(*tensors)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for out, tensor in zip(ref, outs):
                self.assertTrue(tensor.is_cuda)
                self.assertClose(name, out, tensor.cpu().numpy(), ref[out],
                                 tol, " (torch CUDA)")

    def test_mlp8x512(self):
        self.check("mlp8x512", 1e-4)

    def test_mobilenet_v2(self):
        self.check("mobilenet_v2", 1e-4)

    def test_mlp8x512_torch(self):
        self.check_torch("mlp8x512", 1e-4)

    def test_mobilenet_v2_torch(self):
        self.check_torch("mobilenet_v2", 1e-4)


if __name__ == "__main__":
    unittest.main()
