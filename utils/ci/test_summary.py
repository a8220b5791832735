#!/usr/bin/env python3
"""The closing lines of `make test`: lit's counts and every skip by cause.

    test_summary.py --title "make test" --lit-exit N --log LOG RESULTS EXEC_ROOT

RESULTS is lit's `-o` JSON, EXEC_ROOT the suite's exec root (build/test).
Three runners skip tests, and each says why:
  lit     UNSUPPORTED: the REQUIRES feature that is missing (LIT_FEATURES)
  gtest   GTEST_SKIP() << "CAUSE: details": a lit test that runs a gtest
          binary writes --gtest_output=xml:%t.gtest.xml
  python  unittest.SkipTest("CAUSE: details"): test/Python runs the tests
          through utils/ci/run_unittest.py, which writes %t.skips.json
A skip message begins with one of CAUSES (then ': ' and the details, or
nothing else); a skip without a stated cause fails the summary, so no test
skips silently. Prints the skips grouped by runner and cause, then one line:

  make test: PASSED (79 passed, of 80 lit tests; skipped: 1 of 80 lit
  (no GPU: 1), 38 of 135 gtest (no GPU: 38), 22 of 45 python (no GPU: 22))

(on one line) and exits non-zero if lit failed or a skip has no cause.
docs/testing.md ("What make test reports") explains the causes.
"""

import argparse
import collections
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

# Why a test may skip (the key; the value says what it means). A new cause
# is added here and in docs/testing.md.
CAUSES = {
    "no GPU": "no CUDA driver or no GPU (or the stub driver, which runs no "
              "kernels, in its place)",
    "no nvcc": "the hand-written test package was built without nvcc, so "
               "it has no kernels",
    "a GPU driver": "a test of the no-driver path, where libcuda.so.1 loads",
    "a driver is given": "a test of the default driver, where "
                         "CGRT_DRIVER_LIBRARY names another (the stub)",
    "needs the stub driver": "a stub-only test, where CGRT_DRIVER_LIBRARY "
                             "does not name the stub driver",
    "no compiler": "no cgc binary (and no prebuilt package)",
    "no onnxruntime": "the onnxruntime Python package is missing",
    "no torch": "the torch Python package is missing",
    "no shared models": "../shared/models is missing",
    "no onnx-testdata": "Debian's libonnx-testdata is missing",
}

# lit's REQUIRES features, by the cause their absence stands for.
LIT_FEATURES = {
    "cuda-gpu": "no GPU",
    "shared-models": "no shared models",
    "onnx-testdata": "no onnx-testdata",
}

# lit result codes, by what the summary counts them as.
PASSED = {"PASS", "FLAKYPASS"}
EXPECTED_FAIL = {"XFAIL"}
SKIPPED = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}


class Skips:
    """The skips of one runner: (cause, group) -> count, and tests run."""

    def __init__(self, runner):
        self.runner = runner
        self.tests = 0
        self.by_cause = collections.OrderedDict()
        self.uncaused = []

    def add(self, cause, group, test, message):
        if cause is None:
            self.uncaused.append((test, message))
            cause = "no stated cause"
        groups = self.by_cause.setdefault(cause, collections.OrderedDict())
        groups[group] = groups.get(group, 0) + 1

    def count(self):
        return sum(sum(g.values()) for g in self.by_cause.values())


def cause_of(message):
    """The cause a skip message begins with, or None."""
    message = message.strip()
    for cause in CAUSES:
        if message == cause or message.startswith(cause + ":"):
            return cause
    return None


def lit_cause(output):
    """The cause of an UNSUPPORTED lit test, from lit's explanation."""
    m = re.search(r"requires the following unavailable features: (.*)",
                  output)
    if m:
        features = [f.strip() for f in m.group(1).split(",") if f.strip()]
        return ", ".join(LIT_FEATURES.get(f, "no " + f) for f in features)
    m = re.search(r"does not support the following features and/or "
                  r"targets: (.*)", output)
    if m:
        return "unsupported on " + m.group(1).strip()
    return None


def gtest_skips(path, skips):
    """The skipped and disabled tests of one --gtest_output=xml file."""
    for case in ET.parse(path).getroot().iter("testcase"):
        skips.tests += 1
        name = "%s.%s" % (case.get("classname"), case.get("name"))
        group = case.get("classname")
        skipped = case.find("skipped")
        if case.get("status") == "notrun":
            skips.add(None, group, name, "DISABLED_ (never run)")
        elif case.get("result") == "skipped" or skipped is not None:
            message = skipped.get("message", "") if skipped is not None else ""
            # gtest puts "file:line" on the message's first line.
            lines = message.split("\n")
            if lines and re.match(r"^\S+:\d+$", lines[0]):
                lines = lines[1:]
            message = "\n".join(lines)
            skips.add(cause_of(message), group, name, message)


def python_skips(path, skips):
    """The skipped tests of one utils/ci/run_unittest.py record."""
    with open(path) as f:
        record = json.load(f)
    skips.tests += record["tests"]
    for s in record["skipped"]:
        # test_gpu.NumpyTest.test_io_description -> test_gpu.NumpyTest
        group = s["test"].rsplit(".", 1)[0]
        skips.add(cause_of(s["reason"]), group, s["test"], s["reason"])


def group_by_message(uncaused):
    """(runner, message) -> the tests that skipped with it."""
    groups = collections.OrderedDict()
    for runner, test, message in uncaused:
        key = (runner, message.strip()[:300])
        groups.setdefault(key, []).append(test)
    return groups


def side_file(exec_root, lit_name, suffix):
    """Where a lit test's %t<suffix> is: EXEC_ROOT/dir/Output/file.tmp..."""
    rel = lit_name.split(" :: ", 1)[-1]
    head, tail = os.path.split(rel)
    return os.path.join(exec_root, head, "Output", tail + ".tmp" + suffix)


def cause_counts(counts):
    """"cause: n, ..." of one runner."""
    return ", ".join("%s: %d" % (c, sum(g.values()))
                     for c, g in counts.items())


def collect(tests, exec_root):
    """The skips of each runner, from lit's results and the reports that
    the lit tests which ran wrote beside them."""
    lit, gtest, python = Skips("lit"), Skips("gtest"), Skips("python")
    for t in tests:
        lit.tests += 1
        name = t["name"].split(" :: ", 1)[-1]
        if t["code"] in SKIPPED:
            output = t.get("output", "")
            lit.add(lit_cause(output), name, name, output)
            continue
        xml = side_file(exec_root, t["name"], ".gtest.xml")
        if os.path.isfile(xml):
            gtest_skips(xml, gtest)
        js = side_file(exec_root, t["name"], ".skips.json")
        if os.path.isfile(js):
            python_skips(js, python)
    return lit, gtest, python


def print_skips(runners):
    """One line per runner and cause, naming where the skips are."""
    if not any(r.count() for r in runners):
        return
    print("skipped tests by cause:")
    for r in runners:
        for cause, groups in r.by_cause.items():
            where = ", ".join(g if n == 1 and r.runner == "lit" else
                              "%s (%d)" % (g, n) for g, n in groups.items())
            print("  %-6s %s (%d): %s" % (r.runner, cause,
                                          sum(groups.values()), where))


def print_uncaused(runners):
    """An error per distinct message of a skip without a cause; whether
    there was any."""
    uncaused = [(r.runner, t, m) for r in runners for t, m in r.uncaused]
    for (runner, message), names in group_by_message(uncaused).items():
        more = " and %d more" % (len(names) - 1) if len(names) > 1 else ""
        print("error: %s test %s%s skipped without a stated cause: %r"
              % (runner, names[0], more, message))
    if uncaused:
        print("error: a skip message begins with one of the causes in "
              "utils/ci/test_summary.py (%s), then ': ' and the details"
              % ", ".join(CAUSES))
    return bool(uncaused)


def lit_counts(tests):
    """"N passed[, N expectedly failed][, N failed]" and the failures."""
    codes = collections.Counter(t["code"] for t in tests)
    passed = sum(codes[c] for c in PASSED)
    xfail = sum(codes[c] for c in EXPECTED_FAIL)
    failed = sum(n for c, n in codes.items()
                 if c not in PASSED | EXPECTED_FAIL | SKIPPED)
    parts = ["%d passed" % passed]
    if xfail:
        parts.append("%d expectedly failed" % xfail)
    if failed:
        parts.append("%d failed" % failed)
    return ", ".join(parts), failed


def skip_counts(runners):
    """"S of T lit (cause: n, ...), ..." for every runner."""
    parts = []
    for r in runners:
        if not r.tests:
            parts.append("no %s tests ran" % r.runner)
            continue
        part = "%d of %d %s" % (r.count(), r.tests, r.runner)
        if r.count():
            part += " (%s)" % cause_counts(r.by_cause)
        parts.append(part)
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--title", default="make test")
    parser.add_argument("--lit-exit", type=int, default=0)
    parser.add_argument("--log", help="the log to point at on failure")
    parser.add_argument("results", help="lit's -o JSON")
    parser.add_argument("exec_root", help="the lit suite's exec root")
    args = parser.parse_args()

    try:
        with open(args.results) as f:
            tests = json.load(f)["tests"]
    except (OSError, ValueError, KeyError) as e:
        print("%s: FAILED (no lit results: %s)" % (args.title, e))
        return 1

    runners = collect(tests, args.exec_root)
    print_skips(runners)
    uncaused = print_uncaused(runners)
    counts, failed = lit_counts(tests)
    line = "%s, of %d lit tests; skipped: %s" % (counts, len(tests),
                                                 skip_counts(runners))
    if args.lit_exit == 0 and not failed and not uncaused:
        print("%s: PASSED (%s)" % (args.title, line))
        return 0
    why = "; skips without a cause" if uncaused else ""
    see = "; see %s" % args.log if args.log else ""
    print("%s: FAILED (%s%s%s)" % (args.title, line, why, see))
    return 1


if __name__ == "__main__":
    sys.exit(main())
