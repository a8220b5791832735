#!/usr/bin/env python3
"""Counts the runtime's bad-input and fault-injection checks and whether they
ran and passed (docs/reliability.md).

    utils/gpu/runtime_reliability_counts.py --cgrt-tests build/bin/cgrt-tests

The checks are read from the GoogleTest sources in test/Runtime: a bad
input is one rejection the tests check the error of (a `hasStatus(...)`
assertion, an entry of a table of bad files and their messages, a cgc-run
invocation expected to exit with status 2, an `EXPECT_FALSE` of an encoder);
a fault is one `injectFault(...)` of the driver-call fault injector, or where
a test injects from a table, one entry of its table (`{"cuXxx", ...}`). Then
cgrt-tests runs (--gtest_output=json) and each check counts as rejected /
reported when its test passed, and as not run when the test skipped (the GPU
tests skip on a machine without a CUDA device; run this on the GPU machine,
as utils/gpu/gpu_runtime_check.sh does, to run them). A fault counts as reported
when its test checks the error status, and as recovered when the runtime
is expected to work around it (a failing cubin falls back to PTX).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "test", "Runtime")  # --sources overrides
TEST_RE = re.compile(r"^TEST(?:_F|_P)?\((\w+),\s*(\w+)\)", re.M)
BAD_INPUT_RES = [
    re.compile(r"\bhasStatus\("),
    re.compile(r'"\},\s*$', re.M),  # {image, "expected message"},
    re.compile(r"runTool\(\{[^}]*\}\),\s*2\)"),
    re.compile(r"EXPECT_FALSE\(encodeNpy\("),
]
FAULT_RE = re.compile(r"\binjectFault\(")
FAULT_TABLE_RE = re.compile(r'^\s*\{"cu\w+",', re.M)
# The status type's own tests build statuses by hand: no input is rejected.
EXCLUDED_SUITES = {"StatusTest"}


def tests_in_sources(sources):
    """{suite.name: body} for every test in test/Runtime/*.cpp."""
    tests = {}
    for name in sorted(os.listdir(sources)):
        if not name.endswith(".cpp"):
            continue
        text = open(os.path.join(sources, name)).read()
        matches = list(TEST_RE.finditer(text))
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            tests[f"{m.group(1)}.{m.group(2)}"] = text[m.end():end]
    return tests


def run_results(binary):
    """{suite.name: 'passed' | 'skipped' | 'failed'} from one cgrt-tests run
    (parameterized tests fold into their pattern's name)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        subprocess.run([binary, f"--gtest_output=json:{report}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        data = json.load(open(report))
    results = {}
    for suite in data["testsuites"]:
        for test in suite["testsuite"]:
            key = f"{suite['name'].split('/')[-1]}.{test['name'].split('/')[0]}"
            if test.get("failures"):
                state = "failed"
            elif test.get("result") == "SKIPPED":
                state = "skipped"
            else:
                state = "passed"
            old = results.get(key)
            if old != "failed":
                results[key] = state if old in (None, state) else "failed"
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cgrt-tests", required=True, help="the test binary")
    ap.add_argument("--sources", default=SOURCES,
                    help="the test sources the binary was built from "
                         "(default: test/Runtime of this checkout)")
    args = ap.parse_args()
    tests = tests_in_sources(args.sources)
    results = run_results(args.cgrt_tests)

    bad = {"rejected": 0, "not run": 0, "failed": 0}
    faults = {"reported": 0, "recovered": 0, "not run": 0, "failed": 0}
    bad_tests, fault_tests, missing = [], [], []
    for name, body in tests.items():
        if name.split(".")[0] in EXCLUDED_SUITES:
            continue
        state = results.get(name, "missing")
        if state == "missing":  # a test newer than the binary
            missing.append(name)
            continue
        injected = len(FAULT_RE.findall(body))
        if injected:
            injected = len(FAULT_TABLE_RE.findall(body)) or injected
        checks = sum(len(r.findall(body)) for r in BAD_INPUT_RES)
        if injected:
            fault_tests.append((name, state, injected))
            if state == "passed":
                kind = "reported" if "hasStatus(" in body else "recovered"
                faults[kind] += injected
            else:
                faults["not run" if state == "skipped" else "failed"] += injected
        elif checks:
            bad_tests.append((name, state, checks))
            if state == "passed":
                bad["rejected"] += checks
            else:
                bad["not run" if state == "skipped" else "failed"] += checks

    for name, state, n in bad_tests:
        print(f"  bad inputs  {n:3d}  {state:8s} {name}")
    for name, state, n in fault_tests:
        print(f"  faults      {n:3d}  {state:8s} {name}")
    if missing:
        print(f"  not in this cgrt-tests binary (skipped here): "
              f"{', '.join(missing)}")
    total_bad = sum(bad.values())
    total_faults = sum(faults.values())
    print(f"runtime bad inputs: {bad['rejected']} rejected of {total_bad} "
          f"({bad['not run']} not run: their tests skipped; "
          f"{bad['failed']} failed)")
    print(f"runtime faults: {faults['reported']} reported + "
          f"{faults['recovered']} recovered of {total_faults} injected "
          f"({faults['not run']} not run: their tests skipped; "
          f"{faults['failed']} failed)")
    return 1 if bad["failed"] or faults["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
