#!/usr/bin/env python3
"""ptxas resource use of every kernel of cgc packages: what the emulator
cannot see (registers, spills, shared memory), from NVRTC without a GPU.

    emulate_ptxas.py PKG... [--max-registers 255] [--max-spill 0]

Compiles each package's kernels.cu with NVRTC as cgc does (-arch=sm_XX of
metadata.json, -std=c++17) plus --ptxas-options=-v, whose program log
holds one "Used N registers, used B barriers, S bytes smem" line per kernel
and its spill stores/loads. Prints a table and exits 1 when a kernel spills
more than --max-spill bytes, uses more than --max-registers registers, or
more shared memory than the target allows a block (static: 48 KiB).
"""

import argparse
import ctypes
import json
import os
import re
import sys

STATIC_SHARED_LIMIT = 48 * 1024


def nvrtc_log(source, arch):
    lib = ctypes.CDLL("libnvrtc.so")
    prog = ctypes.c_void_p()
    src = source.encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    # cgc's options (lib/Codegen/NVRTC.cpp) and ptxas's report.
    opts = [b"-arch=" + arch.encode(), b"-std=c++17", b"-default-device",
            b"-lineinfo", b"--ptxas-options=-v"]
    argv = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc:
        raise RuntimeError("NVRTC failed:\n" + log.value.decode())
    return log.value.decode()


def parse(log):
    """{kernel: {registers, spill_stores, spill_loads, smem, stack}}"""
    kernels, current = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = kernels.setdefault(m.group(1), {"registers": 0, "spill_stores": 0,
                                                      "spill_loads": 0, "smem": 0,
                                                      "stack": 0})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
    return kernels


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("packages", nargs="+")
    p.add_argument("--max-registers", type=int, default=255)
    p.add_argument("--max-spill", type=int, default=0)
    args = p.parse_args()
    bad, total, worst = [], 0, {"registers": 0, "spill": 0, "smem": 0}
    print("%-44s %5s %7s %7s %6s" % ("kernel", "regs", "spill", "smem", "stack"))
    for pkg in args.packages:
        meta = json.load(open(os.path.join(pkg, "metadata.json")))
        source = open(os.path.join(pkg, "kernels.cu")).read()
        kernels = parse(nvrtc_log(source, meta["arch"]))
        missing = set(meta["kernels"]) - set(kernels)
        if missing:
            bad.append("%s: no ptxas report for %s" % (pkg, ", ".join(sorted(missing))))
        print("# %s (%s)" % (os.path.basename(pkg.rstrip("/")), meta["arch"]))
        for name in meta["kernels"]:
            k = kernels.get(name)
            if not k:
                continue
            total += 1
            spill = k["spill_stores"] + k["spill_loads"]
            worst["registers"] = max(worst["registers"], k["registers"])
            worst["spill"] = max(worst["spill"], spill)
            worst["smem"] = max(worst["smem"], k["smem"])
            print("%-44s %5d %7d %7d %6d" % (name, k["registers"], spill, k["smem"], k["stack"]))
            if spill > args.max_spill:
                bad.append("%s spills %d bytes" % (name, spill))
            if k["registers"] > args.max_registers:
                bad.append("%s uses %d registers" % (name, k["registers"]))
            if k["smem"] > STATIC_SHARED_LIMIT:
                bad.append("%s uses %d bytes of static shared memory" % (name, k["smem"]))
    for b in bad:
        print("ptxas: " + b)
    print("ptxas: %d kernels, at most %d registers, %d spill bytes, %d bytes smem%s" % (
        total, worst["registers"], worst["spill"], worst["smem"],
        ", %d over the bounds" % len(bad) if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
