#!/usr/bin/env python3
"""Runs the command blocks of the user-facing docs, so that an example
cannot rot: every ```sh line and every ```python block of README.md,
docs/user-guide.md and docs/python.md is executed, in a scratch folder per
document, with the repository's build/, utils/, examples/, include/ and
python/ linked in (paths in the docs are relative to a checkout).

    doc_commands.py --repo DIR [--build DIR] [--keep]

What cannot run here is skipped and listed, never silently dropped:
- steps that need a GPU: a `cgc-run` other than --info/--help/--version,
  a program that runs a package (run_package), a Python block that loads a
  package (cgc.load, InferenceSession, .run);
- blocks a comment right above marks, with the reason:
    <!-- doc-test: skip: REASON -->
  and blocks that need a file that is absent (the shared models):
    <!-- doc-test: needs: PATH -->
Other directives prepare a block: `files: NAME=PATH, ...` copies repository
files into the scratch folder under the names the text uses (`model.onnx`),
`setup: COMMAND` runs a shell command first. Directives are separated by
`;`. Exit status: 0 when every command that ran succeeded.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = ("README.md", "docs/user-guide.md", "docs/python.md")
LINKED = ("build", "utils", "examples", "include", "python", "bench")
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"<!--\s*doc-test:(.*?)-->", re.S)
GPU_PYTHON = re.compile(r"cgc\.load\(|InferenceSession\(|\.run\(|\.benchmark\(")


def blocks(text):
    """(language, first line number, lines, directives) of each fenced block;
    directives come from a doc-test comment in the lines just above it."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, language = i, m.group(1)
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        above = "\n".join(lines[max(0, start - 3):start])
        directives = {}
        for found in DIRECTIVE.findall(above):
            for part in found.split(";"):
                key, _, value = part.partition(":")
                if key.strip():
                    directives[key.strip()] = value.strip()
        yield language, start + 1, body, directives
        i += 1


def needs_gpu(command):
    if "run_package" in command:
        return True
    if re.search(r"(^|/)cgc-run\b", command):
        return not re.search(r"--info\b|--help\b|--version\b", command)
    return False


class Runner:
    def __init__(self, repo, build):
        self.repo, self.build = repo, build
        self.ran, self.failures, self.skipped = 0, [], []

    def scratch(self, doc):
        """A folder laid out like a checkout: the linked repository folders,
        and ../shared beside it where the repository has one."""
        root = Path(tempfile.mkdtemp(prefix="doc-" + Path(doc).stem + "-"))
        folder = root / "checkout"
        folder.mkdir()
        if (self.repo.parent / "shared").exists():
            (root / "shared").symlink_to(self.repo.parent / "shared")
        for name in LINKED:
            target = self.build if name == "build" else self.repo / name
            if target.exists():
                (folder / name).symlink_to(target)
        return folder

    def env(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.repo / "python")
        env["PATH"] = (str(self.build / "venv" / "bin") + os.pathsep +
                       env.get("PATH", ""))
        return env

    def shell(self, where, command, cwd):
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600)
        self.ran += 1
        if proc.returncode != 0:
            self.failures.append("%s: `%s` exited with %d:\n%s" % (
                where, command, proc.returncode, proc.stdout[-3000:]))

    def run_block(self, doc, language, line, body, directives, cwd):
        where = "%s:%d" % (doc, line)
        if "skip" in directives:
            self.skipped.append((where, directives["skip"]))
            return
        needed = directives.get("needs")
        if needed and not (cwd / needed).exists():
            self.skipped.append((where, "needs %s" % needed))
            return
        for pair in filter(None, directives.get("files", "").split(",")):
            name, _, source = pair.strip().partition("=")
            shutil.copy(self.repo / source, cwd / name)
        if directives.get("setup"):
            self.shell(where + " (setup)", directives["setup"], cwd)
        if language == "python":
            source = "\n".join(body)
            if GPU_PYTHON.search(source):
                self.skipped.append((where, "GPU: loads a package"))
                return
            self.shell(where, "python3 - <<'DOC_EOF'\n%s\nDOC_EOF" % source,
                       cwd)
            return
        for offset, raw in enumerate(body, 1):
            command = raw.strip()
            if not command or command.startswith("#"):
                continue
            if needs_gpu(command):
                self.skipped.append(("%s:%d" % (doc, line + offset),
                                     "GPU: " + command.split("#")[0].strip()))
                continue
            self.shell("%s:%d" % (doc, line + offset), command, cwd)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--build", type=Path,
                        help="the build tree (default REPO/build)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch folders")
    args = parser.parse_args()
    repo = args.repo.resolve()
    runner = Runner(repo, (args.build or repo / "build").resolve())
    for doc in DOCS:
        cwd = runner.scratch(doc)
        try:
            for language, line, body, directives in blocks(
                    (repo / doc).read_text()):
                if language in ("sh", "python") or "skip" in directives:
                    runner.run_block(doc, language, line, body, directives,
                                     cwd)
        finally:
            if not args.keep:
                shutil.rmtree(cwd.parent, ignore_errors=True)
    for where, why in runner.skipped:
        print("skipped %s: %s" % (where, why))
    for failure in runner.failures:
        print("FAILED " + failure)
    print("docs: %d commands ran, %d failed, %d skipped" % (
        runner.ran, len(runner.failures), len(runner.skipped)))
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
