"""A new user's first hour: a regular (non-editable) install, the compiler's
exit codes and staging folder, package_info as JSON and its errors, and
cgc.InferenceSession for code coming from onnxruntime. Everything but the
GPU test runs without a GPU; what needs the compiler or a wheel builder
skips without them."""

import contextlib
import copy
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import numpy as np

from _util import (BAD_MATMUL, REPO, TINY_MLP, cgc, gpu_model,
                   have_compiler, package, tiny_mlp_reference)
from cgc._session import _cache_key, _check_names, _node_args, _package_for

BUILD = Path(os.environ.get("CGC_BUILD_DIR") or REPO / "build")
# What the installed package must find without help from the environment.
LOOKUP_VARIABLES = ("CGC_BINARY", "CGC_RUNTIME_LIB", "CGC_BUILD_DIR",
                    "CGC_INCLUDE_DIR", "CGC_TEST_PACKAGES", "LD_LIBRARY_PATH")


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cgc-first-hour-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()


# -- 1. pip install ./python ----------------------------------------------

def wheel_builder_problem():
    """Why pip cannot build the package's wheel offline here, or None.
    setuptools before 70.1 needs the wheel package for bdist_wheel."""
    out = subprocess.run(
        [sys.executable, "-c", "from setuptools.dist import Distribution; "
         "Distribution().get_command_class('bdist_wheel')"],
        capture_output=True, text=True, timeout=120)
    if out.returncode == 0:
        return None
    return ("no wheel builder: this Python's setuptools has no bdist_wheel "
            "(pip install wheel, or setuptools>=70.1)")


class InstallTest(TempDirTest):
    """`pip install ./python`, from a copy of the checkout (python/,
    include/cgrt and a link to the build tree) so that the test leaves no
    build folders in the source tree."""

    def install(self, build_tree):
        problem = wheel_builder_problem()
        if problem:
            self.skipTest(problem)
        src = self.dir / "src"
        shutil.copytree(REPO / "python", src / "python", ignore=
                        shutil.ignore_patterns("build", "*.egg-info", "tests",
                                               "__pycache__", "bin", "lib",
                                               "include"))
        shutil.copytree(REPO / "include" / "cgrt", src / "include" / "cgrt")
        if build_tree:
            (src / "build").symlink_to(build_tree)  # setup.py's default
        site = self.dir / "site"
        env = {k: v for k, v in os.environ.items()
               if k not in LOOKUP_VARIABLES}
        out = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps",
             "--no-build-isolation", "--no-index", "--target", str(site),
             str(src / "python")],
            capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return site

    def run_installed(self, site, code):
        """Runs `code` with only the installed package importable, outside
        the checkout; returns its stdout."""
        env = {k: v for k, v in os.environ.items()
               if k not in LOOKUP_VARIABLES}
        env["PYTHONPATH"] = str(site)
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "cgc").exists())
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                             capture_output=True, text=True, env=env,
                             cwd=str(self.dir), timeout=600)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out.stdout

    def test_bundles_compiler_runtime_and_headers(self):
        if not (BUILD / "bin" / "cgc").is_file():
            self.skipTest("no compiler: %s/bin/cgc is missing" % BUILD)
        site = self.install(BUILD)
        bundled = site / "cgc"
        self.assertTrue(os.access(bundled / "bin" / "cgc", os.X_OK))
        self.assertTrue((bundled / "lib" / "libcgrt.so").is_file())
        self.assertTrue((bundled / "include" / "cgrt" / "cgrt.h").is_file())
        # What the compiler links beyond the C/C++ runtime and CUDA comes
        # with it and is found there first (its RUNPATH); LLVM is linked in.
        if shutil.which("ldd"):
            ldd = subprocess.run(["ldd", str(bundled / "bin" / "cgc")],
                                 capture_output=True, text=True).stdout
            self.assertNotIn("libLLVM", ldd)
            carried = [line for line in ldd.splitlines()
                       if "libonnx" in line or "libprotobuf" in line]
            self.assertTrue(carried, ldd)
            for line in carried:
                path = Path(line.split("=>")[1].split("(")[0].strip())
                self.assertEqual(path.resolve().parent,
                                 (bundled / "lib").resolve(), line)
        result = json.loads(self.run_installed(site, """
            import json, cgc
            from cgc import _compiler, _runtime
            binary = _compiler.find_compiler()
            pkg = cgc.compile(%r, "pkg", progress=False)
            print(json.dumps({
                "module": cgc.__file__, "compiler": binary,
                "include": (_compiler._compiler_env(binary) or {}).get(
                    "CGC_INCLUDE_DIR"),
                "runtime": cgc.find_runtime_library(),
                "native": (lambda m: m[0].__file__ if m[0] else m[1])(
                    _runtime._native_module()),
                "files": sorted(p.name for p in pkg.iterdir()),
                "info": cgc.package_info(pkg)}))
            """ % str(TINY_MLP)))
        self.assertEqual(Path(result["module"]).parent, bundled)
        self.assertEqual(Path(result["compiler"]), bundled / "bin" / "cgc")
        self.assertEqual(Path(result["include"]), bundled / "include")
        self.assertEqual(Path(result["runtime"]),
                         bundled / "lib" / "libcgrt.so")
        # The native call path for torch tensors, built for this Python.
        self.assertEqual(Path(result["native"]).parent, bundled,
                         result["native"])
        self.assertIn("libmodel.so", result["files"])
        self.assertEqual(result["info"]["inputs"],
                         [{"name": "x", "dtype": "float32", "shape": [1, 64],
                           "bytes": 256}])

    def test_without_build_tree_is_pure_and_says_how_to_fix(self):
        site = self.install(None)
        self.assertFalse((site / "cgc" / "bin").exists())
        self.assertTrue((site / "cgc" / "_compiler.py").is_file())
        result = json.loads(self.run_installed(site, """
            import json, cgc
            try:
                cgc.find_compiler()
                compiler = None
            except cgc.CompileError as e:
                compiler = e.message
            try:
                cgc.load("pkg")
                runtime = None
            except cgc.NotFoundError as e:
                runtime = e.message
            print(json.dumps({"compiler": compiler, "runtime": runtime}))
            """))
        for what in ("compiler", "runtime"):
            message = result[what]
            self.assertIsNotNone(message, what)
            self.assertIn("build the repository", message)
            self.assertIn("pip install ./python", message)
            self.assertIn("CGC_BINARY", message)
            self.assertIn("CGC_RUNTIME_LIB", message)
        self.assertIn("cannot find the cgc compiler", result["compiler"])
        self.assertIn("cannot find the cgc runtime library", result["runtime"])


# -- 2. the compiler's staging folder and exit codes ------------------------

# A stand-in for cgc that writes the package's files one by one into
# <out>.cgc-partial-<pid>, renames it at the end, as cgc does; or exits with
# the status and message of $FAKE_CGC_EXIT.
FAKE_CGC = """#!%s
import os, sys, time
if os.environ.get("FAKE_CGC_EXIT"):
    status, message = os.environ["FAKE_CGC_EXIT"].split(":", 1)
    sys.stderr.write(message + "\\n")
    sys.exit(int(status))
out = sys.argv[sys.argv.index("-o") + 1]
staging = "%%s.cgc-partial-%%d" %% (out, os.getpid())
os.makedirs(staging)
files = [("weights.bin", ""), ("kernels.cu", "__global__ a\\n__global__ b\\n"),
         ("kernels.cubin", ""), ("metadata.json",
          '{"inputs": [], "outputs": [], "kernels": ["a", "b"], '
          '"graphs": [{"name": "g", "nodes": 2}]}'), ("libmodel.so", "")]
for name, text in files:
    time.sleep(0.4)
    with open(os.path.join(staging, name), "w") as f:
        f.write(text)
time.sleep(0.4)
os.rename(staging, out)
"""


class StagingAndExitCodeTest(TempDirTest):
    def fake_compiler(self):
        path = self.dir / "fake-cgc"
        path.write_text(FAKE_CGC % sys.executable)
        path.chmod(0o755)
        return path

    def compile(self, *args, **kwargs):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            result = cgc.compile(*args, **kwargs)
        return result, err.getvalue()

    def test_progress_follows_the_staging_folder(self):
        out, log = self.compile(TINY_MLP, self.dir / "pkg",
                                cgc_binary=self.fake_compiler())
        self.assertTrue((out / "libmodel.so").is_file())
        # Every stage is seen while the files are still in the staging
        # folder, not only once it is renamed.
        for line in ("generating kernels",
                     "compiling kernels with NVRTC (0/2 kernels)",
                     "writing the graph builder (2/2 kernels)",
                     "compiling the package library (2/2 kernels)",
                     "2 kernels, 1 graph(s) of 2 nodes"):
            self.assertIn("cgc: model.onnx: " + line, log)

    def test_exit_code_and_stderr(self):
        os.environ["FAKE_CGC_EXIT"] = "2:cgc: error: 'x' is a file"
        try:
            with self.assertRaises(cgc.CompileError) as cm:
                self.compile(TINY_MLP, self.dir / "pkg",
                             cgc_binary=self.fake_compiler())
        finally:
            del os.environ["FAKE_CGC_EXIT"]
        e = cm.exception
        self.assertEqual(e.exit_code, 2)
        self.assertEqual(e.exit_code, cgc.CompileError.USAGE_ERROR)
        self.assertEqual(e.message, "cgc: error: 'x' is a file")
        self.assertEqual(str(e), e.message)

    @unittest.skipUnless(have_compiler(), "no compiler: no cgc binary")
    def test_bad_targets_are_usage_errors(self):
        (self.dir / "file").write_text("not a package")
        (self.dir / "other").mkdir()
        (self.dir / "other" / "notes.txt").write_text("mine")
        for target, message in (("file", "is a file"),
                                ("other", "other files than a cgc package")):
            with self.subTest(target=target):
                with self.assertRaises(cgc.CompileError) as cm:
                    self.compile(TINY_MLP, self.dir / target, progress=False)
                self.assertEqual(cm.exception.exit_code, 2)
                self.assertIn(message, cm.exception.message)
        self.assertEqual((self.dir / "other" / "notes.txt").read_text(),
                         "mine")
        with self.assertRaises(cgc.CompileError) as cm:
            self.compile(BAD_MATMUL, self.dir / "pkg", progress=False)
        self.assertEqual(cm.exception.exit_code,
                         cgc.CompileError.MODEL_ERROR)

    @unittest.skipUnless(have_compiler(), "no compiler: no cgc binary")
    def test_recompiling_replaces_the_package(self):
        out, _ = self.compile(TINY_MLP, self.dir / "pkg", progress=False)
        (out / "stale.txt").write_text("from before")
        out, _ = self.compile(TINY_MLP, self.dir / "pkg", progress=False)
        self.assertFalse((out / "stale.txt").exists())
        self.assertEqual([p.name for p in self.dir.iterdir()], ["pkg"])


# -- 3. package_info ----------------------------------------------------------

METADATA = {
    "inputs": [{"name": "x", "dtype": "CGRT_FLOAT32", "shape": [1, 64],
                "arena_offset": 0, "bytes": 256}],
    "outputs": [{"name": "nz", "dtype": "CGRT_INT64", "shape": [2, -1],
                 "arena_offset": 256, "bytes": 1024}],
    "kernels": ["a"], "graphs": [{"name": "island0", "nodes": 1}],
}


class PackageInfoTest(TempDirTest):
    def write(self, text, name="pkg"):
        folder = self.dir / name
        folder.mkdir()
        (folder / "metadata.json").write_text(text)
        return folder

    def test_json_serialisable(self):
        info = cgc.package_info(self.write(json.dumps(METADATA)))
        data = json.loads(json.dumps(info))
        self.assertEqual(data["inputs"], [{"name": "x", "dtype": "float32",
                                           "shape": [1, 64], "bytes": 256}])
        self.assertEqual(data["outputs"][0]["shape"], [2, None])
        self.assertEqual(data["kernels"], 1)
        # attribute access, as before
        nz = info["outputs"][0]
        self.assertEqual((nz.name, nz.dtype, nz.shape, nz.bytes),
                         ("nz", "int64", (2, None), 1024))
        self.assertTrue(nz.data_dependent)
        self.assertEqual(nz.numpy_dtype, np.int64)
        self.assertEqual(type(nz.as_dict()), dict)
        self.assertEqual(repr(info["inputs"][0]), "TensorInfo(name='x', "
                         "dtype='float32', shape=(1, 64), bytes=256)")

    def test_tensor_info_is_read_only_and_copies(self):
        t = cgc.TensorInfo("x", "float32", (1, 64), 256)
        with self.assertRaises(TypeError):
            t["shape"] = (2, 64)
        with self.assertRaises(TypeError):
            t.update(bytes=0)
        with self.assertRaises(AttributeError):
            t.shape = (2, 64)
        for other in (copy.copy(t), copy.deepcopy(t),
                      pickle.loads(pickle.dumps(t))):
            self.assertEqual(other, t)
            self.assertIs(type(other), cgc.TensorInfo)
        self.assertEqual(len({t, cgc.TensorInfo("x", "float32", [1, 64],
                                                256)}), 1)

    @unittest.skipUnless(have_compiler(), "no compiler: no cgc binary")
    def test_real_package(self):
        info = cgc.package_info(package("tiny_mlp"))
        self.assertEqual(json.loads(json.dumps(info))["outputs"],
                         [{"name": "y", "dtype": "float32", "shape": [1, 64],
                           "bytes": 256}])

    def check(self, path, cls, *fragments):
        with self.assertRaises(cls) as cm:
            cgc.package_info(path)
        e = cm.exception
        self.assertIsInstance(e, cgc.Error)
        for fragment in fragments:
            self.assertIn(fragment, e.message)

    def test_errors(self):
        self.check(self.dir / "nope", cgc.NotFoundError, "nope",
                   "does not exist")
        (self.dir / "file").write_text("{}")
        self.check(self.dir / "file", cgc.NotFoundError, "is not a folder")
        (self.dir / "empty").mkdir()
        self.check(self.dir / "empty", cgc.NotFoundError,
                   "is not a cgc package: it has no metadata.json")
        self.check(self.write("{not json", "bad"), cgc.CorruptError,
                   "metadata.json is not valid JSON")
        self.check(self.write("[1, 2]", "list"), cgc.CorruptError,
                   "is not a JSON object")
        self.check(self.write('{"inputs": []}', "no_outputs"),
                   cgc.CorruptError, "has no outputs list")
        broken = json.loads(json.dumps(METADATA))
        del broken["inputs"][0]["dtype"]
        self.check(self.write(json.dumps(broken), "no_dtype"),
                   cgc.CorruptError, "input 0 has no field 'dtype'")
        broken = json.loads(json.dumps(METADATA))
        broken["outputs"][0]["shape"] = "2x?"
        self.check(self.write(json.dumps(broken), "bad_shape"),
                   cgc.CorruptError, "output 0 is malformed")


# -- 4. InferenceSession ------------------------------------------------------

class SessionTest(TempDirTest):
    @unittest.skipUnless(have_compiler(), "no compiler: no cgc binary")
    def test_compile_once_per_model_and_options(self):
        cache = self.dir / "cache"
        options = {"library": False, "progress": False}
        first, compiled = _package_for(TINY_MLP, cache_dir=cache, **options)
        self.assertTrue(compiled)
        self.assertEqual(first.parent, cache)
        self.assertTrue(first.name.startswith("model-"))
        stamp = (first / "metadata.json").stat().st_mtime_ns
        again, compiled = _package_for(TINY_MLP, cache_dir=cache, **options)
        self.assertEqual((again, compiled), (first, False))
        self.assertEqual((first / "metadata.json").stat().st_mtime_ns, stamp)
        other, compiled = _package_for(TINY_MLP, cache_dir=cache,
                                       cublaslt="never", **options)
        self.assertTrue(compiled)
        self.assertNotEqual(other, first)
        self.assertEqual(sorted(p.name for p in cache.iterdir()),
                         sorted([first.name, other.name]))

    def test_cache_key(self):
        base = {"precision": "fp32", "dims": None}
        key = _cache_key(b"model", base)
        self.assertEqual(key, _cache_key(b"model", dict(base)))
        self.assertNotEqual(key, _cache_key(b"model2", base))
        self.assertNotEqual(key, _cache_key(b"model", dict(base, dims={"N": 1})))
        self.assertNotEqual(key, _cache_key(b"model",
                                            dict(base, precision="bf16")))

    def test_argument_errors(self):
        with self.assertRaises(cgc.NotFoundError) as cm:
            cgc.InferenceSession(self.dir / "nope.onnx")
        self.assertIn("nope.onnx", cm.exception.message)
        with self.assertRaises(TypeError):  # before any compile
            cgc.InferenceSession(TINY_MLP, cache_dir=self.dir, providers=[])
        (self.dir / "pkg").mkdir()
        (self.dir / "pkg" / "metadata.json").write_text(json.dumps(METADATA))
        with self.assertRaises(ValueError) as cm:
            cgc.InferenceSession(self.dir / "pkg", precision="bf16")
        self.assertIn("is a package folder", str(cm.exception))
        with self.assertRaises(cgc.NotFoundError) as cm:
            cgc.InferenceSession(self.dir)
        self.assertIn("no metadata.json", cm.exception.message)

    def test_node_args_without_gpu(self):
        (self.dir / "pkg").mkdir()
        (self.dir / "pkg" / "metadata.json").write_text(json.dumps(METADATA))
        inputs, outputs = _node_args(cgc.package_info(self.dir / "pkg"))
        self.assertEqual([(i.name, i.shape, i.type) for i in inputs],
                         [("x", [1, 64], "tensor(float)")])
        self.assertEqual([(o.name, o.shape, o.type) for o in outputs],
                         [("nz", [2, None], "tensor(int64)")])

    @unittest.skipUnless(have_compiler(), "no compiler: no cgc binary")
    def test_bucket_dim_is_named(self):
        inputs, outputs = _node_args(cgc.package_info(package("buckets")))
        self.assertEqual(inputs[0].shape, ["N", 8])
        self.assertEqual(outputs[0].shape, ["N", 4])

    def test_name_errors(self):
        (self.dir / "pkg").mkdir()
        (self.dir / "pkg" / "metadata.json").write_text(json.dumps(METADATA))
        inputs, outputs = _node_args(cgc.package_info(self.dir / "pkg"))
        x = np.zeros((1, 64), np.float32)
        self.assertEqual(_check_names(inputs, outputs, None, {"x": x}),
                         ["nz"])
        cases = ((["nope"], {"x": x}, "unknown output name(s) 'nope'; the "
                  "model's outputs are 'nz'"),
                 ("nz", {"x": x}, "not the string 'nz'"),
                 (None, {}, "missing input(s) 'x'; the model's inputs are "
                  "'x'"),
                 (None, {"x": x, "z": x}, "unknown input(s) 'z'"),
                 (None, [x], "input_feed must be a dict"))
        for names, feed, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(cgc.InvalidArgumentError) as cm:
                    _check_names(inputs, outputs, names, feed)
                self.assertIsInstance(cm.exception, ValueError)
                self.assertIn(message, cm.exception.message)

    def test_package_without_gpu_is_no_device(self):
        pkg = package("tiny_mlp")
        try:
            cgc.load(pkg).close()
        except cgc.NoDeviceError as e:
            expected = e.message
        else:
            self.skipTest("a GPU is there: the session loads")
        with self.assertRaises(cgc.NoDeviceError) as cm:
            cgc.InferenceSession(pkg)
        self.assertEqual(cm.exception.message, expected)


class SessionGpuTest(unittest.TestCase):
    """Skips where there is no CUDA driver or GPU (as test_gpu.py)."""

    def test_run_like_onnxruntime(self):
        gpu_model("tiny_mlp").close()  # SkipTest without a GPU
        with cgc.InferenceSession(package("tiny_mlp")) as sess:
            self.assertEqual([(i.name, i.shape, i.type)
                              for i in sess.get_inputs()],
                             [("x", [1, 64], "tensor(float)")])
            x = np.random.default_rng(3).standard_normal((1, 64)).astype(
                np.float32)
            y, = sess.run(None, {"x": x})
            self.assertIsInstance(y, np.ndarray)
            err = np.linalg.norm(y - tiny_mlp_reference(x)) / \
                np.linalg.norm(tiny_mlp_reference(x))
            self.assertLess(err, 1e-5)
            np.testing.assert_array_equal(sess.run(["y"], {"x": x})[0], y)
            with self.assertRaises(cgc.InvalidArgumentError) as cm:
                sess.run(["z"], {"x": x})
            self.assertIn("unknown output name(s) 'z'", cm.exception.message)


if __name__ == "__main__":
    unittest.main()


class WarmUpTest(unittest.TestCase):
    """Model.warm_up runs zero inputs only through packages whose run is
    graph replays alone: host code or If/Loop nodes could take any time."""

    def test_refusal_names_the_reason(self):
        from cgc._runtime import _warm_up_refusal
        self.assertEqual(_warm_up_refusal(package("tiny_mlp")), "")
        self.assertEqual(_warm_up_refusal(package("eager_region")),
                         "has eager regions")

    def test_warm_up_runs_on_the_gpu(self):
        model = gpu_model("tiny_mlp")  # skips without a GPU
        model.warm_up(3)
        x = np.ones((1, 64), np.float32)
        np.testing.assert_allclose(model(x), tiny_mlp_reference(x),
                                   rtol=1e-4, atol=1e-5)

    def test_load_warms_up_where_it_can(self):
        gpu_model("tiny_mlp")  # skips without a GPU
        x = np.ones((1, 64), np.float32)
        for warm_up in (0, 3):
            with cgc.load(package("tiny_mlp"), warm_up=warm_up) as model:
                np.testing.assert_allclose(model(x), tiny_mlp_reference(x),
                                           rtol=1e-4, atol=1e-5)
        # An eager region is not run on zeros: the load skips the warm-up.
        cgc.load(package("eager_region")).close()


class KernelCountTest(TempDirTest):
    """The kernel count Python shows (package_info, compile's summary) is the
    one --explain prints in every form, If/Loop bodies included."""

    def test_package_info_agrees_with_explain(self):
        if not have_compiler():
            self.skipTest("no compiler")
        model = REPO / "test" / "Target" / "Package" / "Inputs" / \
            "control-flow.onnxtxt"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            pkg = cgc.compile(model, self.dir / "pkg")
        explain = subprocess.run(
            [cgc.find_compiler(), str(model), "--explain", "--format=json"],
            check=True, stdout=subprocess.PIPE, text=True).stdout
        kernels = json.loads(explain)["kernels"]
        self.assertEqual(kernels, 4)
        self.assertEqual(cgc.package_info(pkg)["kernels"], kernels)
        self.assertIn("%d kernels," % kernels, err.getvalue())
