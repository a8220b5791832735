"""cgc.compare / cgc.check_accuracy: the error a precision costs (numpy
only, no GPU)."""

import math
import unittest

import numpy as np

from _util import cgc


class AccuracyTest(unittest.TestCase):
    def test_measures(self):
        ref = np.array([1.0, 2.0, 2.0], np.float32)
        got = np.array([1.1, 2.0, 2.0], np.float32)
        (e,) = cgc.compare({"y": got}, {"y": ref})
        self.assertEqual(e.name, "y")
        self.assertAlmostEqual(e.rel_l2, 0.1 / 3, places=6)
        self.assertAlmostEqual(e.max_abs, 0.1, places=6)
        self.assertEqual(e.non_finite, 0)
        self.assertEqual(e.elements, 3)

    def test_overflow_is_reported(self):
        ref = np.array([70000.0, 1.0], np.float32)
        got = np.array([np.inf, 1.0], np.float32)
        (e,) = cgc.compare([got], [ref], names=["logits"])
        self.assertEqual(e.non_finite, 1)
        with self.assertRaises(cgc.AccuracyError) as cm:
            cgc.check_accuracy([e], "fp16")
        self.assertIn("logits", str(cm.exception))
        self.assertIn("non-finite", str(cm.exception))

    def test_bounds_per_precision(self):
        ref = np.ones(100, np.float32)
        got = ref * (1 + 5e-3)
        errors = cgc.compare([got], [ref])
        cgc.check_accuracy(errors, "bf16")  # 5e-3 <= 1e-2
        with self.assertRaises(cgc.AccuracyError):
            cgc.check_accuracy(errors, "tf32")  # above 2e-3
        with self.assertRaises(ValueError):
            cgc.check_accuracy(errors, "fp8")

    def test_mismatched_inputs(self):
        with self.assertRaises(ValueError):
            cgc.compare([np.zeros(3)], [np.zeros(4)])
        with self.assertRaises(ValueError):
            cgc.compare({"a": np.zeros(3)}, {"b": np.zeros(3)})
        with self.assertRaises(ValueError):
            cgc.compare([np.zeros(3)], [])

    def test_nan_reference_is_left_out(self):
        ref = np.array([math.nan, 1.0])
        got = np.array([math.nan, 1.0])
        (e,) = cgc.compare([got], [ref])
        self.assertEqual(e.rel_l2, 0.0)
        self.assertEqual(e.non_finite, 0)


if __name__ == "__main__":
    unittest.main()
