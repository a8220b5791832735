#!/usr/bin/env python3
"""Checks that docs/user-guide.md's troubleshooting covers every source file
that produces user-facing errors: each file under lib/, tools/ and python/cgc
that emits a diagnostic (emitError, emitOpError, ctx.error, error() <<,
WithColor::error, makeStatus, usageError/error(...), raise ...Error) must be
named in the guide's "Where the messages come from" index (itself, or a
folder above it written with a trailing slash), so a new source of messages
gets an entry. Prints the files it found and exits 1 listing
those the guide lacks.

  utils/ci/check_error_docs.py [REPO]
"""
import re
import sys
from pathlib import Path

PATTERN = re.compile(
    r"emit(Op)?Error\s*\(|\bctx\.error\s*\(|\berror\(\)\s*<<|"
    r"WithColor::error|\bmakeStatus(String)?\s*\(|\busageError\s*\(|"
    r"\braise\s+\w*Error\b|return error\(")


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else
                Path(__file__).resolve().parents[2])
    guide = (repo / "docs" / "user-guide.md").read_text()
    files = []
    for root in ("lib", "tools", "python/cgc"):
        for path in sorted((repo / root).rglob("*")):
            if path.suffix not in (".cpp", ".h", ".py") or not path.is_file():
                continue
            if PATTERN.search(path.read_text(errors="replace")):
                files.append(path.relative_to(repo).as_posix())
    def covered(f):
        folders = [p.as_posix() + "/" for p in Path(f).parents][:-1]
        return any(f"`{name}`" in guide for name in [f] + folders)
    missing = [f for f in files if not covered(f)]
    print(f"{len(files)} files produce errors; {len(files) - len(missing)} "
          f"are in docs/user-guide.md")
    for f in missing:
        print(f"missing from docs/user-guide.md: {f}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
