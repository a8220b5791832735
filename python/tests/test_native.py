"""The native call path (lib/Bindings/Python/NativeRunner.cpp) without torch:
the runner is handed a stand-in for the torch module whose tensors hold
device memory of the CUDA driver libcgrt loaded. On the stub driver
(test/Runtime/python-native-stub.test) this checks what the path decides:
which calls it takes and which it leaves to the general path, the outputs
it makes, out=, the stream it enqueues on and the runtime's errors as cgc
exceptions. Its results are computed by kernels only on a GPU, where
test_gpu.NativeTorchTest checks them with real torch tensors."""

import ctypes
import os
import unittest
import weakref

import _util
from _util import cgc

from cgc import _runtime


class Driver:
    """The few driver calls the stand-in tensors need, in the runtime's
    driver library (the same instance: dlopen returns it again)."""

    def __init__(self):
        path = os.environ.get("CGRT_DRIVER_LIBRARY") or "libcuda.so.1"
        lib = self.lib = ctypes.CDLL(path)
        self.check(lib.cuInit(0), "cuInit")
        device = ctypes.c_int()
        self.check(lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        self.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device),
                   "cuDevicePrimaryCtxRetain")
        self.check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64),
                                      ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.c_uint]

    @staticmethod
    def check(result, call):
        if result != 0:
            raise unittest.SkipTest("%s failed (%d): no usable driver" % (
                call, result))

    def alloc(self, size):
        ptr = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), size),
                   "cuMemAlloc")
        return ptr.value

    def stream(self):
        s = ctypes.c_void_p()
        self.check(self.lib.cuStreamCreate(ctypes.byref(s), 1),
                   "cuStreamCreate")
        return s.value


class FakeStorage:
    """A tensor's storage: the tensors that hold it, as c10's use count."""

    by_cdata = {}

    def __init__(self, ptr):
        self.ptr = ptr
        self.holders = weakref.WeakSet()
        self._cdata = id(self)
        FakeStorage.by_cdata[self._cdata] = self

    @classmethod
    def use_count(cls, cdata):
        # The holders and the storage object the query made, as in torch.
        return len(cls.by_cdata[cdata].holders) + 1


class FakeTorch:
    """What the runner reads of torch: Tensor (the type), empty, device."""

    float32 = "float32-dtype"
    float16 = "float16-dtype"
    driver = None
    made = []

    class Tensor:
        def __init__(self, shape, dtype, device=0, contiguous=True,
                     ptr=None, storage=None):
            self.shape = tuple(shape)
            self.dtype = dtype
            self._device = device
            self._contiguous = contiguous
            count = 1
            for d in self.shape:
                count *= d
            if storage is None:
                storage = FakeStorage(
                    ptr if ptr is not None else
                    FakeTorch.driver.alloc(max(4, 4 * count)))
            self._storage = storage
            storage.holders.add(self)
            self._ptr = storage.ptr

        def untyped_storage(self):
            return self._storage

        def detach(self):
            return FakeTorch.Tensor(self.shape, self.dtype, self._device,
                                    self._contiguous, storage=self._storage)

        def get_device(self):
            return self._device

        def is_contiguous(self):
            return self._contiguous

        def data_ptr(self):
            return self._ptr

    @staticmethod
    def device(kind, index):
        return (kind, index)

    @classmethod
    def empty(cls, shape, dtype, device):
        assert device == ("cuda", 0), device
        t = cls.Tensor(shape, dtype)
        cls.made.append(t)
        return t


class NativeRunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        module, why = _runtime._native_module()
        # make builds the module: its absence is a failure, not a skip.
        assert module is not None, "no native call path: %s" % why
        cls.module = module
        try:
            cls.model = cgc.load(_util.package("tiny_mlp"), warm_up=0)
        except cgc.NoDeviceError as e:
            raise unittest.SkipTest("no GPU: %s (the stub driver runs "
                                    "these tests)" % e)
        FakeTorch.driver = Driver()
        cls.streams_asked = []

        def current_stream(index):
            cls.streams_asked.append(index)
            return cls.stream

        cls.stream = FakeTorch.driver.stream()
        lib = cls.model._lib
        entry = {name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                 for name in ("cgrt_model_run_async", "cgrt_status_get_code",
                              "cgrt_status_get_message", "cgrt_status_free")}
        (x,), (y,) = cls.model.inputs, cls.model.outputs
        cls.x_shape, cls.y_shape = x.shape, y.shape
        cls.entry = entry
        cls.current_stream = staticmethod(current_stream)
        cls.runner = cls.make_runner(pooled=False)

    @classmethod
    def make_runner(cls, pooled=True, capturing=lambda: False, entry=None):
        """A runner of the model; pooled: given the storage query (without
        it the runner allocates every output)."""
        return cls.module.Runner(
            cls.model._handle.value, entry or cls.entry,
            [(1, FakeTorch.float32, 4)],
            [(1, FakeTorch.float32, cls.y_shape, 4)], 0, FakeTorch,
            cls.current_stream, cgc._errors.error_for,
            FakeStorage.use_count if pooled else None, capturing)

    @classmethod
    def tearDownClass(cls):
        cls.runner = None
        cls.model.close()

    def x(self, **kwargs):
        return FakeTorch.Tensor(kwargs.pop("shape", self.x_shape),
                                kwargs.pop("dtype", FakeTorch.float32),
                                **kwargs)

    def test_makes_the_output_on_the_current_stream(self):
        FakeTorch.made.clear()
        self.streams_asked.clear()
        y = self.runner((self.x(),), None)
        self.assertEqual(FakeTorch.made, [y])
        self.assertEqual(y.shape, self.y_shape)
        self.assertEqual(y.dtype, FakeTorch.float32)
        self.assertEqual(self.streams_asked, [0])

    def test_outputs_are_reused_once_nothing_holds_them(self):
        runner = self.make_runner()
        FakeTorch.made.clear()
        first, second = runner((self.x(),), None), runner((self.x(),), None)
        self.assertEqual(len(FakeTorch.made), 2)
        self.assertNotEqual(first.data_ptr(), second.data_ptr())
        # A third live output comes from outside the pool's two sets.
        third = runner((self.x(),), None)
        self.assertEqual(len(FakeTorch.made), 3)
        self.assertNotIn(third.data_ptr(),
                         (first.data_ptr(), second.data_ptr()))
        ptr = first.data_ptr()
        del first
        again = runner((self.x(),), None)
        self.assertEqual(len(FakeTorch.made), 3)
        self.assertEqual(again.data_ptr(), ptr)
        # The caller gets a tensor object of its own, never the pool's.
        self.assertNotIn(again, FakeTorch.made)

    def test_an_alias_left_keeps_the_output(self):
        runner = self.make_runner()
        FakeTorch.made.clear()
        first, second = runner((self.x(),), None), runner((self.x(),), None)
        view = first.detach()  # a view: the storage is still in use
        ptrs = {first.data_ptr(), second.data_ptr()}
        del first
        third = runner((self.x(),), None)
        self.assertNotIn(third.data_ptr(), ptrs)
        del view, third
        self.assertIn(runner((self.x(),), None).data_ptr(), ptrs)

    def test_no_reuse_in_a_capture_or_on_another_stream(self):
        capturing = [False]
        runner = self.make_runner(capturing=lambda: capturing[0])
        FakeTorch.made.clear()
        ptr = runner((self.x(),), None).data_ptr()  # dropped at once
        capturing[0] = True
        self.assertNotEqual(runner((self.x(),), None).data_ptr(), ptr)
        capturing[0] = False
        stream, type(self).stream = self.stream, FakeTorch.driver.stream()
        try:
            self.assertNotEqual(runner((self.x(),), None).data_ptr(), ptr)
        finally:
            type(self).stream = stream
        self.assertEqual(runner((self.x(),), None).data_ptr(), ptr)

    def test_the_runtime_answers_whether_the_stream_captures(self):
        # Given libcgrt's query, the runner asks it (a driver call), not
        # torch's Python one: that one fails the test if it is called.
        def torch_query():
            raise AssertionError("torch's capture query was called")
        lib = self.model._lib
        entry = dict(self.entry, cgrt_stream_is_capturing=ctypes.cast(
            lib.cgrt_stream_is_capturing, ctypes.c_void_p).value)
        runner = self.make_runner(capturing=torch_query, entry=entry)
        FakeTorch.made.clear()
        ptr = runner((self.x(),), None).data_ptr()  # dropped at once
        # Not capturing (the runtime says so): the pooled output is reused.
        self.assertEqual(runner((self.x(),), None).data_ptr(), ptr)
        self.assertEqual(len(FakeTorch.made), 1)

    def test_out_is_written_and_returned(self):
        FakeTorch.made.clear()
        out = FakeTorch.Tensor(self.y_shape, FakeTorch.float32)
        self.assertIs(self.runner((self.x(),), out), out)
        self.assertIs(self.runner((self.x(),), [out]), out)
        self.assertEqual(FakeTorch.made, [])

    def test_other_arguments_are_left_to_the_general_path(self):
        cases = {
            "another dtype": (self.x(dtype=FakeTorch.float16),),
            "another device": (self.x(device=1),),
            "a CPU tensor": (self.x(device=-1),),
            "not contiguous": (self.x(contiguous=False),),
            "not a tensor": (object(),),
            "no inputs": (),
            "two inputs": (self.x(), self.x()),
        }
        for what, args in cases.items():
            with self.subTest(what):
                self.assertIs(self.runner(args, None), NotImplemented)
        wrong_out = FakeTorch.Tensor(self.y_shape, FakeTorch.float16)
        self.assertIs(self.runner((self.x(),), wrong_out), NotImplemented)
        self.assertIs(self.runner((self.x(),), [wrong_out, wrong_out]),
                      NotImplemented)

    def test_runtime_errors_are_cgc_exceptions(self):
        bad = self.x(shape=(self.x_shape[0], self.x_shape[1] + 1))
        with self.assertRaises(cgc.InvalidArgumentError) as c:
            self.runner((bad,), None)
        self.assertIn("cgrt_model_run_async: input 0", str(c.exception))
        self.assertIn("shape is", str(c.exception))
        short = FakeTorch.Tensor((1,), FakeTorch.float32)
        with self.assertRaises(cgc.InvalidArgumentError) as c:
            self.runner((self.x(),), short)
        self.assertIn("output 0", str(c.exception))

    def test_model_call_path_without_torch(self):
        # Without torch the model never makes a runner; it says why not.
        if "torch" in __import__("sys").modules:
            self.skipTest("torch is imported here")
        self.assertIn("not tried yet", self.model.call_path)


class NativeLookupTest(unittest.TestCase):
    def test_looked_up_beside_the_runtime_in_use(self):
        # A runtime folder named by CGC_RUNTIME_LIB brings its module.
        runtime = os.path.realpath(_runtime.find_runtime_library())
        if not os.path.isabs(runtime):
            self.skipTest("no runtime: no libcgrt.so found")
        first = _runtime._native_candidates()[0]
        self.assertEqual(os.path.dirname(str(first)), os.path.dirname(runtime))
        self.assertTrue(first.name.startswith("_cgc_native"))


if __name__ == "__main__":
    unittest.main()
