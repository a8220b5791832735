"""cgc.Model on a training package: every call is one step, and the state
(the weights being trained, the optimizer's buffers) stays in the model,
read, written and reset through read_state / write_state / reset_state.

Runs on libcgrt's hand-written test package in its training mode
(CGRT_TEST_PACKAGE_DIR, CGRT_TEST_PACKAGE_MODE=training: a step computes
y = 2x + w and replaces the state w by relu(y)), on the stub driver in CI
(test/Runtime/python-training-stub.test) or on a GPU; the package is
build/test/Runtime/testpkg unless CGRT_TEST_PACKAGE_DIR names another."""

import os
import unittest

import numpy as np

from _util import REPO, cgc

ROWS, COLS = 2, 128

# Where `make build` leaves libcgrt's hand-written test package.
BUILT_TEST_PACKAGE = str(REPO / "build" / "test" / "Runtime" / "testpkg")


def initial_weights():
    i = np.arange(ROWS * COLS)
    return (np.float32(0.01) * (i % 97).astype(np.float32) -
            np.float32(0.5)).reshape(ROWS, COLS)


class TrainingStateTest(unittest.TestCase):
    def setUp(self):
        folder = os.environ.get("CGRT_TEST_PACKAGE_DIR") or BUILT_TEST_PACKAGE
        if not os.path.isfile(os.path.join(folder, "libmodel.so")):
            self.skipTest("no compiler: no test package at %s (build the "
                          "tree, or set CGRT_TEST_PACKAGE_DIR)" % folder)
        os.environ["CGRT_TEST_PACKAGE_MODE"] = "training"
        try:
            self.model = cgc.Model(folder)
        except cgc.NoDeviceError as e:
            self.skipTest("no GPU: %s" % e.message)
        finally:
            del os.environ["CGRT_TEST_PACKAGE_MODE"]

    def tearDown(self):
        self.model.close()

    def step(self, x, w):
        y = self.model(x)[0]
        np.testing.assert_array_equal(y, x * np.float32(2) + w)
        return np.maximum(y, 0)

    def test_each_call_is_a_step_on_the_state_the_last_one_left(self):
        if "stub" in os.environ.get("CGRT_DRIVER_LIBRARY", ""):
            self.skipTest("the stub driver runs no kernels for Python "
                          "(cgrt-tests' TrainingTest covers the steps there)")
        m = self.model
        w = initial_weights()
        rng = np.random.default_rng(0)
        for _ in range(3):
            x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
            w = self.step(x, w)
            np.testing.assert_array_equal(m.read_state("w"), w)

    def test_describe_write_and_reset(self):
        m = self.model
        self.assertTrue(m.is_training)
        self.assertEqual([(t.name, t.dtype, t.shape) for t in m.state],
                         [("w", "float32", (ROWS, COLS))])
        np.testing.assert_array_equal(m.read_state("w"), initial_weights())
        threes = np.full((ROWS, COLS), 3, np.float32)
        m.write_state("w", threes)
        np.testing.assert_array_equal(m.read_state("w"), threes)
        m.reset_state()
        np.testing.assert_array_equal(m.read_state("w"), initial_weights())
        self.assertEqual(list(m.state_dict()), ["w"])

    def test_export_onnx(self):
        try:
            import onnx
            from onnx import helper, numpy_helper
        except ImportError:
            self.skipTest("no onnx package")
        import tempfile
        m = self.model
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"])], "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT,
                                           [ROWS, COLS])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT,
                                           [ROWS, COLS])],
            [numpy_helper.from_array(initial_weights(), "w")])
        trained = np.full((ROWS, COLS), 0.25, np.float32)
        m.write_state("w", trained)
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = tmp + "/m.onnx", tmp + "/trained.onnx"
            onnx.save(helper.make_model(graph), src)
            self.assertEqual(m.export_onnx(src, dst), ["w"])
            out = onnx.load(dst)
            np.testing.assert_array_equal(
                numpy_helper.to_array(out.graph.initializer[0]), trained)
            # Another model's initializers are refused.
            graph.initializer[0].CopyFrom(
                numpy_helper.from_array(np.zeros((3,), np.float32), "w"))
            onnx.save(helper.make_model(graph), src)
            with self.assertRaises(cgc.InvalidArgumentError) as cm:
                m.export_onnx(src, dst)
            self.assertIn("not the model this package was compiled from",
                          str(cm.exception))

    def test_errors_name_the_state(self):
        m = self.model
        with self.assertRaises(KeyError) as cm:
            m.read_state("v")
        self.assertIn("the state is w", str(cm.exception))
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            m.write_state("w", np.zeros((COLS, ROWS), np.float32))
        self.assertIn("state tensor 'w' is float32[2, 128]; the value is "
                      "float32[128, 2]", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
