"""Running packages on a GPU with numpy and torch tensors. Every test skips
where there is no CUDA driver or GPU (and the torch tests where torch or its
CUDA is missing)."""

import unittest

import numpy as np

from _util import (buckets_reference, cgc, eager_region_reference, gpu_model,
                   tiny_mlp_reference, torch_cuda)


def assert_close(test, got, ref, tol=1e-5):
    got = np.asarray(got, np.float64)
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
    test.assertLess(err, tol, "relative L2 error %.3g" % err)


class NumpyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = gpu_model("tiny_mlp")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def x(self, seed=1):
        return np.random.default_rng(seed).standard_normal((1, 64)).astype(
            np.float32)

    def test_io_description(self):
        m = self.model
        self.assertEqual([(t.name, t.dtype, t.shape) for t in m.inputs],
                         [("x", "float32", (1, 64))])
        self.assertEqual([(t.name, t.dtype, t.shape) for t in m.outputs],
                         [("y", "float32", (1, 64))])
        self.assertIn("x: float32[1, 64]", repr(m))

    def test_call_and_run(self):
        x = self.x()
        y = self.model(x)
        self.assertIsInstance(y, np.ndarray)
        self.assertEqual((y.shape, y.dtype), ((1, 64), np.float32))
        assert_close(self, y, tiny_mlp_reference(x))
        out = self.model.run({"x": x})
        self.assertEqual(list(out), ["y"])
        np.testing.assert_array_equal(out["y"], y)
        # fresh data: the result follows the input
        x2 = self.x(2)
        assert_close(self, self.model(x2), tiny_mlp_reference(x2))

    def test_non_contiguous_and_lists(self):
        x = np.asfortranarray(np.repeat(self.x(), 2, axis=0))[:1]
        assert_close(self, self.model(x), tiny_mlp_reference(x))
        assert_close(self, self.model(x.tolist()), tiny_mlp_reference(x))

    def test_wrong_dtype_is_the_runtimes_error(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(self.x().astype(np.float64))
        e = cm.exception
        self.assertEqual(e.code, cgc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("cgrt_model_run: input 0 'x': dtype is float64", e.message)

    def test_wrong_shape(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(np.zeros((2, 64), np.float32))
        self.assertIn("shape is [2, 64]", cm.exception.message)

    def test_wrong_names_and_counts(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model.run({"z": self.x()})
        self.assertIn("missing input(s) 'x'", cm.exception.message)
        self.assertIn("unknown input(s) 'z'", cm.exception.message)
        with self.assertRaises(cgc.InvalidArgumentError):
            self.model(self.x(), self.x())

    def test_benchmark(self):
        r = self.model.benchmark(10, 50, inputs=self.x())
        self.assertEqual(r.iterations, 50)
        self.assertEqual(r.launches_per_inference, 1)
        self.assertGreater(r.median_us, 0)
        self.assertGreaterEqual(r.p99_us, r.median_us)
        with self.assertRaises(cgc.InvalidArgumentError):
            self.model.benchmark(0, 0)

    def test_dump_graphs(self):
        import tempfile
        from pathlib import Path
        with tempfile.TemporaryDirectory() as tmp:
            paths = self.model.dump_graphs(Path(tmp) / "graphs")
            # tiny_mlp is one island: one graph of 4 kernel nodes.
            self.assertEqual([p.name for p in paths], ["graph0_island0.dot"])
            text = paths[0].read_text()
            self.assertIn("digraph", text)
            # Verbose: each kernel node names its CUDA function (named after
            # the kernel's kind and a hash of its code) and launch shape.
            self.assertEqual(text.count("{KERNEL"), 4)
            self.assertIn("matmul_", text)
            self.assertIn("norm_", text)

    def test_closed_model(self):
        m = gpu_model("tiny_mlp")
        with m:
            m(self.x())
        with self.assertRaises(cgc.InvalidArgumentError):
            m(self.x())

    def test_bad_device(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            cgc.load(self.model.path, device=99)
        self.assertIn("out of range", cm.exception.message)


class DataDependentTest(unittest.TestCase):
    def test_nonzero_shape_from_runtime(self):
        model = gpu_model("eager_region")
        rng = np.random.default_rng(3)
        for shift in (0.7, -0.7):  # both branches of the If
            x = (rng.standard_normal((4, 16)) + shift).astype(np.float32)
            x[0, :5] = 0  # some zeros for NonZero to skip
            y, nz = model(x)
            ref_y, ref_nz = eager_region_reference(x.astype(np.float64))
            assert_close(self, y, ref_y)
            self.assertEqual(nz.shape, ref_nz.shape)
            np.testing.assert_array_equal(nz, ref_nz)


class TorchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = gpu_model("tiny_mlp")
        cls.torch = torch_cuda()

    def x(self, seed=4):
        return np.random.default_rng(seed).standard_normal((1, 64)).astype(
            np.float32)

    def test_cuda_in_cuda_out(self):
        torch = self.torch
        x = self.x()
        # produced by a kernel on torch's stream just before the call
        xt = torch.from_numpy(x).cuda() * 2.0
        y = self.model(xt)
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual((y.device.type, y.device.index), ("cuda", 0))
        self.assertEqual(y.dtype, torch.float32)
        assert_close(self, y.cpu().numpy(), tiny_mlp_reference(2 * x))
        # usable at once on torch's stream
        self.assertTrue(torch.isfinite((y + 1).sum()).item())

    def test_output_kinds(self):
        torch = self.torch
        x = self.x(5)
        ref = tiny_mlp_reference(x)
        assert_close(self, self.model(torch.from_numpy(x).cuda(),
                                      output="numpy"), ref)
        y = self.model(x, output="torch")
        self.assertTrue(y.is_cuda)
        assert_close(self, y.cpu().numpy(), ref)
        y = self.model(torch.from_numpy(x))  # CPU tensor: host memory
        assert_close(self, y.cpu().numpy(), ref)
        y = self.model(x, output="torch_cpu")
        self.assertFalse(y.is_cuda)

    def test_strided_cuda_input(self):
        torch = self.torch
        x = self.x(6)
        xt = torch.from_numpy(np.repeat(x, 3, axis=0)).cuda().t()  # (64, 3)
        y = self.model.run({"x": xt[:, 1:2].t()})["y"]
        assert_close(self, y.cpu().numpy(), tiny_mlp_reference(x))

    def test_cuda_array_interface(self):
        torch = self.torch

        class Cai:  # a minimal __cuda_array_interface__ producer
            def __init__(self, t):
                self.t = t
                self.__cuda_array_interface__ = dict(
                    t.__cuda_array_interface__, stream=1)
        x = self.x(7)
        y = self.model(Cai(torch.from_numpy(x).cuda()))
        assert_close(self, y, tiny_mlp_reference(x))

    def test_wrong_torch_dtype(self):
        torch = self.torch
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(torch.zeros(1, 64, dtype=torch.float16, device="cuda"))
        self.assertIn("dtype is float16", cm.exception.message)

    def test_data_dependent_torch(self):
        torch = self.torch
        model = gpu_model("eager_region")
        x = (np.random.default_rng(8).standard_normal((4, 16)) + 0.5).astype(
            np.float32)
        y, nz = model(torch.from_numpy(x).cuda())
        ref_y, ref_nz = eager_region_reference(x.astype(np.float64))
        self.assertTrue(nz.is_cuda)
        self.assertEqual(tuple(nz.shape), ref_nz.shape)
        np.testing.assert_array_equal(nz.cpu().numpy(), ref_nz)



class BucketTest(unittest.TestCase):
    """One package for N=1,2,4 with padding: every size up to 4 runs."""

    @classmethod
    def setUpClass(cls):
        cls.model = gpu_model("buckets")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def test_buckets_and_padding(self):
        self.assertEqual((self.model.bucket_dim, self.model.buckets),
                         ("N", (1, 2, 4)))
        for n in (1, 2, 3, 4):
            x = np.random.default_rng(n).standard_normal((n, 8)).astype(
                np.float32)
            y = self.model(x)
            self.assertEqual(y.shape, (n, 4))
            assert_close(self, y, buckets_reference(x))

    def test_size_above_the_buckets(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(np.zeros((5, 8), np.float32))
        self.assertIn("match no shape bucket", cm.exception.message)

    def test_zero_copy_with_torch(self):
        torch = torch_cuda()
        x = torch.randn(4, 8, device="cuda")
        for enabled in (True, False):
            self.model.set_zero_copy(enabled)
            y = self.model(x)
            assert_close(self, y.cpu().numpy(), buckets_reference(x.cpu().numpy()))
        self.model.set_zero_copy(True)


class NarrowTypesTest(unittest.TestCase):
    """int4 and float8 e4m3fn in and out: ml_dtypes arrays, the carriers
    (int8 values, uint8 bit patterns) and torch's float8 tensors."""
    A = [-8, -3, 0, 1, 5, 7]
    B = [0.5, -1.5, 448.0, 3.0, -0.0, 2.0]  # sums are float8 values too

    @classmethod
    def setUpClass(cls):
        cls.model = gpu_model("narrow_types")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def expected(self):
        s = np.add(self.A, self.B, dtype=np.float32)
        return s, s, [0 if a == -8 else -a for a in self.A]

    def test_metadata_names_the_types(self):
        self.assertEqual([t.dtype for t in self.model.inputs],
                         ["int4", "float8_e4m3fn"])
        self.assertEqual([t.dtype for t in self.model.outputs],
                         ["float32", "float8_e4m3fn", "int4"])

    def test_ml_dtypes_arrays(self):
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("no ml_dtypes")
        a = np.array(self.A, ml_dtypes.int4)
        b = np.array(self.B, ml_dtypes.float8_e4m3fn)
        s, c, n = self.model(a, b)
        s_ref, c_ref, n_ref = self.expected()
        np.testing.assert_array_equal(s, s_ref)
        self.assertEqual(c.dtype, np.dtype(ml_dtypes.float8_e4m3fn))
        np.testing.assert_array_equal(c.astype(np.float32), c_ref)
        np.testing.assert_array_equal(n.astype(np.int64), n_ref)

    def test_carriers(self):
        bits = np.array([0x30, 0xbc, 0x7e, 0x44, 0x80, 0x40], np.uint8)  # B
        s, _, _ = self.model(np.array(self.A, np.int8), bits)
        np.testing.assert_array_equal(s, self.expected()[0])

    def test_carrier_out_of_range(self):
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(np.array([9, 0, 0, 0, 0, 0], np.int8),
                       np.zeros(6, np.uint8))
        self.assertIn("input 0 'a' is int4, whose values lie in [-8, 7]",
                      cm.exception.message)

    def test_torch_float8(self):
        torch = torch_cuda()
        a = torch.tensor(self.A, dtype=torch.int8, device="cuda")
        b = torch.tensor(self.B, device="cuda").to(torch.float8_e4m3fn)
        s, c, n = self.model(a, b, output="torch")
        self.assertEqual(c.dtype, torch.float8_e4m3fn)
        self.assertEqual(n.dtype, torch.int8)
        s_ref, c_ref, n_ref = self.expected()
        np.testing.assert_array_equal(s.cpu().numpy(), s_ref)
        np.testing.assert_array_equal(c.float().cpu().numpy(), c_ref)
        np.testing.assert_array_equal(n.cpu().numpy(), n_ref)


class NativeTorchTest(unittest.TestCase):
    """The native call path (lib/Bindings/Python/NativeRunner.cpp) with real
    torch tensors: results, stream order, out=, capture into a
    torch.cuda.graph, and what it leaves to the general path."""

    @classmethod
    def setUpClass(cls):
        cls.torch = torch_cuda()
        cls.model = gpu_model("tiny_mlp")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def x(self, seed):
        return np.random.default_rng(seed).standard_normal((1, 64)).astype(
            np.float32)

    def test_takes_torch_cuda_calls(self):
        torch = self.torch
        self.assertEqual(self.model.call_path, "native")
        x = self.x(11)
        y = self.model(torch.from_numpy(x).cuda())
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual((y.device.index, y.dtype, tuple(y.shape)),
                         (0, torch.float32, (1, 64)))
        assert_close(self, y.cpu().numpy(), tiny_mlp_reference(x))
        # The same numbers as the general path (numpy in and out).
        np.testing.assert_array_equal(y.cpu().numpy(), self.model(x))

    def test_fresh_outputs_each_call(self):
        # Two live outputs: the zero-copy bindings move between them.
        torch = self.torch
        xs = [torch.from_numpy(self.x(s)).cuda() for s in (12, 13, 14)]
        ys = [self.model(x) for x in xs]
        self.assertEqual(len({y.data_ptr() for y in ys}), 3)
        for x, y in zip(xs, ys):
            assert_close(self, y.cpu().numpy(),
                         tiny_mlp_reference(x.cpu().numpy()))

    def test_dropped_outputs_are_reused(self):
        # The pool hands a dropped output's memory out again, never one
        # that a tensor or a view still holds.
        torch = self.torch
        xs = [torch.from_numpy(self.x(s)).cuda() for s in (21, 22, 23, 24)]
        a, b = self.model(xs[0]), self.model(xs[1])
        dropped = a.data_ptr()
        del a
        c = self.model(xs[2])
        self.assertEqual(c.data_ptr(), dropped)
        view = c[0]
        held = c.data_ptr()
        del c
        d = self.model(xs[3])
        self.assertNotEqual(d.data_ptr(), held)
        for x, y in ((xs[1], b), (xs[2], view[None]), (xs[3], d)):
            assert_close(self, y.cpu().numpy(),
                         tiny_mlp_reference(x.cpu().numpy()))

    def test_ordered_on_the_current_stream(self):
        # A long kernel on a side stream writes the input just before the
        # call; the call is on that stream, so it reads the new values.
        torch = self.torch
        s = torch.cuda.Stream()
        x = self.x(15)
        big = torch.randn(2048, 2048, device="cuda")
        xt = torch.zeros(1, 64, device="cuda")
        with torch.cuda.stream(s):
            for _ in range(8):
                big = big @ big * 1e-3
            xt.copy_(torch.from_numpy(x).cuda(non_blocking=True) + 0 * big[0, :64])
            y = self.model(xt)
            z = y * 2  # usable on the stream at once
        s.synchronize()
        assert_close(self, z.cpu().numpy(), 2 * tiny_mlp_reference(x))

    def test_out(self):
        torch = self.torch
        x = self.x(16)
        out = torch.full((1, 64), float("nan"), device="cuda")
        y = self.model(torch.from_numpy(x).cuda(), out=out)
        self.assertIs(y, out)
        assert_close(self, out.cpu().numpy(), tiny_mlp_reference(x))
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(torch.from_numpy(x).cuda(),
                       out=torch.empty(1, 9, device="cuda"))  # 64 wanted
        self.assertIn("output 0", cm.exception.message)

    def test_inside_a_torch_cuda_graph(self):
        torch = self.torch
        static_x = torch.from_numpy(self.x(17)).cuda()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            self.model(static_x)  # warm-up, as torch's recipe asks
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = torch.relu(self.model(static_x * 1.0)) + 1.0
        for seed in (18, 19):
            x = self.x(seed)
            static_x.copy_(torch.from_numpy(x))
            g.replay()
            torch.cuda.synchronize()
            assert_close(self, static_y.cpu().numpy(),
                         np.maximum(tiny_mlp_reference(x), 0) + 1.0)

    def test_wrong_shape_is_the_runtimes_error(self):
        torch = self.torch
        with self.assertRaises(cgc.InvalidArgumentError) as cm:
            self.model(torch.zeros(2, 64, device="cuda"))
        self.assertIn("input 0", cm.exception.message)

    def test_other_calls_take_the_general_path(self):
        torch = self.torch
        x = self.x(20)
        ref = tiny_mlp_reference(x)
        strided = torch.from_numpy(np.repeat(x, 2, axis=1)).cuda()[:, ::2]
        self.assertFalse(strided.is_contiguous())
        assert_close(self, self.model(strided).cpu().numpy(), ref)
        y = self.model(torch.from_numpy(x).cuda(), synchronize=True)
        assert_close(self, y.cpu().numpy(), ref)
        # A CPU tensor: host memory in, a CUDA tensor out.
        assert_close(self, self.model(torch.from_numpy(x)).cpu().numpy(), ref)

    def test_packages_without_the_path(self):
        model = gpu_model("buckets")
        try:
            self.assertIn("shape buckets", model.call_path)
            x = self.torch.randn(3, 8, device="cuda")
            assert_close(self, model(x).cpu().numpy(),
                         buckets_reference(x.cpu().numpy()))
        finally:
            model.close()


if __name__ == "__main__":
    unittest.main()
