#!/usr/bin/env python3
"""expect_exit.py CODE COMMAND...: runs COMMAND, passes its output through
(stderr merged into stdout, for FileCheck), and fails unless it exits with
CODE. lit's shell has `not` (any failure) but no way to name the code, and
the tools' exit codes are documented (0 ok, 1 model error, 2 usage)."""
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: expect_exit.py CODE COMMAND...")
want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT)
sys.stdout.buffer.write(proc.stdout)
if proc.returncode != want:
    sys.exit("expect_exit.py: %s exited with %d, expected %d"
             % (sys.argv[2], proc.returncode, want))
