#!/usr/bin/env python3
"""`python -m unittest discover -s DIR`, plus a record of every skip.

unittest prints skip reasons only with -v, and counts a class whose
setUpClass raised SkipTest as one skip although all of its tests were
skipped. This runner prints what `python -m unittest discover` prints (the
lit test FileChecks it) and writes --skips FILE, a JSON object that
utils/ci/test_summary.py reads:

    {"runner": "python", "tests": 45, "failed": 0,
     "skipped": [{"test": "test_gpu.NumpyTest.test_io_description",
                  "reason": "no GPU: ..."}, ...]}

with one entry per skipped test (those of a skipped class or module
included).
"""

import argparse
import json
import re
import sys
import unittest


def test_cases(suite):
    """Every TestCase in a (nested) suite."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from test_cases(item)
        else:
            yield item


# unittest's stand-in for a failed or skipped class/module fixture:
# "setUpClass (test_gpu.NumpyTest)", "setUpModule (test_gpu)".
FIXTURE = re.compile(r"^(setUpClass|setUpModule) \((?P<scope>[\w.]+)\)$")


class SkipRecordingResult(unittest.TextTestResult):
    """TextTestResult that keeps (test id or fixture, reason) per skip."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.skip_records = []

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if isinstance(test, unittest.TestCase):
            self.skip_records.append((test.id(), reason))
        else:
            self.skip_records.append((str(test), reason))


def expand(records, ids):
    """One entry per skipped test: a skipped fixture stands for the tests of
    its class or module."""
    skipped = []
    for name, reason in records:
        m = FIXTURE.match(name)
        if not m:
            skipped.append({"test": name, "reason": reason})
            continue
        prefix = m.group("scope") + "."
        covered = [i for i in ids if i.startswith(prefix)]
        for test in covered or [name]:
            skipped.append({"test": test, "reason": reason})
    return skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--start-directory", required=True)
    parser.add_argument("--skips", required=True,
                        help="where to write the JSON record of the skips")
    args = parser.parse_args()

    suite = unittest.defaultTestLoader.discover(args.start_directory)
    ids = [t.id() for t in test_cases(suite)]
    runner = unittest.TextTestRunner(resultclass=SkipRecordingResult)
    result = runner.run(suite)
    record = {
        "runner": "python",
        "tests": len(ids),
        "failed": len(result.failures) + len(result.errors) +
                  len(result.unexpectedSuccesses),
        "skipped": expand(result.skip_records, ids),
    }
    with open(args.skips, "w") as f:
        json.dump(record, f, indent=1)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
