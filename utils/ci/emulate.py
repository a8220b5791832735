#!/usr/bin/env python3
"""Runs a cgc package's kernels on the CPU and compares its outputs with the
reference interpreter's: the generated kernels execute in CI without a GPU.

    emulate.py run PKG --model MODEL [--inputs DIR] [--tol 1e-5]
    emulate.py suite --work DIR [--json F] CASE... (CASE: MODEL[::CGC FLAGS],
                                         or a node test's folder)
    emulate.py summary F...              (one line over several suites)

kernels.cu is compiled once with g++ -O1 as C++ over emulate_shim.h (threads
of a block are fibers, __syncthreads and warp shuffles are barriers, blocks
and the threads of each phase run in a seeded order); the launches come
from the package's metadata.json ("cgraph": the graphs' nodes and the
schedules' steps as the cgraph IR says them), so graphs, conditional nodes
(their condition kernels set the value the emulator reads) and eager steps
run as the runtime would run them, in a seeded topological order of each
graph. Inputs are seeded random values (or a node test's input_<i>.pb,
by the graph's input names); the reference is `cgc-interp` on the same
model and inputs. Float outputs must
agree in relative L2 error within --tol (f16/bf16 outputs: --tol-half),
integer and bool outputs exactly. The suite prints, last, one line:
"emulated N kernels of K kinds (...), worst rel. L2 X".

`mutate`: `emulate.py run PKG ... --mutate 'REGEX=>REPLACEMENT'` edits
kernels.cu before compiling (the pattern must match) and exits 1 when the
outputs still agree: test/Emulation/mutants.test keeps wrong kernels that
must be caught.
"""

import argparse
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

NUMPY = {"CGRT_FLOAT32": np.float32, "CGRT_FLOAT64": np.float64,
         "CGRT_FLOAT16": np.float16, "CGRT_BFLOAT16": np.uint16,
         "CGRT_INT64": np.int64, "CGRT_INT32": np.int32,
         "CGRT_INT16": np.int16, "CGRT_INT8": np.int8,
         "CGRT_UINT64": np.uint64, "CGRT_UINT32": np.uint32,
         "CGRT_UINT16": np.uint16, "CGRT_UINT8": np.uint8,
         "CGRT_BOOL": np.bool_}
ONNX_TYPE = {"CGRT_FLOAT32": 1, "CGRT_UINT8": 2, "CGRT_INT8": 3,
             "CGRT_UINT16": 4, "CGRT_INT16": 5, "CGRT_INT32": 6,
             "CGRT_INT64": 7, "CGRT_BOOL": 9, "CGRT_FLOAT16": 10,
             "CGRT_FLOAT64": 11, "CGRT_UINT32": 12, "CGRT_UINT64": 13,
             "CGRT_BFLOAT16": 16}
ELEMENT = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
           "bf16": np.uint16, "i1": np.uint8, "i8": np.int8, "i16": np.int16,
           "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
           "ui32": np.uint32, "ui64": np.uint64}
FLOATS = ("CGRT_FLOAT32", "CGRT_FLOAT64", "CGRT_FLOAT16", "CGRT_BFLOAT16")
# The types narrower than 16 bits: a byte each in the arena, ml_dtypes'
# types in numpy (their ONNX files pack the 4- and 2-bit ones). Their
# outputs must equal the interpreter's exactly (NaN for NaN, -0 for -0).
NARROW = {"CGRT_FLOAT8E4M3FN": (17, "float8_e4m3fn"),
          "CGRT_FLOAT8E4M3FNUZ": (18, "float8_e4m3fnuz"),
          "CGRT_FLOAT8E5M2": (19, "float8_e5m2"),
          "CGRT_FLOAT8E5M2FNUZ": (20, "float8_e5m2fnuz"),
          "CGRT_UINT4": (21, "uint4"), "CGRT_INT4": (22, "int4"),
          "CGRT_FLOAT4E2M1": (23, "float4_e2m1fn"),
          "CGRT_FLOAT8E8M0": (24, "float8_e8m0fnu"),
          "CGRT_UINT2": (25, "uint2"), "CGRT_INT2": (26, "int2")}
for _name, (_code, _ml) in NARROW.items():
    NUMPY[_name] = np.int8 if _ml in ("int4", "int2") else np.uint8
    ONNX_TYPE[_name] = _code
ELEMENT.update({"f8E4M3FN": np.uint8, "f8E4M3FNUZ": np.uint8,
                "f8E5M2": np.uint8, "f8E5M2FNUZ": np.uint8,
                "f8E8M0FNU": np.uint8, "f4E2M1FN": np.uint8,
                "i4": np.int8, "i2": np.int8, "ui4": np.uint8, "ui2": np.uint8})


def ml_dtype(dtype):
    """The ml_dtypes type of a narrow cgrt dtype."""
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, NARROW[dtype][1]))


def narrow_bits(array, dtype):
    """An ml_dtypes array as the bytes a kernel reads (ints extended)."""
    if "int" in NARROW[dtype][1]:
        return array.astype(NUMPY[dtype])
    return array.astype(ml_dtype(dtype)).view(np.uint8)


def narrow_equal(got, ref, dtype):
    """Equal values (NaN as NaN, zeros by sign) of two narrow tensors."""
    if "int" in NARROW[dtype][1]:
        return np.array_equal(got.astype(np.int64), ref.astype(np.int64))
    g = got.astype(np.uint8).view(ml_dtype(dtype)).astype(np.float64)
    e = ref.astype(ml_dtype(dtype)).astype(np.float64)
    return np.array_equal(g, e, equal_nan=True) and \
        np.array_equal(np.signbit(g), np.signbit(e))

# Device-only statements of the prelude and their host versions; any other
# asm the host compiler reaches aborts (emulate_shim.h's asm macro).
ASM = [
    (r'asm\("cvt\.rn\.f16\.f(?:32|64) %0, %1;" : "=h"\((\w+)\) : "[fd]"\((\w+)\)\);',
     r"\1 = cgc_host_to_f16(\2);"),
    (r'asm\("cvt\.f32\.f16 %0, %1;" : "=f"\((\w+)\) : "h"\((\w+)\)\);',
     r"\1 = cgc_host_from_f16(\2);"),
]
CANARY = 4096  # bytes past the arena that no kernel may touch
# The precisions' error bounds are the Python package's (cgc.BOUNDS), one
# table for every tool that checks a reduced precision.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from cgc._accuracy import BOUNDS  # noqa: E402
# A package compiled with --precision=P rounds its products' inputs: its f32
# outputs are held to the bound issue 15 states for P against the f32
# interpreter (and worst errors are reported apart from the f32 runs'). A
# fragment-layout bug gives errors of order 1, far above these.
PRECISION_TOL = {p: b for p, b in BOUNDS.items() if p != "fp32"}


def reduced_precision(cgc_flags):
    """The --precision=P of a case's flags when P is not fp32, else None."""
    for f in cgc_flags:
        if f.startswith("--precision=") and f.split("=", 1)[1] in PRECISION_TOL:
            return f.split("=", 1)[1]
    return None


class EmulationError(Exception):
    pass


def bf16_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# cuBLASLt nodes' stored types (as the cgraph IR prints them) and sizes.
LIBRARY_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}
LIBRARY_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def round_operand(x, operand):
    """float64 values rounded to the type tensor cores multiply (`tf32`,
    `bf16`, `f16`; None: f32), to nearest even."""
    x = x.astype(np.float32)
    if operand in ("bf16", "tf32"):
        drop = 16 if operand == "bf16" else 13
        bits = x.view(np.uint32).astype(np.uint64)
        bits = (bits + ((1 << (drop - 1)) - 1) + ((bits >> drop) & 1)) \
            >> drop << drop
        x = bits.astype(np.uint32).view(np.float32)
    elif operand == "f16":
        x = x.astype(np.float16).astype(np.float32)
    return x.astype(np.float64)


def conv2d(x, w, pads, strides, dilations, groups):
    """NCHW cross-correlation in float64, symmetric padding."""
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    (ph, pw), (sh, sw), (dh, dw) = pads, strides, dilations
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    p = (h + 2 * ph - (dh * (r - 1) + 1)) // sh + 1
    q = (wd + 2 * pw - (dw * (s - 1) + 1)) // sw + 1
    out = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        xg, wg = xp[:, g * cg:(g + 1) * cg], w[g * kg:(g + 1) * kg]
        for i in range(r):
            for j in range(s):
                patch = xg[:, :, i * dh:i * dh + sh * (p - 1) + 1:sh,
                           j * dw:j * dw + sw * (q - 1) + 1:sw]
                out[:, g * kg:(g + 1) * kg] += np.einsum(
                    "ncpq,kc->nkpq", patch, wg[:, :, i, j])
    return out


def store_as(values, type_name):
    """float64 values as the bytes of a stored f32/f16/bf16 tensor."""
    if type_name != "bf16":
        return values.astype(LIBRARY_TYPES[type_name])
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def host_source(cuda, mutations=()):
    """kernels.cu as host C++: the shim, the kernels (their typedefs are the
    host's), a dispatcher from package kernel index to kernel."""
    for pattern, replacement in mutations:
        cuda, n = re.subn(pattern, replacement, cuda)
        if n == 0:
            raise EmulationError("mutation pattern matched nothing: " + pattern)
    cuda = re.sub(r"(?m)^typedef [a-z ]+ u?int\d+_t;$", "", cuda)
    for pattern, replacement in ASM:
        cuda = re.sub(pattern, replacement, cuda)
    return cuda


def dispatcher(kernels):
    """cgc_dispatch: package kernel index -> the kernel, its parameters cast
    from the launch's argument slots (emulate_shim.h's cgc_call)."""
    text = "static void cgc_dispatch(int k, void **a) {\n  switch (k) {\n"
    for i, name in enumerate(kernels):
        text += "  case %d: cgc_call(%s, a); break;\n" % (i, name)
    return text + "  }\n}\n"


def build(pkg, work, meta, mutations=()):
    """Compiles the package's kernels into a shared library in `work`."""
    cuda = open(os.path.join(pkg, "kernels.cu")).read()
    src = host_source(cuda, mutations)
    text = ('#include "%s"\n' % os.path.join(HERE, "emulate_shim.h") + src +
            "\n" + dispatcher(meta["kernels"]))
    cpp = os.path.join(work, "emu.cpp")
    with open(cpp, "w") as f:
        f.write(text)
    lib = os.path.join(work, "emu.so")
    r = subprocess.run(["g++", "-std=c++17", "-O1", "-w", "-fPIC", "-shared",
                        "-U_FORTIFY_SOURCE", "-fno-strict-aliasing", cpp,
                        "-o", lib], capture_output=True, text=True)
    if r.returncode:
        raise EmulationError("g++ failed on %s:\n%s" % (cpp, r.stderr[-4000:]))
    so = ctypes.CDLL(lib)
    so.cgc_emu_launch.restype = ctypes.c_char_p
    so.cgc_emu_launch.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint),
                                  ctypes.POINTER(ctypes.c_uint),
                                  ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_ulonglong]
    so.cgc_emu_condition.restype = ctypes.c_ulonglong
    return so


def kernel_kind(name, source):
    """(kind, variant): the kernel's family from its name, its strategy from
    the comments the template writes in its body (tile, split-K, pipeline)."""
    kind = re.sub(r"_[0-9a-f]{12,16}$", "", name)
    m = re.search(r"void (?:__launch_bounds__\([\d, ]+\) )?%s\(.*?\n\}\n"
                  % re.escape(name), source, re.S)
    if not m:
        return kind, ""
    notes = re.findall(r"(?m)^  // (.*)$", m.group(0))
    parts = [re.sub(r":\s*(M=|batch=).*", "", n).strip() for n in notes[:1]]
    parts += [n.replace(" main loop", "") for n in notes if n.startswith("cp.async")]
    return kind, ", ".join(p for p in parts if p)


class Runner:
    """Runs a package's schedule over one arena (a numpy byte array)."""

    def __init__(self, so, meta, arena, seed):
        self.so, self.meta, self.arena = so, meta, arena
        self.rng = np.random.default_rng(seed)
        self.base = arena.ctypes.data
        self.launches = {}  # kernel index -> launch count
        self.kernels = meta["kernels"]
        self.shapes = {}  # output index -> the shape an eager op reported

    def launch(self, op, handle=None):
        args = [self.base + a for a in op["args"]]
        if handle is not None:
            args.append(handle)
        argv = (ctypes.c_void_p * max(len(args), 1))(*args)
        grid = (ctypes.c_uint * 3)(*op["grid"])
        block = (ctypes.c_uint * 3)(*op["block"])
        k = op["kernel_index"]
        err = self.so.cgc_emu_launch(k, grid, block, argv,
                                     int(self.rng.integers(1 << 62)))
        if err:
            raise EmulationError("%s: %s" % (self.kernels[k], err.decode()))
        self.launches[k] = self.launches.get(k, 0) + 1

    def copy(self, dst, src, n):
        self.arena[dst:dst + n] = self.arena[src:src + n].copy()

    def order(self, nodes):
        """A graph's nodes in a seeded topological order (dependencies are
        the only order CUDA promises)."""
        done, pending, order = set(), list(nodes), []
        while pending:
            ready = [n for n in pending if all(d in done for d in n["deps"])]
            if not ready:
                raise EmulationError("a graph's dependencies form a cycle")
            node = ready[int(self.rng.integers(len(ready)))]
            pending.remove(node)
            order.append(node)
            done.add(node["node"])
        return order

    def nodes(self, nodes):
        for node in self.order(nodes):
            self.node(node)

    def node(self, n):
        op = n["op"]
        if op == "kernel_node":
            self.launch(n, n.get("condition_handle"))
        elif op == "memcpy_node":
            self.copy(n["dst"], n["src"], n["bytes"])
        elif op == "memset_node":
            self.arena[n["offset"]:n["offset"] + n["bytes"]] = n["value"]
        elif op == "cublaslt_matmul_node":
            self.library_matmul(n)
        elif op == "cudnn_conv_node":
            self.library_conv(n)
        elif op in COLLECTIVES:
            if n["ranks"] != 1:
                raise EmulationError("%s: a collective over %d ranks needs "
                                     "every rank's arena (RankRunners)" %
                                     (n["label"], n["ranks"]))
            COLLECTIVES[op]([self], n)
        elif op == "conditional_node":
            body, other = n["regions"][0], n["regions"][1] if len(n["regions"]) > 1 else []
            if n["kind"] == "while":
                while self.so.cgc_emu_condition(n["handle"]):
                    self.nodes(body)
            elif self.so.cgc_emu_condition(n["handle"]):
                self.nodes(body)
            else:
                self.nodes(other)
        else:
            raise EmulationError("unknown graph node " + op)

    def matrix(self, offset, type_name, shape):
        """A stored f32/f16/bf16 matrix as float64."""
        count = int(np.prod(shape))
        if type_name == "bf16":
            m = bf16_to_float(self.read(offset, np.uint16, count))
        else:
            m = self.read(offset, LIBRARY_TYPES[type_name], count)
        return m.astype(np.float64).reshape(shape)

    def library_matmul(self, n):
        """A cgraph.cublaslt_matmul_node as cuBLASLt computes it: inputs
        rounded to `operand`, products summed in (at least) f32, then alpha,
        beta * C and the bias row; D stored in its type."""
        m, cols, k, batch = n["m"], n["n"], n["k"], n["batch"]
        a_shape = (k, m) if n["trans_a"] else (m, k)
        b_shape = (cols, k) if n["trans_b"] else (k, cols)
        size = {t: LIBRARY_BYTES[n[t]] for t in ("a_type", "b_type", "d_type")}
        alpha, beta = float(n["alpha"]), float(n["beta"])
        operand = n.get("operand")
        for bt in range(batch):
            a = self.matrix(n["a"] + bt * n["stride_a"] * size["a_type"],
                            n["a_type"], a_shape)
            b = self.matrix(n["b"] + bt * n["stride_b"] * size["b_type"],
                            n["b_type"], b_shape)
            a = round_operand(a.T if n["trans_a"] else a, operand)
            b = round_operand(b.T if n["trans_b"] else b, operand)
            d = alpha * (a @ b)
            d_at = n["d"] + bt * n["stride_d"] * size["d_type"]
            if "c" in n:
                d += beta * self.matrix(n["c"] + (d_at - n["d"]), n["d_type"],
                                        (m, cols))
            if "bias" in n:
                d += self.matrix(n["bias"], n["d_type"], (1, cols))
            self.write(d_at, store_as(d, n["d_type"]))

    def library_conv(self, n):
        """A cgraph.cudnn_conv_node as cuDNN is asked to compute it: NCHW
        (NHWC, KRSC, NPQK where channels_last), symmetric pads, strides,
        dilations, groups, the bias per output channel; f32 data given an
        operand rounded to tf32 (what cuDNN's tensor cores take from f32),
        16-bit data as stored."""
        t = n["type"]
        last = bool(n.get("channels_last"))

        def stored(dims):
            # N, C, H, W as the node stores them: channels last moves C.
            return (dims[0], dims[2], dims[3], dims[1]) if last else tuple(dims)

        x = self.matrix(n["x"], t, stored(n["input"]))
        w = self.matrix(n["w"], t, stored(n["filter"]))
        if last:
            x, w = x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2)
        if t == "f32" and n.get("operand"):
            x, w = round_operand(x, "tf32"), round_operand(w, "tf32")
        y = conv2d(x, w, n["pads"], n["strides"], n["dilations"], n["groups"])
        if list(y.shape) != list(n["output"]):
            raise EmulationError("cudnn_conv_node %s: output %s, the "
                                 "convolution gives %s" % (n["label"], n["output"],
                                                           list(y.shape)))
        if "bias" in n:
            y += self.matrix(n["bias"], t, (n["output"][1],))[None, :, None, None]
        if last:
            y = y.transpose(0, 2, 3, 1)
        self.write(n["y"], store_as(y, t))

    def read(self, offset, dtype, count=1):
        return np.frombuffer(self.arena[offset:offset + count * np.dtype(dtype).itemsize]
                             .tobytes(), dtype)

    def host(self, ops):
        for o in ops:
            op = o["op"]
            if op == "launch":
                self.launch(o)
            elif op == "host_copy":
                self.copy(o["dst"], o["src"], o["bytes"])
            elif op == "host_if":
                self.host(o["regions"][0] if self.arena[o["condition"]] else o["regions"][1])
            elif op == "host_loop":
                trips = int(self.read(o["max_trips"], np.int64)[0])
                cond = int(self.arena[o["condition"]])
                self.host(o["regions"][0])
                i = 0
                while i < trips and cond:
                    self.arena[o["iteration"]:o["iteration"] + 8] = \
                        np.frombuffer(np.int64(i).tobytes(), np.uint8)
                    self.arena[o["condition_arg"]] = cond
                    self.host(o["regions"][1])
                    cond = int(self.arena[o["condition_out"]])
                    i += 1
                self.host(o["regions"][2])
            elif op in ("host_nonzero", "host_reshape", "host_compress", "host_unique",
                        "host_non_max_suppression"):
                getattr(self, op)(o)
            else:
                raise EmulationError("eager op %s is not emulated" % op)

    def write(self, offset, array):
        raw = np.frombuffer(np.ascontiguousarray(array).tobytes(), np.uint8)
        self.arena[offset:offset + len(raw)] = raw

    def report(self, outputs, dims):
        for o in outputs:
            self.shapes[o] = [int(d) for d in dims]

    def host_nonzero(self, o):
        x = self.read(o["input"], ELEMENT[o["element_type"]],
                      int(np.prod(o["shape"], dtype=np.int64))).reshape(o["shape"])
        idx = np.array(np.nonzero(x), np.int64).reshape(max(1, len(o["shape"])), -1)
        self.write(o["output"], idx)
        self.report(o["shape_outputs"], idx.shape)

    def host_reshape(self, o):
        shape = [int(v) for v in self.read(o["shape"], np.int64, o["rank"])]
        inp = o["input_shape"]
        dims = [inp[d] if v == 0 and not o["allowzero"] else v for d, v in enumerate(shape)]
        if -1 in dims:
            known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            dims[dims.index(-1)] = int(np.prod(inp, dtype=np.int64)) // known
        self.report(o["shape_outputs"], dims)

    def host_compress(self, o):
        x = self.read(o["input"], np.uint8, o["input_bytes"])
        x = x.reshape(o["outer"], o["count"], o["inner"] * o["element_bytes"])
        cond = self.read(o["condition"], np.uint8, o["conditions"])
        kept = [k for k in range(min(o["count"], o["conditions"])) if cond[k]]
        self.write(o["output"], x[:, kept, :])
        dims = list(o["result_shape"])
        dims[o["axis"]] = len(kept)
        self.report(o["shape_outputs"], dims)

    def host_unique(self, o):
        t = ELEMENT[o["element_type"]]
        outer, n, inner = o["outer"], o["count"], o["inner"]
        x = self.read(o["input"], t, outer * n * inner).reshape(outer, n, inner)
        slices = x.transpose(1, 0, 2).reshape(n, outer * inner)
        _, first, inverse, counts = np.unique(slices, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        m = len(first)
        rank = np.arange(m)
        if not o["sorted"]:
            rank = np.argsort(first, kind="stable")
        position = np.empty(m, np.int64)
        position[rank] = np.arange(m)
        first, counts = first[rank], counts[rank]
        y = x[:, first, :]
        for offset, value in zip(o["results"], (y, first.astype(np.int64),
                                                position[inverse].astype(np.int64),
                                                counts.astype(np.int64))):
            if offset >= 0:
                self.write(offset, value)
        dims = list(o["result_shape"])
        dims[o["axis"]] = m
        self.report(o["shape_outputs"], dims)
        self.report(o["count_outputs"], [m])

    def host_non_max_suppression(self, o):
        """ONNX NonMaxSuppression as ONNX's reference runs it (in the boxes'
        type), written independently of the package's host code."""
        t = ELEMENT[o["element_type"]]
        nb, nc, n = o["batches"], o["classes"], o["count"]
        boxes = self.read(o["boxes"], t, nb * n * 4).reshape(nb, n, 4)
        scores = self.read(o["scores"], t, nb * nc * n).reshape(nb, nc, n)
        limit = max(int(self.read(o["max_output"], np.int64)[0]), 0)
        iou = self.read(o["iou_threshold"], t)[0]
        threshold = self.read(o["score_threshold"], t)[0]

        def extent(box, axis):
            if o["center_point_box"]:
                half = box[axis + 2] / t(2)
                return box[axis] - half, box[axis] + half
            first = 1 - axis  # x from corners 1 and 3, y from 0 and 2
            return min(box[first], box[first + 2]), max(box[first], box[first + 2])

        def suppresses(a, b):
            (ax0, ax1), (bx0, bx1) = extent(a, 0), extent(b, 0)
            (ay0, ay1), (by0, by1) = extent(a, 1), extent(b, 1)
            ix0, ix1 = max(ax0, bx0), min(ax1, bx1)
            iy0, iy1 = max(ay0, by0), min(ay1, by1)
            if ix1 <= ix0 or iy1 <= iy0:
                return False
            inter = (ix1 - ix0) * (iy1 - iy0)
            area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
            union = area_a + area_b - inter
            if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
                return False
            return inter / union > iou

        rows = []
        for b in range(nb):
            for c in range(nc):
                order = sorted((i for i in range(n) if not o["score_threshold_given"]
                                or scores[b, c, i] > threshold),
                               key=lambda i: (-scores[b, c, i], i))
                kept = []
                for i in order:
                    if len(kept) >= limit:
                        break
                    if not any(suppresses(boxes[b, i], boxes[b, k]) for k in kept):
                        kept.append(i)
                        rows.append((b, c, i))
        if rows:
            self.write(o["output"], np.array(rows, np.int64))
        self.report(o["shape_outputs"], [len(rows), 3])

    def run(self, schedule, graphs):
        for step in schedule["steps"]:
            if step["op"] == "replay":
                self.nodes(graphs[step["graph"]])
            elif step["op"] == "eager":
                self.host(step["regions"][0])

    @staticmethod
    def all_reduce(runners, n):
        """A cgraph.nccl_all_reduce_node: the sum of every rank's `send`
        (in float64, rank by rank) stored at each rank's `recv`."""
        total = None
        for r in runners:
            part = r.matrix(n["send"], n["type"], [n["count"]])
            total = part if total is None else total + part
        for r in runners:
            r.write(n["recv"], store_as(total, n["type"]))

    @staticmethod
    def all_gather(runners, n):
        """A cgraph.nccl_all_gather_node: every rank's `send`, rank r's at
        element r x count, stored at each rank's `recv`."""
        parts = [r.matrix(n["send"], n["type"], [n["count"]]) for r in runners]
        stacked = np.concatenate(parts)
        for r in runners:
            r.write(n["recv"], store_as(stacked, n["type"]))


class RankRunners:
    """The ranks of a split package (`cgc --tensor-parallel=N`), one arena
    and Runner each, run in lockstep: every graph's nodes in one seeded
    order, each node on every rank, an all-reduce node once over all."""

    def __init__(self, runners):
        self.runners = runners

    def run(self, schedule, graphs):
        lead = self.runners[0]
        for step in schedule["steps"]:
            if step["op"] == "eager":
                for r in self.runners:
                    r.host(step["regions"][0])
                continue
            for node in lead.order(graphs[step["graph"]]):
                if node["op"] == "conditional_node":
                    raise EmulationError("a split package's conditional "
                                         "nodes are not emulated")
                if node["op"] in COLLECTIVES:
                    COLLECTIVES[node["op"]](self.runners, node)
                else:
                    for r in self.runners:
                        r.node(node)


# The NCCL nodes, each run once over every rank's Runner.
COLLECTIVES = {"nccl_all_reduce_node": Runner.all_reduce,
               "nccl_all_gather_node": Runner.all_gather}


def load_tensor(path):
    """A .npy or TensorProto .pb file as a numpy array (bf16 as uint16)."""
    if path.endswith(".npy"):
        return np.load(path)
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == 16:
        if t.raw_data:
            return np.frombuffer(t.raw_data, np.uint16).reshape(t.dims)
        return np.array(t.int32_data, np.uint16).reshape(t.dims)
    return numpy_helper.to_array(t)  # narrow types: ml_dtypes arrays


def save_tensor(path, array, dtype, name):
    import onnx
    if dtype in NARROW:  # packed as ONNX packs them
        from onnx import numpy_helper
        integer = "int" in NARROW[dtype][1]
        values = array.astype(ml_dtype(dtype)) if integer else \
            array.astype(np.uint8).view(ml_dtype(dtype))
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(values, name).SerializeToString())
        return
    t = onnx.TensorProto()
    t.name = name
    t.data_type = ONNX_TYPE[dtype]
    t.dims.extend(array.shape)
    t.raw_data = array.tobytes()
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def file_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def random_input(info, rng, high=8):
    """Values like cgc-run's: floats in [-1, 1), integers in [0, high)."""
    shape, dt = info["shape"], info["dtype"]
    if dt in FLOATS:
        x = (rng.integers(-(1 << 23), 1 << 23, size=shape) / float(1 << 23))
        if dt == "CGRT_BFLOAT16":
            return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return x.astype(NUMPY[dt])
    if dt == "CGRT_BOOL":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt in NARROW and "int" in NARROW[dt][1]:  # the type's whole range
        import ml_dtypes
        limits = ml_dtypes.iinfo(ml_dtype(dt))
        return rng.integers(int(limits.min), int(limits.max) + 1,
                            size=shape).astype(NUMPY[dt])
    if dt in NARROW:  # every bit pattern (float4: the low four bits)
        top = 16 if dt == "CGRT_FLOAT4E2M1" else 256
        return rng.integers(0, top, size=shape).astype(np.uint8)
    return rng.integers(0, high, size=shape).astype(NUMPY[dt])


def as_float64(array, dtype):
    if dtype == "CGRT_BFLOAT16":
        return bf16_to_float(array).astype(np.float64)
    return array.astype(np.float64)


# The flags of cgc that cgc-interp shares (they change the program), and
# those of them that take their value as the next argument when not given
# as --flag=value.
# --tensor-parallel is not shared: a split package is checked against the
# unsplit model. A data-parallel step is checked against cgc-interp's ranks
# on the whole batch.
SHARED_FLAGS = ("--dim", "--shape", "--bind", "--io-precision", "--train",
                "--loss", "--loss-output", "--optimizer", "--trainable",
                "--steps-per-launch", "--data-parallel")
SEPARATE_VALUE = ("--dim", "--shape", "--bind", "--loss", "--loss-output",
                  "--optimizer", "--trainable", "--steps-per-launch")
# A training step runs this many times, its state carried from step to step
# as the runtime carries it: the later steps read what the earlier wrote.
TRAIN_STEPS = 3


def interp_flags(flags):
    """The flags of cgc that cgc-interp shares."""
    out, take = [], False
    for f in flags:
        if take or f.split("=")[0] in SHARED_FLAGS:
            out.append(f)
            take = not take and f in SEPARATE_VALUE
        else:
            take = False
    return out


def batch_parts(meta):
    """The ranks of a data-parallel training step (each takes its own part
    of the batch); 1 otherwise (tensor-parallel ranks share the inputs)."""
    return meta.get("ranks", 1) if meta.get("state") else 1


def feed(pkg, meta, work, interp, model, inputs_dir, seed, high, cgc_flags):
    """The arena with weights and inputs, and the interpreter's outputs on
    the same inputs: (arena, canary, reference folder, error or None, the
    other ranks' inputs). A data-parallel step's ranks get inputs of their
    own, [(arena offset, bytes)] per rank after the first; the interpreter
    gets them joined along dim 0, the whole batch it cuts again."""
    rng = np.random.default_rng(seed)
    parts = batch_parts(meta)
    if parts > 1 and inputs_dir:
        raise EmulationError("a data-parallel step takes seeded inputs only")
    others = [[] for _ in range(parts - 1)]
    feeds = os.path.join(work, "inputs")
    os.makedirs(feeds, exist_ok=True)
    arena = np.zeros(meta["arena_bytes"] + CANARY, np.uint8)
    canary = np.random.default_rng(1).integers(0, 256, CANARY).astype(np.uint8)
    arena[meta["arena_bytes"]:] = canary
    # A split package's rank 0 (rank_arenas makes the others').
    weights = np.fromfile(os.path.join(pkg, meta.get("rank_weights",
                                                     ["weights.bin"])[0]), np.uint8)
    arena[:len(weights)] = weights
    for i, info in enumerate(meta["inputs"]):
        if any(d < 0 for d in info["shape"]):
            raise EmulationError("input %s has a dynamic shape" % info["name"])
        x = None
        if inputs_dir:
            for cand in (file_name(info["name"]) + ".pb",):
                if os.path.exists(os.path.join(inputs_dir, cand)):
                    x = load_tensor(os.path.join(inputs_dir, cand))
                    if info["dtype"] in NARROW:
                        x = narrow_bits(x, info["dtype"])
                    break
            if x is None:
                raise EmulationError("no input file for %s" % info["name"])
        else:
            x = random_input(info, rng, high)
        x = x.astype(NUMPY[info["dtype"]]).reshape(info["shape"]).copy(order="C")
        whole = x
        if parts > 1 and x.ndim > 0:
            rest = [random_input(info, rng, high).astype(NUMPY[info["dtype"]])
                    .reshape(info["shape"]) for _ in range(parts - 1)]
            for r, y in enumerate(rest):
                others[r].append((info["arena_offset"], np.frombuffer(y.tobytes(), np.uint8)))
            whole = np.concatenate([x] + rest, axis=0)
        elif parts > 1:  # a scalar goes to every rank whole
            for r in range(parts - 1):
                others[r].append((info["arena_offset"], np.frombuffer(x.tobytes(), np.uint8)))
        save_tensor(os.path.join(feeds, file_name(info["name"]) + ".pb"), whole,
                    info["dtype"], info["name"])
        raw = np.frombuffer(x.tobytes(), np.uint8)
        arena[info["arena_offset"]:info["arena_offset"] + len(raw)] = raw
    ref_dir = os.path.join(work, "reference")
    cmd = [interp, model, "--inputs", feeds, "--outputs", ref_dir,
           "--output-format=pb"] + interp_flags(cgc_flags)
    if meta.get("state"):  # the outputs of the last step, the state after it
        cmd += ["--steps", str(TRAIN_STEPS),
                "--state-out", os.path.join(ref_dir, "state")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (arena, canary, ref_dir, (r.stderr[-2000:] if r.returncode else None),
            others)


def rank_arenas(pkg, meta, arena):
    """Every rank's arena of a split package: rank 0's (`arena`, inputs
    written) with each other rank's weights file over its weights region
    (and the same inputs, which a data-parallel step's ranks replace)."""
    arenas = [arena]
    for name in meta.get("rank_weights", [])[1:]:
        other = arena.copy()
        weights = np.fromfile(os.path.join(pkg, name), np.uint8)
        if len(weights) != meta["weights_bytes"]:
            raise EmulationError("%s holds %d bytes, not the weights region's "
                                 "%d" % (name, len(weights), meta["weights_bytes"]))
        other[:len(weights)] = weights
        arenas.append(other)
    return arenas


def run_steps(runner, meta, schedule, graphs):
    """One run, or TRAIN_STEPS of a training step: each writes the updates
    kept apart over their state (cgrt's copyStateUpdates) and the next
    reads the same batch, written again (the arena plan may reuse an
    input's bytes once it has been read)."""
    state = meta.get("state") or []
    steps = TRAIN_STEPS if state else 1
    ranks = getattr(runner, "runners", [runner])
    batches = [[(i["arena_offset"], r.arena[i["arena_offset"]:
                                            i["arena_offset"] + i["bytes"]].copy())
                for i in meta["inputs"]] for r in ranks]
    for _ in range(steps):
        for r, batch in zip(ranks, batches):
            for offset, raw in batch:
                r.arena[offset:offset + len(raw)] = raw
        runner.run(schedule, graphs)
        for r in ranks:
            for st in state:
                if st["update_offset"] != st["arena_offset"]:
                    r.copy(st["arena_offset"], st["update_offset"], st["bytes"])


def compare(got, ref, dt, tol, tol_half):
    """(relative L2 error, its limit) of an output of dtype `dt`."""
    if ref.size != got.size:
        return float("inf"), 0.0
    if dt in NARROW:
        return (0.0 if narrow_equal(got, ref.reshape(got.shape), dt)
                else float("inf")), 0.0
    if dt in FLOATS:
        g, e = as_float64(got, dt), as_float64(ref.reshape(got.shape), dt)
        finite = np.isfinite(e)
        if not np.array_equal(np.isnan(g), np.isnan(e)) or \
                not np.array_equal(g[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)]):
            err = float("inf")
        else:
            diff = np.linalg.norm(g[finite] - e[finite])
            norm = np.linalg.norm(e[finite])
            err = float(diff / norm) if norm > 0 else float(diff)
        if dt in ("CGRT_FLOAT32", "CGRT_FLOAT64"):
            return err, tol
        # A bf16 output's own rounding (half of 2^-8) is above tol_half's
        # 1e-3 wherever two computations differ at all (a bf16 model's
        # kernels keep fused intermediates in f32, the interpreter rounds
        # every op): bf16's bound.
        if dt == "CGRT_BFLOAT16":
            return err, max(tol_half, PRECISION_TOL["bf16"])
        return err, tol_half
    return (0.0 if np.array_equal(got, ref.reshape(got.shape).astype(got.dtype))
            else float("inf")), 0.0


def run_set(so, pkg, meta, schedule, work, interp, model, inputs_dir, seed,
            tol, tol_half, cgc_flags):
    """One graph set: feeds the inputs, runs `schedule`, compares the
    outputs. Returns (worst f32/f64 error, outputs, launches)."""
    # Integer inputs are indices more often than not: when the interpreter
    # finds one out of range, smaller values.
    for high in (8, 4, 2):
        arena, canary, ref_dir, err, others = feed(pkg, meta, work, interp, model,
                                                   inputs_dir, seed, high, cgc_flags)
        if not err or inputs_dir or ("range" not in err and
                                     "not a class index" not in err):
            break
    if err:
        raise EmulationError("cgc-interp failed: " + err)
    graphs = {g["name"]: g["nodes"] for g in meta["cgraph"]["graphs"]}
    arenas = rank_arenas(pkg, meta, arena)
    for a, inputs in zip(arenas[1:], others):
        for offset, raw in inputs:
            a[offset:offset + len(raw)] = raw
    runners = [Runner(so, meta, a, seed) for a in arenas]
    runner = runners[0] if len(runners) == 1 else RankRunners(runners)
    run_steps(runner, meta, schedule, graphs)
    for a in arenas:
        if not np.array_equal(a[meta["arena_bytes"]:], canary):
            raise EmulationError("a kernel wrote past the end of the arena")
    # The outputs (a training step's come first in the interpreter's
    # results, its updates after them), then a training step's state.
    checked = []
    for i, info in enumerate(meta["outputs"]):
        shape = runners[0].shapes.get(i, info["shape"])
        if any(d < 0 for d in shape):
            raise EmulationError("output %s: no shape reported" % info["name"])
        checked.append((info, shape, os.path.join(ref_dir, "output_%d.pb" % i)))
    for st in meta.get("state") or []:
        checked.append((dict(st, name="state " + st["name"]), st["shape"],
                        os.path.join(ref_dir, "state", file_name(st["name"]) + ".npy")))
    worst, outs = 0.0, []
    # Every rank computes the whole output: each is checked.
    for rank, a in enumerate(arenas):
        for info, shape, ref_file in checked:
            dt = info["dtype"]
            n = int(np.prod(shape, dtype=np.int64)) * np.dtype(NUMPY[dt]).itemsize
            got = np.frombuffer(a[info["arena_offset"]:info["arena_offset"] + n].tobytes(),
                                NUMPY[dt]).reshape(shape)
            ref = np.load(ref_file) if ref_file.endswith(".npy") else load_tensor(ref_file)
            err, limit = compare(got, ref, dt, tol, tol_half)
            outs.append({"name": info["name"] + ("@rank%d" % rank if rank else ""),
                         "dtype": dt, "rel_l2": err,
                         "sha1": hashlib.sha1(got.tobytes()).hexdigest(),
                         "ok": err <= limit, "half": dt not in ("CGRT_FLOAT32", "CGRT_FLOAT64") and dt in FLOATS})
            if dt in ("CGRT_FLOAT32", "CGRT_FLOAT64") or err > limit:
                worst = max(worst, err)
    launches = {}
    for r in runners:
        for k, c in r.launches.items():
            launches[k] = launches.get(k, 0) + c
    return worst, outs, launches


def emulate(pkg, model, work, interp, inputs_dir=None, seed=0, tol=1e-5,
            tol_half=1e-3, mutations=(), cgc_flags=()):
    """Emulates `pkg` and compares with cgc-interp on `model`. Returns a
    result dict (worst error, per-output errors, launched kernels). A
    package of shape buckets runs every bucket's schedule on its own inputs
    (the interpreter with that value of the dim)."""
    meta = json.load(open(os.path.join(pkg, "metadata.json")))
    if "cgraph" not in meta:
        raise EmulationError("metadata.json has no cgraph section")
    t0 = time.time()
    so = build(pkg, work, meta, mutations)
    t_build = time.time() - t0
    schedules = meta["cgraph"]["schedules"]
    sets = [(meta, schedules[-1], list(cgc_flags), "")]
    if meta.get("bucket_dim"):
        dim = meta["bucket_dim"]
        flags = [f for f in interp_flags(cgc_flags) if dim + "=" not in f and f != "--dim"]
        sets = []
        for bucket in meta["buckets"]:
            v = bucket["value"]
            schedule = [x for x in schedules if x.get("bucket") == v]
            if len(schedule) != 1:
                raise EmulationError("no schedule for bucket %s=%d" % (dim, v))
            sets.append((dict(meta, inputs=bucket["inputs"], outputs=bucket["outputs"],
                              arena_bytes=bucket["arena_bytes"]),
                         schedule[0], flags + ["--dim=%s=%d" % (dim, v)],
                         "@%s=%d" % (dim, v)))
    precision = reduced_precision(cgc_flags)
    if precision:
        # Outputs in a 16-bit type (--io-precision) carry the products'
        # error too: the same bound.
        tol = max(tol, PRECISION_TOL[precision])
        tol_half = max(tol_half, PRECISION_TOL[precision])
    t1 = time.time()
    try:
        worst, outs, launches = 0.0, [], {}
        for set_meta, schedule, flags, tag in sets:
            sub = os.path.join(work, "set" + re.sub(r"[^A-Za-z0-9]", "_", tag))
            os.makedirs(sub, exist_ok=True)
            w, o, l = run_set(so, pkg, set_meta, schedule, sub, interp, model, inputs_dir,
                              seed, tol, tol_half, flags)
            worst = max(worst, w)
            for x in o:
                x["name"] += tag
                x["precision"] = precision
            outs += o
            for k, c in l.items():
                launches[k] = launches.get(k, 0) + c
    finally:  # a suite loads many packages: their fiber stacks and code go
        so.cgc_emu_release()
        import _ctypes
        _ctypes.dlclose(so._handle)
    t_run = time.time() - t1
    source = open(os.path.join(pkg, "kernels.cu")).read()
    kernels = [{"name": meta["kernels"][k], "launches": c,
                "kind": kernel_kind(meta["kernels"][k], source)[0],
                "variant": kernel_kind(meta["kernels"][k], source)[1]}
               for k, c in sorted(launches.items())]
    return {"ok": all(o["ok"] for o in outs), "worst": worst, "outputs": outs,
            "kernels": kernels, "build_s": t_build, "run_s": t_run}


def compile_model(cgc, model, out, flags):
    r = subprocess.run([cgc, model, "-o", out, "--emit=package"] + list(flags),
                       capture_output=True, text=True)
    if r.returncode:
        raise EmulationError("cgc failed: " + r.stderr[-2000:])


def parse_mutation(text):
    pattern, sep, replacement = text.partition("=>")
    if not sep:
        raise SystemExit("--mutate takes 'REGEX=>REPLACEMENT'")
    return pattern, replacement


def cmd_run(args):
    mutations = [parse_mutation(m) for m in args.mutate]
    with tempfile.TemporaryDirectory(prefix="cgc-emu-") as work:
        try:
            res = emulate(args.pkg, args.model, work, args.interp, args.inputs,
                          args.seed, args.tol, args.tol_half, mutations)
        except EmulationError as e:
            print("emulate: %s" % e)
            if mutations and not str(e).startswith(("mutation pattern", "g++ failed")):
                print("mutant killed (the emulator reported an error)")
                return 0
            return 2
    for o in res["outputs"]:
        print("%-24s %-14s rel. L2 %.2e %s" % (o["name"], o["dtype"], o["rel_l2"],
                                             "ok" if o["ok"] else "MISMATCH"))
    print("%d kernels, worst rel. L2 %.2e (build %.1fs, run %.1fs)" %
          (len(res["kernels"]), res["worst"], res["build_s"], res["run_s"]))
    if mutations:
        print("mutant %s" % ("survived" if res["ok"] else "killed"))
        return 1 if res["ok"] else 0
    return 0 if res["ok"] else 1


def node_test_inputs(model, data, work):
    """A node test's inputs by name (NAME.pb), from input_<i>.pb in the
    order of the graph's inputs; returns (folder, name -> file)."""
    import onnx
    graph = onnx.load(model, load_external_data=False).graph
    init = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in init]
    out = os.path.join(work, "node-inputs")
    os.makedirs(out, exist_ok=True)
    files = {}
    for k, name in enumerate(names):
        src = os.path.join(data, "input_%d.pb" % k)
        if os.path.exists(src):
            files[name] = src
            dst = os.path.join(out, file_name(name) + ".pb")
            if not os.path.exists(dst):
                os.symlink(src, dst)
    return out, files


def suite_case(args, index, spec):
    """One case: MODEL[::FLAGS] or a node test folder (node:DIR)."""
    model, _, flags = spec.partition("::")
    flags = flags.split() if flags else []
    inputs = None
    if os.path.isdir(model):  # an ONNX backend node test
        inputs = os.path.join(model, "test_data_set_0")
        model = os.path.join(model, "model.onnx")
    tag = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(os.path.dirname(model))
                 if inputs else os.path.basename(model)) + \
        ("_" + re.sub(r"[^A-Za-z0-9]", "_", "".join(flags)) if flags else "")
    case_dir = os.path.join(args.work, "%03d-%s" % (index, tag))
    os.makedirs(case_dir, exist_ok=True)
    t0 = time.time()
    try:
        pkg = os.path.join(case_dir, "pkg")
        if inputs:
            inputs, binds = node_test_inputs(model, inputs, case_dir)
            for attempt in range(8):  # bind what cgc needs at compile time
                try:
                    compile_model(args.cgc, model, pkg, flags)
                    break
                except EmulationError as e:
                    wanted = re.findall(r"--bind (\S+)=FILE\.pb", str(e))
                    if not wanted or attempt == 7:
                        raise
                    flags += ["--bind=%s=%s" % (n, binds[n]) for n in wanted
                              if "--bind=%s=%s" % (n, binds[n]) not in flags]
        else:
            compile_model(args.cgc, model, pkg, flags)
        res = emulate(pkg, model, case_dir, args.interp, inputs, args.seed,
                      args.tol, args.tol_half, cgc_flags=flags)
    except Exception as e:  # a case's failure, whatever it is, is reported
        res = {"ok": False, "error": "%s: %s" % (type(e).__name__, e), "kernels": [], "worst": float("inf"),
               "outputs": []}
    res["case"], res["seconds"] = tag, time.time() - t0
    return res


def summary(results, verbose=False):
    """The closing line: kernels launched, by kind, the template variants
    (tile, split-K, pipeline), the worst errors and the failures."""
    kinds, variants, launched, worst = {}, {}, 0, 0.0
    for r in results:
        worst = max(worst, r["worst"])
        for k in r["kernels"]:
            launched += 1
            kinds[k["kind"]] = kinds.get(k["kind"], 0) + 1
            v = re.sub(r", \d+ per thread|, \d+x\d+ per thread|, \d+ slice\(s\)", "",
                       k["variant"])
            if v:
                variants[(k["kind"], v)] = variants.get((k["kind"], v), 0) + 1
    lines = []
    if verbose:
        for (kind, v), n in sorted(variants.items()):
            lines.append("  variant %-14s %-40s x%d" % (kind, v, n))
    by_kind = ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
    halves = [o["rel_l2"] for r in results for o in r["outputs"]
              if o["half"] and o["ok"] and not o.get("known")]
    reduced = {}
    for r in results:
        for o in r["outputs"]:
            if o.get("precision") and o["ok"]:
                p = o["precision"]
                reduced[p] = max(reduced.get(p, 0.0), o["rel_l2"])
    # The f32 worst leaves out the reduced-precision runs' (reported apart)
    # as run_set's leaves out passing f16/bf16 outputs.
    worst = max([0.0] + [o["rel_l2"] for r in results for o in r["outputs"]
                         if not o["ok"] or not (o["half"] or o.get("precision"))] +
                [r["worst"] for r in results if not r["outputs"]])
    failed = sum(not r["ok"] for r in results)
    lines.append("emulated %d kernels of %d kinds (%s), %d variants, worst rel. L2 %.2e%s%s%s" % (
        launched, len(kinds), by_kind, len(variants), worst,
        " (f16/bf16 outputs %.2e)" % max(halves) if halves else "",
        "".join(", --precision=%s %.2e" % kv for kv in sorted(reduced.items())),
        ", %d FAILED" % failed if failed else ""))
    return "\n".join(lines)


def cmd_summary(args):
    """One line over the --json files of several suites."""
    results = []
    for path in args.files:
        with open(path) as f:
            results += json.load(f)
    print(summary(results))
    return 0


def cmd_same(args):
    """Whether two cases of one suite's --json file (named as the suite
    prints them) gave bit-identical outputs: a transformation that must not
    change any value (--narrow-storage) against the package without it."""
    with open(args.json) as f:
        by_case = {r["case"]: r for r in json.load(f)}
    missing = [c for c in (args.first, args.second) if c not in by_case]
    if missing:
        print("no case %s in %s" % (", ".join(missing), args.json))
        return 1
    a, b = by_case[args.first]["outputs"], by_case[args.second]["outputs"]
    differ = [x["name"] for x, y in zip(a, b) if x.get("sha1") != y.get("sha1")]
    if len(a) != len(b) or not a or differ:
        print("outputs differ: %s" % (", ".join(differ) or "%d against %d outputs" % (len(a), len(b))))
        return 1
    print("identical outputs: %d" % len(a))
    return 0


def cmd_suite(args):
    specs = list(args.cases)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda i: suite_case(args, i, specs[i]),
                                range(len(specs))))
    known = {}
    for k in args.known_mismatch:
        case, _, output = k.partition(":")
        known.setdefault(case, set()).add(output)
    failed = 0
    for r in results:
        expected = known.get(r["case"], set())
        detail = r.get("error") or ""
        stale = False
        for o in r["outputs"]:
            if o["name"] in expected and o["ok"]:
                stale = True
                detail += "%s matches now: drop its --known-mismatch " % o["name"]
            elif o["name"] in expected:
                o["ok"] = o["known"] = True
                detail += "%s %.1e (known mismatch) " % (o["name"], o["rel_l2"])
            elif not o["ok"]:
                detail += "%s %.1e " % (o["name"], o["rel_l2"])
        if "error" not in r:
            r["ok"] = not stale and all(o["ok"] for o in r["outputs"])
            r["worst"] = max([o["rel_l2"] for o in r["outputs"]
                              if o["name"] not in expected and not o["half"]] + [0.0])
        status = "ok" if r["ok"] else "FAIL"
        failed += not r["ok"]
        print("%-4s %-40s %3d kernels  worst rel. L2 %.2e  %.1fs %s" % (
            status, r["case"], len(r["kernels"]), r["worst"], r["seconds"], detail))
    print(summary(results, args.verbose))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "suite"):
        p = sub.add_parser(name)
        p.add_argument("--interp", default="cgc-interp")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--tol", type=float, default=1e-5,
                       help="relative L2 limit of f32/f64 outputs")
        p.add_argument("--tol-half", type=float, default=1e-3,
                       help="relative L2 limit of f16/bf16 outputs")
    run = sub.choices["run"]
    run.add_argument("pkg")
    run.add_argument("--model", required=True)
    run.add_argument("--inputs", help="folder of NAME.pb input files")
    run.add_argument("--mutate", action="append", default=[],
                     help="'REGEX=>REPLACEMENT' applied to kernels.cu")
    sub.add_parser("summary", help="one line over suites' --json files").add_argument(
        "files", nargs="+")
    same = sub.add_parser("same", help="whether two cases of a suite's --json "
                          "gave bit-identical outputs")
    same.add_argument("json")
    same.add_argument("first")
    same.add_argument("second")
    suite = sub.choices["suite"]
    suite.add_argument("cases", nargs="+",
                       help="MODEL[::CGC FLAGS] or a node test folder")
    suite.add_argument("--cgc", default="cgc")
    suite.add_argument("--work", required=True)
    suite.add_argument("--jobs", type=int, default=2)
    suite.add_argument("--json")
    suite.add_argument("--verbose", action="store_true")
    suite.add_argument("--known-mismatch", action="append", default=[],
                       metavar="CASE:OUTPUT",
                       help="an output known to mismatch (a kernel bug on record): "
                            "reported, not failed; fails once it matches")
    args = parser.parse_args()
    sys.exit({"run": cmd_run, "suite": cmd_suite, "summary": cmd_summary,
              "same": cmd_same}[args.command](args))


if __name__ == "__main__":
    main()
