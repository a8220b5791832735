//===- NativeRunner.cpp - the Python call path of cgc.Model ----------------===//
//
// cgc.Model's ctypes path costs tens of microseconds a call: marshalling the
// tensor structs, looking up torch's stream, synchronizing it. A small model
// replays in less. This module is the call path for the common case (torch
// CUDA tensors in, torch CUDA tensors out, shapes fixed at compile time):
// the descriptors are built once, a call reads each input's pointer and
// shape, allocates the outputs (or takes `out=`), and enqueues the run on
// torch's current stream with cgrt_model_run_async, as a torch op would.
//
// It links nothing of cgc: the Python side loads libcgrt with ctypes and
// hands over the addresses of the entry points it uses, so both paths use
// one copy of the runtime, found the same way. It does not link libtorch
// either: torch is reached through the Python objects given to the
// constructor (torch.empty, the current-stream query), so one build serves
// every torch version.
//
// Fresh outputs come from a small pool: torch.empty costs a few
// microseconds of host time before the launch, more than the rest of the
// call. A pooled output is handed out again only once nothing but the pool
// holds its storage (no tensor, view or saved reference), and only for
// calls on the stream it was last written on, which orders the new run
// after every use of it there, as torch's caching allocator orders a
// block's reuse. Calls inside a graph capture take fresh tensors (the
// capture's own memory pool owns those).
//
// Anything else (numpy arrays, CPU or strided tensors, another dtype) is not
// this path's: the call returns NotImplemented and cgc.Model takes the
// general path, which converts what it can and names what it cannot.
//
//===----------------------------------------------------------------------===//

#include "cgrt/cgrt.h"

#include <nanobind/nanobind.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using RunAsyncFn = cgrt_status (*)(cgrt_model *, const cgrt_tensor *, size_t,
                                   cgrt_tensor *, size_t, void *);
using StatusCodeFn = cgrt_status_code (*)(cgrt_status);
using StatusMessageFn = const char *(*)(cgrt_status);
using StatusFreeFn = void (*)(cgrt_status);
using StreamCapturingFn = cgrt_status (*)(void *, int *);

/// What a call checks an input against, and how it describes it.
struct InputSpec {
  cgrt_dtype dtype;
  nb::object torchDtype; ///< the only dtype this path takes for it
  size_t elementSize;
};

/// How a call makes an output: torch.empty(*shape, dtype, device) through
/// argument objects built once.
struct OutputSpec {
  cgrt_dtype dtype;
  nb::object torchDtype;
  std::vector<int64_t> dims;
  size_t bytes;
  nb::tuple emptyArgs;   ///< (shape,)
  nb::dict emptyKwargs;  ///< {dtype, device}
};

/// A method call without arguments through the interpreter's method
/// lookup (no bound method object made): a call makes about ten of these,
/// each a share of a few-microsecond budget. A new reference, or null with
/// a Python error set.
PyObject *callMethod(nb::handle self, const nb::str &name) {
  return PyObject_CallMethodNoArgs(self.ptr(), name.ptr());
}

/// An interned name: attribute lookups with it skip hashing and compare
/// by address.
nb::str interned(const char *text) {
  return nb::steal<nb::str>(PyUnicode_InternFromString(text));
}

/// callMethod's result, or the Python error raised.
nb::object callMethodOrRaise(nb::handle self, const nb::str &name) {
  PyObject *result = callMethod(self, name);
  if (!result)
    throw nb::python_error();
  return nb::steal(result);
}

/// One pooled tensor per output, with its storage's address (c10's
/// StorageImpl, which the tensor keeps alive) and that storage's use count
/// when the pool alone held it, so that telling whether a caller still
/// holds any of it is one call with an integer, not a storage object made
/// and queried on every call.
struct PooledSet {
  std::vector<nb::object> tensors;
  std::vector<uintptr_t> storages;
  std::vector<int64_t> poolOnlyUseCounts;
};

/// The outputs of earlier calls on one stream, kept for reuse: at most
/// kSlotsPerStream sets.
struct StreamPool {
  uintptr_t stream;
  std::vector<PooledSet> slots;
  /// The set handed out last: the next call looks at the others first, as
  /// `y = model(x)` in a loop still holds that one (each look is a call
  /// into torch).
  size_t last = 0;
};

/// Two sets serve `y = model(x)` in a loop (the previous y is alive while
/// the next call runs); more live outputs get tensors outside the pool.
constexpr size_t kSlotsPerStream = 2;
/// Streams with a pool of their own; calls on further streams allocate.
constexpr size_t kPooledStreams = 4;

/// A loaded model's call path. Owns nothing of the model: cgc.Model keeps
/// the handle alive and drops the runner before releasing it.
class Runner {
public:
  Runner(uintptr_t model, nb::dict entryPoints, nb::list inputs,
         nb::list outputs, int device, nb::object torch,
         nb::object currentStream, nb::object raiseStatus,
         nb::object storageUseCount, nb::object isCapturing)
      : model(reinterpret_cast<cgrt_model *>(model)), device(device),
        currentStream(std::move(currentStream)),
        raiseStatus(std::move(raiseStatus)),
        storageUseCount(std::move(storageUseCount)),
        isCapturing(std::move(isCapturing)) {
    runAsync = reinterpret_cast<RunAsyncFn>(
        nb::cast<uintptr_t>(entryPoints["cgrt_model_run_async"]));
    statusCode = reinterpret_cast<StatusCodeFn>(
        nb::cast<uintptr_t>(entryPoints["cgrt_status_get_code"]));
    statusMessage = reinterpret_cast<StatusMessageFn>(
        nb::cast<uintptr_t>(entryPoints["cgrt_status_get_message"]));
    statusFree = reinterpret_cast<StatusFreeFn>(
        nb::cast<uintptr_t>(entryPoints["cgrt_status_free"]));
    // A libcgrt of before this entry point: torch's query answers instead.
    if (entryPoints.contains("cgrt_stream_is_capturing"))
      streamCapturing = reinterpret_cast<StreamCapturingFn>(
          nb::cast<uintptr_t>(entryPoints["cgrt_stream_is_capturing"]));
    tensorType = torch.attr("Tensor");
    empty = torch.attr("empty");
    nb::object deviceObject =
        torch.attr("device")("cuda", device);
    for (nb::handle item : inputs) {
      nb::tuple t = nb::borrow<nb::tuple>(item);
      this->inputs.push_back({static_cast<cgrt_dtype>(nb::cast<int>(t[0])),
                              nb::borrow(t[1]), nb::cast<size_t>(t[2])});
    }
    for (nb::handle item : outputs) {
      nb::tuple t = nb::borrow<nb::tuple>(item);
      OutputSpec o;
      o.dtype = static_cast<cgrt_dtype>(nb::cast<int>(t[0]));
      o.torchDtype = nb::borrow(t[1]);
      nb::tuple shape = nb::borrow<nb::tuple>(t[2]);
      size_t elements = 1;
      for (nb::handle d : shape) {
        o.dims.push_back(nb::cast<int64_t>(d));
        elements *= static_cast<size_t>(o.dims.back());
      }
      o.bytes = elements * nb::cast<size_t>(t[3]);
      o.emptyArgs = nb::make_tuple(shape);
      o.emptyKwargs["dtype"] = o.torchDtype;
      o.emptyKwargs["device"] = deviceObject;
      this->outputs.push_back(std::move(o));
    }
    if (this->inputs.size() > 64 || this->outputs.size() > 64)
      throw nb::value_error("the native call path takes at most 64 inputs "
                            "and 64 outputs");
  }

  /// One inference, enqueued on torch's current stream. NotImplemented when
  /// an argument is not a contiguous CUDA tensor of the model's device and
  /// dtype (the general path then takes the call).
  nb::object call(nb::tuple args, nb::object out) {
    if (args.size() != inputs.size())
      return nb::steal(Py_NewRef(Py_NotImplemented));
    cgrt_tensor ins[64], outs[64];
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!describe(args[i], inputs[i].torchDtype, inputs[i].dtype,
                    inputs[i].elementSize, ins[i]))
        return nb::steal(Py_NewRef(Py_NotImplemented));

    uintptr_t streamHandle = nb::cast<uintptr_t>(currentStream(device));
    nb::object results;
    if (out.is_none()) {
      results = freshOutputs(streamHandle, outs);
    } else {
      results = takeOut(out, outs);
      if (!results.is_valid())
        return nb::steal(Py_NewRef(Py_NotImplemented));
    }

    void *stream = reinterpret_cast<void *>(streamHandle);
    cgrt_status status;
    {
      nb::gil_scoped_release unlocked;
      status = runAsync(model, ins, inputs.size(), outs, outputs.size(),
                        stream);
    }
    if (status)
      raise(status);
    if (outputs.size() == 1)
      return nb::borrow(PyTuple_GET_ITEM(results.ptr(), 0));
    return results;
  }

private:
  /// One tensor per output for a call on `stream`. The pool keeps the
  /// tensors it made and hands out aliases of them (detach(): same storage,
  /// a tensor object of the caller's own), so nothing a caller does to the
  /// tensor it got (a new shape, requires_grad) reaches the next call. A
  /// set is reused once no alias of any of its tensors is left.
  nb::object freshOutputs(uintptr_t stream, cgrt_tensor *outs) {
    StreamPool *pool = poolFor(stream);
    PooledSet *reused = nullptr;
    if (pool)
      for (size_t k = 1; k <= pool->slots.size() && !reused; ++k) {
        size_t index = (pool->last + k) % pool->slots.size();
        if (unaliased(pool->slots[index])) {
          reused = &pool->slots[index];
          pool->last = index;
        }
      }
    bool keep = !reused && pool && pool->slots.size() < kSlotsPerStream;
    nb::object results =
        nb::steal(PyTuple_New(static_cast<Py_ssize_t>(outputs.size())));
    PooledSet made;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const OutputSpec &o = outputs[i];
      nb::object tensor =
          reused ? reused->tensors[i] : empty(*o.emptyArgs, **o.emptyKwargs);
      // Asked every call: a caller's resize_ of its alias may have moved
      // the storage's memory.
      fillOutput(o, nb::cast<uintptr_t>(callMethodOrRaise(tensor, names.dataPtr)),
                 o.bytes, outs[i]);
      if (keep) {
        uintptr_t storage = nb::cast<uintptr_t>(
            tensor.attr("untyped_storage")().attr("_cdata"));
        made.tensors.push_back(tensor);
        made.storages.push_back(storage);
        made.poolOnlyUseCounts.push_back(
            nb::cast<int64_t>(storageUseCount(storage)));
      }
      if (reused || keep)
        tensor = callMethodOrRaise(tensor, names.detach);
      PyTuple_SET_ITEM(results.ptr(), static_cast<Py_ssize_t>(i),
                       tensor.release().ptr());
    }
    if (keep) {
      pool->slots.push_back(std::move(made));
      pool->last = pool->slots.size() - 1;
    }
    return results;
  }

  /// The pool of calls on `stream`; null where calls there do not pool
  /// (a capture, no way to see a storage's holders, too many streams).
  StreamPool *poolFor(uintptr_t stream) {
    if (storageUseCount.is_none() || capturing(stream))
      return nullptr;
    for (StreamPool &pool : pools)
      if (pool.stream == stream)
        return &pool;
    if (pools.size() == kPooledStreams)
      return nullptr;
    pools.push_back({stream, {}});
    return &pools.back();
  }

  /// Whether `stream` is capturing a CUDA graph (or may be: an unanswered
  /// query counts as yes, and the run then reports what is wrong). The
  /// runtime's driver call costs a fraction of torch's Python query.
  bool capturing(uintptr_t stream) {
    if (streamCapturing) {
      int active = 0;
      cgrt_status status =
          streamCapturing(reinterpret_cast<void *>(stream), &active);
      if (!status)
        return active != 0;
      statusFree(status);
      return true;
    }
    return isCapturing.is_none() || nb::cast<bool>(isCapturing());
  }

  /// Whether no alias of the tensors of `slot` is left: each storage's use
  /// count back at what it was when only the pool held it.
  bool unaliased(const PooledSet &slot) {
    for (size_t i = 0; i < slot.storages.size(); ++i)
      if (nb::cast<int64_t>(storageUseCount(slot.storages[i])) !=
          slot.poolOnlyUseCounts[i])
        return false;
    return true;
  }

  /// Fills `t` from a torch tensor if it is this path's: a contiguous CUDA
  /// tensor of `dtype` on the model's device.
  bool describe(nb::handle x, const nb::object &dtype, cgrt_dtype code,
                size_t elementSize, cgrt_tensor &t) {
    if (!PyObject_TypeCheck(x.ptr(),
                            reinterpret_cast<PyTypeObject *>(tensorType.ptr())))
      return false;
    if (!x.attr(names.dtype).is(dtype))
      return false;
    if (nb::cast<int>(callMethodOrRaise(x, names.getDevice)) != device)
      return false;
    if (!callMethodOrRaise(x, names.isContiguous).is(nb::handle(Py_True)))
      return false;
    nb::tuple shape = nb::borrow<nb::tuple>(x.attr(names.shape));
    size_t rank = shape.size();
    if (rank > CGRT_MAX_RANK)
      return false;
    std::memset(&t, 0, sizeof t);
    size_t elements = 1;
    for (size_t k = 0; k < rank; ++k) {
      t.dims[k] = nb::cast<int64_t>(shape[k]);
      elements *= static_cast<size_t>(t.dims[k]);
    }
    t.rank = static_cast<int32_t>(rank);
    t.dtype = code;
    t.bytes = elements * elementSize;
    t.data = reinterpret_cast<void *>(
        nb::cast<uintptr_t>(callMethodOrRaise(x, names.dataPtr)));
    t.memory = CGRT_MEMORY_DEVICE;
    return true;
  }

  static void fillOutput(const OutputSpec &o, uintptr_t data, size_t bytes,
                         cgrt_tensor &t) {
    std::memset(&t, 0, sizeof t);
    t.data = reinterpret_cast<void *>(data);
    t.bytes = bytes;
    t.dtype = o.dtype;
    t.rank = static_cast<int32_t>(o.dims.size());
    std::memcpy(t.dims, o.dims.data(), o.dims.size() * sizeof(int64_t));
    t.memory = CGRT_MEMORY_DEVICE;
  }

  /// The caller's `out=` (one tensor, or a sequence of one per output) as
  /// the run's outputs; an invalid handle when one is not this path's. The
  /// runtime checks their shapes and sizes and names a wrong one.
  nb::object takeOut(nb::handle out, cgrt_tensor *outs) {
    nb::object list = PyObject_TypeCheck(
                          out.ptr(),
                          reinterpret_cast<PyTypeObject *>(tensorType.ptr()))
                          ? nb::object(nb::make_tuple(out))
                          : nb::steal(PySequence_Tuple(out.ptr()));
    if (!list.is_valid()) {
      PyErr_Clear();
      return nb::object();
    }
    if (static_cast<size_t>(PyTuple_GET_SIZE(list.ptr())) != outputs.size())
      return nb::object();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const OutputSpec &o = outputs[i];
      nb::handle tensor = PyTuple_GET_ITEM(list.ptr(), i);
      if (!describe(tensor, o.torchDtype, o.dtype,
                    o.bytes / std::max<size_t>(1, elementsOf(o)), outs[i]))
        return nb::object();
    }
    return list;
  }

  static size_t elementsOf(const OutputSpec &o) {
    size_t n = 1;
    for (int64_t d : o.dims)
      n *= static_cast<size_t>(d);
    return n;
  }

  [[noreturn]] void raise(cgrt_status status) {
    int code = static_cast<int>(statusCode(status));
    std::string message = statusMessage(status);
    statusFree(status);
    nb::object error = raiseStatus(code, nb::str(message.c_str()));
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error.ptr())),
                    error.ptr());
    throw nb::python_error();
  }

  /// The attribute and method names a call uses, interned once.
  struct Names {
    nb::str dtype = interned("dtype"), shape = interned("shape"),
            getDevice = interned("get_device"),
            isContiguous = interned("is_contiguous"),
            dataPtr = interned("data_ptr"), detach = interned("detach");
  } names;

  cgrt_model *model;
  int device;
  RunAsyncFn runAsync = nullptr;
  StatusCodeFn statusCode = nullptr;
  StatusMessageFn statusMessage = nullptr;
  StatusFreeFn statusFree = nullptr;
  StreamCapturingFn streamCapturing = nullptr; ///< null: ask torch
  nb::object tensorType, empty, currentStream, raiseStatus;
  nb::object storageUseCount, isCapturing; ///< None: no pool
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<StreamPool> pools;
};

} // namespace

NB_MODULE(_cgc_native, m) {
  m.doc() = "cgc.Model's call path for torch CUDA tensors (see "
            "lib/Bindings/Python/NativeRunner.cpp)";
  m.attr("ABI") = 2;
  nb::class_<Runner>(m, "Runner")
      .def(nb::init<uintptr_t, nb::dict, nb::list, nb::list, int, nb::object,
                    nb::object, nb::object, nb::object, nb::object>(),
           nb::arg("model"), nb::arg("entry_points"), nb::arg("inputs"),
           nb::arg("outputs"), nb::arg("device"), nb::arg("torch"),
           nb::arg("current_stream"), nb::arg("raise_status"),
           nb::arg("storage_use_count").none(),
           nb::arg("is_capturing").none())
      .def("__call__", &Runner::call, nb::arg("args"),
           nb::arg("out").none() = nb::none());
}
