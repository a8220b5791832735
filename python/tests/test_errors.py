"""Runtime errors that need no GPU: status codes, messages, classes."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from _util import REPO, cgc, package


class StatusMappingTest(unittest.TestCase):
    def test_classes(self):
        cases = {1: cgc.InvalidArgumentError, 2: cgc.NotFoundError,
                 3: cgc.IncompatibleError, 4: cgc.CorruptError,
                 5: cgc.NoDeviceError, 6: cgc.CudaError,
                 7: cgc.OutOfMemoryError, 8: cgc.InternalError}
        from cgc._errors import error_for
        for code, cls in cases.items():
            e = error_for(code, "msg %d" % code)
            self.assertIsInstance(e, cls)
            self.assertIsInstance(e, cgc.RuntimeError)
            self.assertIsInstance(e, RuntimeError)  # the builtin one
            self.assertEqual(e.code, code)
            self.assertEqual(e.message, "msg %d" % code)
            self.assertIn(cgc.StatusCode(code).name, str(e))
        self.assertIsInstance(error_for(1, ""), ValueError)
        self.assertIsInstance(error_for(2, ""), FileNotFoundError)
        self.assertIsInstance(error_for(7, ""), MemoryError)
        unknown = error_for(42, "what")
        self.assertIsInstance(unknown, cgc.InternalError)
        self.assertIn("42", unknown.message)


class LoadErrorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cgc-errors-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_package(self):
        with self.assertRaises(cgc.NotFoundError) as cm:
            cgc.load(self.dir / "nope")
        e = cm.exception
        self.assertEqual(e.code, cgc.StatusCode.NOT_FOUND)
        self.assertIn("cgrt_model_load: package folder", e.message)
        self.assertIn("nope", e.message)

    def test_package_without_library(self):
        (self.dir / "pkg").mkdir()
        with self.assertRaises(cgc.NotFoundError) as cm:
            cgc.load(self.dir / "pkg")
        self.assertIn("libmodel.so", cm.exception.message)

    def test_truncated_weights(self):
        pkg = self.dir / "pkg"
        shutil.copytree(package("tiny_mlp"), pkg)
        weights = pkg / "weights.bin"
        weights.write_bytes(weights.read_bytes()[:100])
        with self.assertRaises(cgc.CorruptError) as cm:
            cgc.load(pkg)
        self.assertIn("weights", cm.exception.message)

    def test_no_driver(self):
        # A process whose runtime cannot find the driver: NoDeviceError, on
        # any machine.
        code = ("import sys; sys.path.insert(0, %r); import cgc\n"
                "try:\n    cgc.load(%r)\n"
                "except cgc.NoDeviceError as e:\n"
                "    print('NO_DEVICE', int(e.code), e.message)\n"
                % (str(REPO / "python"), str(package("tiny_mlp"))))
        env = dict(os.environ,
                   CGRT_DRIVER_LIBRARY=str(self.dir / "libcuda.so.1"))
        out = subprocess.run([sys.executable, "-c", code], env=env,
                             capture_output=True, text=True, timeout=120)
        self.assertIn("NO_DEVICE 5", out.stdout, out.stderr)
        self.assertIn("no CUDA driver", out.stdout)

    def test_runtime_library_env(self):
        old = os.environ.get("CGC_RUNTIME_LIB")
        os.environ["CGC_RUNTIME_LIB"] = str(self.dir / "libcgrt.so")
        try:
            with self.assertRaises(cgc.NotFoundError) as cm:
                cgc.find_runtime_library()
            self.assertIn("CGC_RUNTIME_LIB", cm.exception.message)
        finally:
            if old is None:
                del os.environ["CGC_RUNTIME_LIB"]
            else:
                os.environ["CGC_RUNTIME_LIB"] = old

    def test_package_info_missing(self):
        with self.assertRaises(cgc.NotFoundError):
            cgc.package_info(self.dir)


if __name__ == "__main__":
    unittest.main()
