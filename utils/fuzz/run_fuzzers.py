#!/usr/bin/env python3
"""Runs the importer fuzzers for a bounded time and reports what they found.

    utils/fuzz/run_fuzzers.py --build build-asan --seconds 60

Each libFuzzer target (cgc-fuzz-bytes, cgc-fuzz-proto; built with
CGC_FUZZ=ON, see docs/reliability.md) runs in fork mode for --seconds, so
one crash does not end the run: crashes, leaks, timeouts and out-of-memory
inputs are all saved under OUT/<target>/ and the run goes on. The corpus
starts from test/fuzz/corpus, test/fuzz/regressions and, when libonnx-testdata
is installed, the ONNX backend node models. Every crash is then replayed to
name it by the first stack frame in cgc's own sources, so the same bug
found twice counts once. Prints, per target,

    fuzz: cgc-fuzz-bytes: 41000 executions in 60 s, 0 crashes (0 unique), 0 timeouts, 0 ooms

and exits with status 1 when any target crashed, timed out or ran out of
memory (a saved input then becomes a regression in test/fuzz/regressions).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = ["cgc-fuzz-bytes", "cgc-fuzz-proto"]
BACKEND = "/usr/include/onnx/backend/test/data/node"
# Why allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in
# instrumented code (our TUs) but the prebuilt, uninstrumented LLVM never
# unpoisons them, which ASan reports as use-after-poison.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "abort_on_error=1:allow_user_poisoning=0:"
                    "detect_leaks=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:abort_on_error=1",
}


def seed_dirs(work):
    dirs = [os.path.join(ROOT, "test", "fuzz", "corpus"),
            os.path.join(ROOT, "test", "fuzz", "regressions")]
    models = sorted(glob.glob(os.path.join(BACKEND, "*", "model.onnx")))
    if models:
        backend = os.path.join(work, "seeds-backend")
        os.makedirs(backend, exist_ok=True)
        for model in models:
            name = os.path.basename(os.path.dirname(model)) + ".onnx"
            shutil.copyfile(model, os.path.join(backend, name))
        dirs.append(backend)
    return [d for d in dirs if os.path.isdir(d)]


def crash_key(binary, artifact, env):
    """The first stack frame in cgc's sources (lib/, include/, test/) of the
    crash `artifact` reproduces, or the sanitizer's summary line."""
    proc = subprocess.run([binary, artifact], env=env, capture_output=True,
                          text=True, errors="replace", timeout=300)
    log = proc.stdout + proc.stderr
    for line in log.splitlines():
        m = re.match(r"\s*#\d+ 0x[0-9a-f]+ in (.+) (/\S+?):(\d+)", line)
        if m and m.group(2).startswith(ROOT + "/") and \
                not m.group(2).startswith(os.path.join(ROOT, "test", "fuzz")):
            return f"{m.group(1)} {os.path.relpath(m.group(2), ROOT)}:{m.group(3)}"
    for line in log.splitlines():
        if line.startswith("SUMMARY:") or "CHECK failed" in line:
            return line.strip()
    return "no reproducible stack (" + os.path.basename(artifact) + ")"


def run_target(binary, out, seeds, seconds, env, jobs):
    target = os.path.basename(binary)
    work = os.path.join(out, target)
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    cmd = [binary, corpus, *seeds, f"-max_total_time={seconds}",
           "-timeout=10", "-rss_limit_mb=2560", "-max_len=65536",
           f"-fork={jobs}", "-ignore_crashes=1", "-ignore_ooms=1",
           "-ignore_timeouts=1", f"-artifact_prefix={work}/",
           "-print_final_stats=1"]
    with open(os.path.join(work, "log.txt"), "w") as log:
        subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                       timeout=seconds + 600)
    text = open(os.path.join(work, "log.txt"), errors="replace").read()
    execs = [int(n) for n in re.findall(r"^#(\d+):", text, re.M)]
    artifacts = sorted(glob.glob(os.path.join(work, "*-*")))
    kinds = {"crash": [], "leak": [], "timeout": [], "oom": [], "slow": []}
    for path in artifacts:
        kind = os.path.basename(path).split("-")[0]
        if kind in kinds:
            kinds[kind].append(path)
    crashes = kinds["crash"] + kinds["leak"]
    unique = {}
    for path in crashes:
        unique.setdefault(crash_key(binary, path, env), []).append(path)
    return {
        "target": target, "execs": max(execs) if execs else 0,
        "crashes": len(crashes), "unique": unique,
        "timeouts": len(kinds["timeout"]), "ooms": len(kinds["oom"]),
        "work": work,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-asan"),
                    help="build folder with the fuzz targets (bin/)")
    ap.add_argument("--seconds", type=int, default=60,
                    help="fuzzing time per target")
    ap.add_argument("--jobs", type=int, default=1,
                    help="libFuzzer -fork processes per target")
    ap.add_argument("--out", help="where corpora, logs and crashes go "
                    "(default: a temporary folder, removed unless something "
                    "was found)")
    ap.add_argument("targets", nargs="*", default=TARGETS)
    args = ap.parse_args()

    out = args.out or tempfile.mkdtemp(prefix="cgc-fuzz-")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    for key, value in SANITIZER_ENV.items():
        env[key] = value + (":" + env[key] if env.get(key) else "")
    # The targets' model folders go here: libFuzzer's jobs do not always
    # exit through the handler that removes them.
    env["TMPDIR"] = os.path.join(out, "tmp")
    os.makedirs(env["TMPDIR"], exist_ok=True)
    seeds = seed_dirs(out)
    failed = False
    for target in args.targets:
        binary = os.path.join(args.build, "bin", target)
        if not os.path.exists(binary):
            print(f"fuzz: {binary} is missing (configure with CGC_FUZZ=ON)")
            return 2
        r = run_target(binary, out, seeds, args.seconds, env, args.jobs)
        print(f"fuzz: {r['target']}: {r['execs']} executions in "
              f"{args.seconds} s, {r['crashes']} crashes "
              f"({len(r['unique'])} unique), {r['timeouts']} timeouts, "
              f"{r['ooms']} ooms")
        for key, paths in sorted(r["unique"].items()):
            print(f"  crash: {key}\n    e.g. {paths[0]}")
        if r["crashes"] or r["timeouts"] or r["ooms"]:
            failed = True
            print(f"  inputs and log: {r['work']}")
    if not failed and not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
