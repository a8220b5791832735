#!/usr/bin/env python3
"""Prepares a GPU correctness check of the generated kernels on the ONNX
backend node tests.

For every test under DATA/node whose model cgc compiles into a package
(`cgc model.onnx -o DIR`, retried with `--bind NAME=FILE.pb` for the
parameter inputs cgc asks to fix, as utils/ci/backend_import_report.py does),
this writes into OUT (default .carry-kernels, ignored by git):

  tests/<test>/pkg/          the package (libmodel.so, kernels, weights)
  tests/<test>/<set>/in/     the inputs of test data set <set> as .npy
  tests/<test>/<set>/ref/    its expected outputs as .npy
  run_all.sh                 runs every test with cgc-run --check on the GPU
                             machine: one line per test, then
                             `gpu: P passed, F failed of T`
  compile_report.txt         every test and why it did not compile

The .npy files are named after the graph inputs and outputs, characters
outside [A-Za-z0-9._-] mapped to '_' (cgc-run's convention); bfloat16
tensors, which numpy lacks, are written as their uint16 bit patterns, which
cgc-run reads as bfloat16, and the float8/float4 ones as uint8 bits, int4
and int2 as int8, uint4 and uint2 as uint8. The tolerance is --rtol/--atol (1e-5, 1e-6)
except where tests/<test>/tolerance says otherwise: the overrides of
test/conformance/tolerances.txt (the interpreter's) and
test/conformance/gpu-tolerances.txt (the device's), and rtol 1e-2 for a
test with a bfloat16 output (one bfloat16 ulp is up to 2^-7 relative;
float16's, up to 2^-10, fits the default). Tests whose
parameters were bound only keep the data sets whose bound inputs equal
those of test_data_set_0. The biggest tests are left out when the folder
would exceed --max-mb. Repeat --data to add suites in the same layout,
such as the cases utils/gpu/kernel_extra_tests.py writes.

  /tmp/venv/bin/python utils/gpu/kernel_extra_tests.py --out /tmp/extra
  /tmp/venv/bin/python utils/gpu/gpu_kernel_check.py --cgc build/bin/cgc \
      --data /usr/include/onnx/backend/test/data --data /tmp/extra
  # on the GPU machine, from the repository root:
  bash .carry-kernels/run_all.sh .carry/rt
  # back here, with the gpu_results.txt it wrote:
  /tmp/venv/bin/python utils/gpu/gpu_kernel_check.py --record gpu_results.txt

--record writes test/conformance/gpu-expected.txt (PASS, FAIL or
UNSUPPORTED per ONNX node test, in the format of expected.txt) from
OUT/compile_report.txt and the GPU run's results; `make conformance` puts it
into docs/conformance.md. UNSUPPORTED: cgc refused to compile the test (the
reason is its message); FAIL: the run failed or did not match, cgc crashed
or timed out, or the test was left out for size. Its header line
`# recorded at SHA on GPU DATE` names the commit the packages were compiled
from (`git rev-parse HEAD` when the folder was prepared, `-dirty` when the
tree had changes; the GPU machine has no git history), the GPU and the date
run_all.sh wrote into gpu_results.txt. --check GPU_RESULTS compares such a
run with gpu-expected.txt exactly, as `make conformance` does for the
interpreter: a changed status, a test without a line or a line without a
test fails (exit 1). --record and --check need neither numpy nor onnx.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

# numpy and onnx are imported where the packages are prepared, so that
# --record and --check also run where they are not installed.

# Package files cgc-run does not need.
DROP = ("model.cpp", "model.h", "kernels.cu")


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


# The precisions' error bounds are the Python package's (cgc.BOUNDS), one
# table for every tool that checks a reduced precision.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from cgc._accuracy import BOUNDS  # noqa: E402
# Issue 15's bounds on the relative L2 error against fp32 outputs.
PRECISION_BOUND = {p: "%g" % b for p, b in BOUNDS.items() if p != "fp32"}


def run_cgc(cgc, model, out, extra=()):
    proc = subprocess.run([cgc, model, "-o", out, *extra],
                          capture_output=True, text=True, timeout=300)
    lines = proc.stderr.strip().splitlines()
    message = lines[0] if lines else ""
    if proc.returncode < 0:  # a crash is a failure, not a refusal
        message = f"cgc crashed (signal {-proc.returncode}): {message}"
    return proc.returncode == 0, message


def graph_inputs(model_path):
    import onnx
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    return inputs, outputs


def compile_one(cgc, test_dir, pkg, flags=()):
    """Returns (ok, bound input names, message)."""
    model = os.path.join(test_dir, "model.onnx")
    shutil.rmtree(pkg, ignore_errors=True)
    ok, message = run_cgc(cgc, model, pkg, flags)
    if ok:
        return True, [], message
    inputs, _ = graph_inputs(model)
    data = os.path.join(test_dir, "test_data_set_0")
    bound = set()
    while True:
        names = set(re.findall(r"--bind (\S+?)=FILE\.pb", message)) - bound
        if not names or not names <= set(inputs):
            return False, sorted(bound), message
        bound |= names
        binds = []
        for name in sorted(bound):
            path = os.path.join(data, f"input_{inputs.index(name)}.pb")
            binds += ["--bind", f"{name}={path}"]
        shutil.rmtree(pkg, ignore_errors=True)
        ok, message = run_cgc(cgc, model, pkg, list(flags) + binds)
        if ok:
            return True, sorted(bound), message


def load_pb(path):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    array = numpy_helper.to_array(tensor)
    # ml_dtypes types numpy lacks go as the carriers cgc-run reads them in
    # (its carrierOf): bfloat16 as uint16 bits, the float8/float4 types as
    # uint8 bits, int4/int2 as int8 values, uint4/uint2 as uint8.
    name = array.dtype.name
    if name == "bfloat16":
        array = array.view(np.uint16)
    elif name.startswith(("float8", "float4")):
        array = array.view(np.uint8)
    elif name in ("int4", "int2"):
        array = array.astype(np.int8)
    elif name in ("uint4", "uint2"):
        array = array.astype(np.uint8)
    return array


CONFORMANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "test", "conformance")
# The interpreter's overrides apply to the GPU too; gpu-tolerances.txt adds
# the device's own (accumulation order, device math), each with its reason.
TOLERANCES = [os.path.join(CONFORMANCE, "tolerances.txt"),
              os.path.join(CONFORMANCE, "gpu-tolerances.txt")]


def tolerance_overrides(extra=()):
    """test name -> {'rtol': R, 'atol': A} from the tolerance files (and
    `extra` ones); a test in several gets the looser of each."""
    overrides = {}
    for path in TOLERANCES + list(extra):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                line = line.split("#")[0].split()
                if len(line) < 2 or not line[0].startswith("node/"):
                    continue
                test = overrides.setdefault(line[0][len("node/"):], {})
                for key, value in (kv.split("=") for kv in line[1:]):
                    test[key] = max(test.get(key, value), value, key=float)
    return overrides


def has_bfloat16_output(model_path):
    import onnx
    model = onnx.load(model_path, load_external_data=False)
    return any(o.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
               for o in model.graph.output)


def write_data(test_dir, dest, bound):
    """Writes the usable data sets; returns their names."""
    import numpy as np
    inputs, outputs = graph_inputs(os.path.join(test_dir, "model.onnx"))
    sets = sorted(d for d in os.listdir(test_dir)
                  if d.startswith("test_data_set_"))
    reference = {}
    written = []
    for s in sets:
        src = os.path.join(test_dir, s)
        values = {}
        for i, name in enumerate(inputs):
            path = os.path.join(src, f"input_{i}.pb")
            if os.path.exists(path):
                values[name] = load_pb(path)
        if s == sets[0]:
            reference = {n: values.get(n) for n in bound}
        elif any(n not in values or reference[n] is None or
                 values[n].shape != reference[n].shape or
                 not np.array_equal(values[n], reference[n]) for n in bound):
            continue
        expected = {}
        for i, name in enumerate(outputs):
            path = os.path.join(src, f"output_{i}.pb")
            if os.path.exists(path):
                expected[name] = load_pb(path)
        if not expected:
            continue
        short = s.replace("test_data_set_", "set")
        for sub, arrays in (("in", {n: v for n, v in values.items()
                                    if n not in bound}),
                            ("ref", expected)):
            folder = os.path.join(dest, short, sub)
            os.makedirs(folder, exist_ok=True)
            for name, array in arrays.items():
                np.save(os.path.join(folder, safe_name(name) + ".npy"),
                        np.require(array, requirements="C"), allow_pickle=False)
        written.append(short)
    return written


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


RUN_ALL = r"""#!/usr/bin/env bash
# Runs every prepared backend node test on the GPU with cgc-run --check.
#   bash run_all.sh RUNTIME_DIR [RTOL ATOL]
# RUNTIME_DIR holds bin/cgc-run and lib/libcgrt.so. Tests run JOBS (8) at a
# time. Every result line goes to ${OUT:-HERE}/gpu_results.txt; stdout gets
# the failures and the summary `gpu: P passed, F failed of T`.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RT=$(cd "${1:-.carry/rt}" && pwd)
export RUN="$RT/bin/cgc-run" RTOL=${2:-__RTOL__} ATOL=${3:-__ATOL__}
export LD_LIBRARY_PATH="$RT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
RESULTS=${OUT:-$HERE}/gpu_results.txt
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader \
        2>/dev/null | head -1)
echo "$GPU"
run_one() {
  local set=$1 dir test log rc
  dir=$(dirname "$set")
  test=$(basename "$dir")/$(basename "$set")
  local rtol=$RTOL atol=$ATOL criterion
  [ -f "$dir/tolerance" ] && read -r rtol atol < "$dir/tolerance"
  criterion="--rtol $rtol --atol $atol"
  # A test whose products ran on tensor cores (--precision) is held to the
  # precision's relative L2 bound.
  [ -f "$dir/max_rel_l2" ] && criterion="--max-rel-l2 $(cat "$dir/max_rel_l2")"
  log=$(timeout 60 "$RUN" "$dir/pkg" --inputs "$set/in" --check "$set/ref" \
          $criterion 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "PASS $test"
  else
    echo "FAIL $test (exit $rc): $(echo "$log" | grep -E 'FAIL|rror' |
      head -3 | tr '\n' ' ' | cut -c1-400)"
  fi
}
export -f run_one
# The header names the GPU (driver) and the date for --record.
{
  echo "# gpu: ${GPU:-unknown GPU}"
  echo "# date: $(date -u +%Y-%m-%d)"
  find "$HERE/tests" -mindepth 2 -maxdepth 2 -type d -name 'set*' | sort |
    xargs -P "${JOBS:-8}" -I{} bash -c 'run_one "$1"' _ {} | sort
} > "$RESULTS"
pass=$(grep -c '^PASS' "$RESULTS")
fail=$(grep -c '^FAIL' "$RESULTS")
grep '^FAIL' "$RESULTS"
echo "gpu: $pass passed, $fail failed of $((pass + fail))"
"""


GPU_EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "..", "test", "conformance", "gpu-expected.txt")


def source_commit():
    """The commit of the tree this script (and the cgc it compiles with)
    belongs to, `-dirty` when it has changes; None without git."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    try:
        sha = subprocess.run(["git", "-C", top, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "-C", top, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def read_header(path, keys):
    """`# key: value` lines of a report, for the keys asked."""
    values = {}
    with open(path) as f:
        for line in f:
            match = re.match(r"#\s*(\w+):\s*(.*)$", line.rstrip("\n"))
            if match and match[1] in keys:
                values[match[1]] = match[2].strip()
    return values


def gpu_statuses(out, results_path):
    """node/test -> (PASS|FAIL|UNSUPPORTED, note) for the ONNX node tests
    (not the extra cases), from OUT/compile_report.txt and a GPU run."""
    compiled = {}
    with open(os.path.join(out, "compile_report.txt")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            match = re.match(r"(\S+)\s+(\S+)\s*(.*)$", line.rstrip("\n"))
            if match:
                compiled[match[2]] = (match[1], match[3].strip())
    runs = {}  # test -> [ok, first failure]
    with open(results_path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            status, rest = line.rstrip("\n").split(" ", 1)
            test = rest.split("/", 1)[0]
            entry = runs.setdefault(test, [True, ""])
            if status != "PASS" and entry[0]:
                entry[0], entry[1] = False, rest
    statuses = {}
    for test, (status, message) in sorted(compiled.items()):
        if test.startswith("test_extra_"):
            continue
        if status == "ok":
            ok, failure = runs.get(test, [False, "not run"])
            verdict = "PASS" if ok else "FAIL"
            note = message if ok else failure
        elif status == "SKIP":
            verdict, note = "FAIL", "not run: " + message
        elif status == "CRASH":  # cgc crashed or timed out
            verdict, note = "FAIL", message
        else:  # cgc refused the model: the reason is its message
            verdict = "UNSUPPORTED"
            # Drop the model path cgc puts before its message.
            note = re.sub(r"^\S*model\.onnx: (error: )?", "", message)
        note = re.sub(r"\S*/tests/(\S+/set)", r"\1", note)  # relative paths
        statuses["node/" + test] = (verdict, note.replace("#", "").strip())
    return statuses


def recorded_at(out, results_path, commit, gpu):
    """`SHA on GPU DATE` for the header of gpu-expected.txt."""
    prepared = read_header(os.path.join(out, "compile_report.txt"), {"commit"})
    run = read_header(results_path, {"gpu", "date"})
    commit = commit or prepared.get("commit") or "an unknown commit"
    gpu = gpu or run.get("gpu") or "an unknown GPU"
    gpu = re.sub(r"^(.*), ([0-9.]+)$", r"\1 (driver \2)", gpu)  # nvidia-smi's
    return f"{commit} on {gpu}, {run.get('date', 'an unknown date')}"


def record(out, results_path, expected_path, commit=None, gpu=None):
    """Writes `expected_path` from the compile report and a GPU run."""
    statuses = gpu_statuses(out, results_path)
    with open(expected_path, "w") as f:
        f.write("# ONNX backend node tests through the GPU path (cgc package, "
                "cgc-run --check).\n# Written by utils/gpu/gpu_kernel_check.py "
                "--record; docs/kernels.md says how to reproduce.\n"
                f"# recorded at {recorded_at(out, results_path, commit, gpu)}"
                "\n")
        for test, (verdict, note) in statuses.items():
            f.write(f"{test} {verdict}" + (f"  # {note}" if note else "") +
                    "\n")
    counts = {v: sum(1 for status, _ in statuses.values() if status == v)
              for v in ("PASS", "FAIL", "UNSUPPORTED")}
    print(f"recorded {len(statuses)} node tests in {expected_path}: {counts}")
    return 0


def read_expected(path):
    """suite/test -> status of an expectations file."""
    expected = {}
    with open(path) as f:
        for line in f:
            body = line.split("#", 1)[0].split()
            if body:
                expected[body[0]] = body[1]
    return expected


def check(out, results_path, expected_path):
    """Compares a GPU run with GPU_EXPECTED exactly; 1 on any difference."""
    statuses = gpu_statuses(out, results_path)
    expected = read_expected(expected_path)
    differences = []
    for test, (verdict, note) in statuses.items():
        if test not in expected:
            differences.append(f"missing: {test} ({verdict}) has no line in "
                               f"{expected_path}")
        elif expected[test] != verdict:
            differences.append(f"changed: {test} {expected[test]} -> "
                               f"{verdict}" + (f": {note}" if note else ""))
    for test, verdict in sorted(expected.items()):
        if test not in statuses:
            differences.append(f"stale: {test} ({verdict}) in {expected_path} "
                               "is not a prepared node test")
    for line in differences:
        print("gpu:", line)
    print(f"gpu: {len(differences)} differences from {expected_path} "
          f"({len(statuses)} node tests)")
    return 1 if differences else 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cgc", default="build/bin/cgc")
    parser.add_argument("--data", action="append",
                        help="folder with a node/ suite (repeatable; default "
                             "the ONNX backend test data)")
    parser.add_argument("--out", default=".carry-kernels")
    parser.add_argument("--filter", default="", help="regex on test names")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-mb", type=float, default=60.0)
    parser.add_argument("--precision", default="fp32",
                        choices=sorted(PRECISION_BOUND) + ["fp32"],
                        help="compile with cgc --precision; tests whose "
                        "products run on tensor cores are then checked by "
                        "relative L2 against the test's (fp32) outputs")
    parser.add_argument("--tolerances", action="append", default=[],
                        help="another tolerance file of the interpreter's "
                             "(repeatable; e.g. test/conformance/"
                             "tolerances-onnx-1.23.txt for the 1.23 suite)")
    parser.add_argument("--rtol", default="1e-5")
    parser.add_argument("--atol", default="1e-6")
    parser.add_argument("--keep-sources", action="store_true",
                        help="keep model.cpp and kernels.cu in the packages")
    parser.add_argument("--record", metavar="GPU_RESULTS",
                        help="write test/conformance/gpu-expected.txt from "
                             "OUT/compile_report.txt and a GPU run's "
                             "gpu_results.txt, and exit")
    parser.add_argument("--check", metavar="GPU_RESULTS",
                        help="compare a GPU run with --expected exactly "
                             "and exit (1 on any difference)")
    parser.add_argument("--expected", default=GPU_EXPECTED,
                        help="the expectations --record writes and --check "
                             "compares with (default "
                             "test/conformance/gpu-expected.txt)")
    parser.add_argument("--commit",
                        help="with --record: the commit the packages were "
                             "compiled from (default: the one the compile "
                             "report names)")
    parser.add_argument("--gpu",
                        help="with --record: the GPU (default: the one "
                             "gpu_results.txt names)")
    args = parser.parse_args()
    if args.record:
        return record(os.path.abspath(args.out), args.record, args.expected,
                      args.commit, args.gpu)
    if args.check:
        return check(os.path.abspath(args.out), args.check, args.expected)

    suites = {}  # test name -> its node/ folder
    for data in args.data or ["/usr/include/onnx/backend/test/data"]:
        node = os.path.join(data, "node")
        for t in os.listdir(node):
            if (os.path.exists(os.path.join(node, t, "model.onnx"))
                    and re.search(args.filter, t)):
                suites[t] = node
    tests = sorted(suites)
    overrides = tolerance_overrides(args.tolerances)
    cgc = os.path.abspath(args.cgc)
    out = os.path.abspath(args.out)
    shutil.rmtree(os.path.join(out, "tests"), ignore_errors=True)
    os.makedirs(os.path.join(out, "tests"), exist_ok=True)

    def prepare(test):
        dest = os.path.join(out, "tests", test)
        pkg = os.path.join(dest, "pkg")
        os.makedirs(dest, exist_ok=True)
        try:
            ok, bound, message = compile_one(
                cgc, os.path.join(suites[test], test), pkg,
                ["--precision=" + args.precision]
                if args.precision != "fp32" else [])
        except subprocess.TimeoutExpired:
            ok, bound, message = False, [], "cgc timed out (300 s)"
        if not ok:
            shutil.rmtree(dest, ignore_errors=True)
            return test, False, message, 0
        if args.precision != "fp32" and "tensor-core GEMM" in open(
                os.path.join(pkg, "kernels.cu")).read():
            with open(os.path.join(dest, "max_rel_l2"), "w") as f:
                f.write(PRECISION_BOUND[args.precision] + "\n")
        for f in () if args.keep_sources else DROP:
            if os.path.exists(os.path.join(pkg, f)):
                os.remove(os.path.join(pkg, f))
        sets = write_data(os.path.join(suites[test], test), dest, bound)
        if not sets:
            shutil.rmtree(dest, ignore_errors=True)
            return test, False, "no usable test data set", 0
        tol = {"rtol": args.rtol, "atol": args.atol}
        if has_bfloat16_output(os.path.join(suites[test], test,
                                            "model.onnx")):
            tol["rtol"] = "1e-2"
        # An override of the interpreter's (tighter) default never
        # tightens the GPU's.
        for key, value in overrides.get(test, {}).items():
            tol[key] = max(tol[key], value, key=float)
        if tol != {"rtol": args.rtol, "atol": args.atol}:
            with open(os.path.join(dest, "tolerance"), "w") as f:
                f.write(f"{tol['rtol']} {tol['atol']}\n")
        return test, True, "bound " + ",".join(bound) if bound else "", \
            folder_bytes(dest)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(prepare, tests))

    # Keep the folder under --max-mb: drop the biggest tests first.
    kept = [r for r in results if r[1]]
    budget = args.max_mb * 1e6
    dropped = []
    for test, _, _, size in sorted(kept, key=lambda r: -r[3]):
        if sum(r[3] for r in kept) <= budget:
            break
        shutil.rmtree(os.path.join(out, "tests", test), ignore_errors=True)
        kept = [r for r in kept if r[0] != test]
        dropped.append((test, size))

    with open(os.path.join(out, "run_all.sh"), "w") as f:
        f.write(RUN_ALL.replace("__RTOL__", args.rtol)
                .replace("__ATOL__", args.atol))
    os.chmod(os.path.join(out, "run_all.sh"), 0o755)
    with open(os.path.join(out, "compile_report.txt"), "w") as f:
        # The GPU machine has no git history: the commit is taken here.
        f.write(f"# commit: {args.commit or source_commit() or 'unknown'}\n")
        for test, ok, message, size in results:
            status = "ok  " if ok else "FAIL"
            if not ok and message.startswith(("cgc crashed", "cgc timed out")):
                status = "CRASH"
            if any(d[0] == test for d in dropped):
                status = "SKIP"
                message = f"too big for the carried folder ({size} bytes)"
            f.write(f"{status} {test} {message}\n")
    compiled = sum(1 for r in results if r[1])
    print(f"compile: {compiled} of {len(tests)} tests compile to "
          f"packages; {len(kept)} prepared "
          f"({sum(r[3] for r in kept) / 1e6:.1f} MB), {len(dropped)} left "
          f"out for size; report in {out}/compile_report.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
