#!/usr/bin/env python3
"""Runs a cgc package's kernels on the host CPU, to check generated kernels
on a machine without a GPU (slowly: every CUDA thread is a host thread).

    host_emulate.py PKG --model MODEL.onnx [--seed 0] [--rtol 1e-4]

kernels.cu is compiled as C++ with a small shim (blocks run one after the
other, the 256 threads of a block as std::threads; __syncthreads is a
barrier, warp shuffles go through shared slots and barriers, so every
thread of the block must reach them, as in the generated templates). The
launches, arena offsets and grids come from the package's model.cpp; inputs
are seeded random data, the reference is onnxruntime (CPU). Single-island
packages only (no eager regions). Prints the worst relative L2 error per
output and exits 1 above --rtol.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SHIM = r"""
#include <barrier>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
using namespace std;
struct cgc_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local cgc_dim3 threadIdx, blockIdx;
static cgc_dim3 blockDim, gridDim;
static std::barrier<> *cgc_block_barrier;
static inline void __syncthreads() { cgc_block_barrier->arrive_and_wait(); }
static unsigned long long cgc_slots[1024];
template <typename T> static T cgc_shuffle(T v, int src) {
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof v);
  cgc_slots[threadIdx.x] = bits;
  __syncthreads();
  T r = v;
  if (src >= 0 && (src >> 5) == (int)(threadIdx.x >> 5)) memcpy(&r, &cgc_slots[src], sizeof r);
  __syncthreads();
  return r;
}
template <typename T> static T __shfl_down_sync(unsigned, T v, int o) {
  int lane = threadIdx.x & 31;
  return cgc_shuffle(v, lane + o < 32 ? (int)threadIdx.x + o : -1);
}
template <typename T> static T __shfl_xor_sync(unsigned, T v, int o) {
  return cgc_shuffle(v, (int)threadIdx.x ^ o);
}
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
#include <mutex>
static std::mutex cgc_atomic_mutex;
static inline float atomicAdd(float *p, float v) {
  std::lock_guard<std::mutex> lock(cgc_atomic_mutex);
  float old = *p;
  *p = old + v;
  return old;
}
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define asm(...) (void)0
"""

DRIVER = r"""
typedef void (*cgc_fn)();
struct Node { int kernel; std::vector<unsigned long long> offsets; unsigned grid, block; };
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "rb");
  std::vector<unsigned char> arena(@ARENA@ + 256);
  unsigned char *base = arena.data();
  fread(base, 1, @ARENA@, f);
  fclose(f);
  std::vector<Node> nodes = {@NODES@};
  for (const Node &n : nodes) {
    gridDim.x = n.grid; blockDim.x = n.block;
    std::vector<void *> a;
    for (auto o : n.offsets) a.push_back(base + o);
    cgc_block_barrier = new std::barrier<>(n.block);
    std::barrier<void (*)() noexcept> join(n.block, []() noexcept {
      delete cgc_block_barrier;
      cgc_block_barrier = new std::barrier<>(blockDim.x);
    });
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n.block; ++t)
      threads.emplace_back([&, t]() {
        threadIdx.x = t;
        for (unsigned b = 0; b < n.grid; ++b) {
          blockIdx.x = b;
          cgc_launch(n.kernel, a.data());
          cgc_block_barrier->arrive_and_drop();
          join.arrive_and_wait();
        }
      });
    for (auto &t : threads) t.join();
    delete cgc_block_barrier;
  }
  f = fopen(argv[2], "wb");
  fwrite(base, 1, @ARENA@, f);
  fclose(f);
  return 0;
}
"""

DTYPES = {"CGRT_FLOAT32": np.float32, "CGRT_FLOAT64": np.float64,
          "CGRT_INT64": np.int64, "CGRT_INT32": np.int32,
          "CGRT_BOOL": np.bool_, "CGRT_UINT8": np.uint8, "CGRT_INT8": np.int8}


def build(pkg, work):
    src = open(os.path.join(pkg, "kernels.cu")).read()
    # The host has its own fixed-width integer types.
    src = re.sub(r"(?m)^typedef [a-z ]+ u?int\d+_t;$", "", src)
    model = open(os.path.join(pkg, "model.cpp")).read()
    meta = json.load(open(os.path.join(pkg, "metadata.json")))
    names = meta["kernels"]
    sigs = {}
    for m in re.finditer(r'extern "C" __global__ void __launch_bounds__\([\d, ]+\) '
                         r'(\w+)\(([^)]*)\)', src):
        sigs[m.group(1)] = m.group(2).count(",") + 1 if m.group(2) else 0
    nodes = []
    for m in re.finditer(
            r"CUdeviceptr ([^;]*);.*?env->kernels\[(\d+)\];\s*"
            r"p\.gridDimX = (\d+);.*?p\.blockDimX = (\d+);", model, re.S):
        offsets = re.findall(r"env->arena \+ (\d+)ull", m.group(1))
        nodes.append("{%s, {%s}, %s, %s}" % (m.group(2), ", ".join(
            o + "ull" for o in offsets), m.group(3), m.group(4)))
    launch = "static void cgc_launch(int k, void **a) {\n  switch (k) {\n"
    for i, name in enumerate(names):
        args = ", ".join("(decltype(cgc_arg<%d>(%s)))a[%d]" % (j, name, j)
                         for j in range(sigs[name]))
        launch += "  case %d: %s(%s); break;\n" % (i, name, args)
    launch += "  }\n}\n"
    helper = ("template <int I, typename R, typename... P> auto cgc_arg(R (*)(P...)) "
              "{ return std::get<I>(std::tuple<P...>()); }\n")
    text = SHIM + "#include <tuple>\n" + src + "\n" + helper + launch + DRIVER.replace("@ARENA@", str(meta["arena_bytes"])).replace(
            "@NODES@", ", ".join(nodes))
    cpp = os.path.join(work, "emu.cpp")
    open(cpp, "w").write(text)
    exe = os.path.join(work, "emu")
    subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-pthread", cpp, "-o",
                    exe], check=True)
    return exe, meta


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pkg")
    parser.add_argument("--model", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    import onnxruntime as ort
    with tempfile.TemporaryDirectory(prefix="cgc-emu-") as work:
        worst = emulate(args, work, ort)
    sys.exit(0 if worst <= args.rtol else 1)


def emulate(args, work, ort):
    """Builds and runs the emulator in `work`; returns the worst relative L2
    error of the outputs against onnxruntime."""
    exe, meta = build(args.pkg, work)
    arena = np.zeros(meta["arena_bytes"], np.uint8)
    weights = np.fromfile(os.path.join(args.pkg, "weights.bin"), np.uint8)
    arena[:len(weights)] = weights
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for info in meta["inputs"]:
        dt = DTYPES[info["dtype"]]
        if np.issubdtype(dt, np.integer):
            x = rng.integers(0, 50, size=info["shape"]).astype(dt)
        else:
            x = rng.standard_normal(info["shape"]).astype(dt)
        feeds[info["name"]] = x
        raw = x.tobytes()
        arena[info["arena_offset"]:info["arena_offset"] + len(raw)] = \
            np.frombuffer(raw, np.uint8)
    arena.tofile(os.path.join(work, "in.bin"))
    subprocess.run([exe, os.path.join(work, "in.bin"),
                    os.path.join(work, "out.bin")], check=True)
    out = np.fromfile(os.path.join(work, "out.bin"), np.uint8)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(args.model, options,
                                   providers=["CPUExecutionProvider"])
    refs = dict(zip([o.name for o in session.get_outputs()],
                    session.run(None, feeds)))
    worst = 0.0
    for info in meta["outputs"]:
        dt = DTYPES[info["dtype"]]
        n = int(np.prod(info["shape"])) * np.dtype(dt).itemsize
        got = np.frombuffer(out[info["arena_offset"]:info["arena_offset"] + n]
                            .tobytes(), dt).reshape(info["shape"])
        ref = refs[info["name"]].astype(np.float64)
        err = float(np.linalg.norm(got.astype(np.float64) - ref) /
                    max(np.linalg.norm(ref), 1e-30))
        worst = max(worst, err)
        print("%-20s rel L2 %.2e  (norm %.3e)" % (info["name"], err, np.linalg.norm(ref)))
    return worst


if __name__ == "__main__":
    main()
