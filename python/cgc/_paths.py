"""Where the compiler, the runtime library and its headers are found.

A regular `pip install ./python` puts the package in site-packages, away from
the source tree, so python/setup.py copies them from the CMake build tree into
the package (cgc/bin/cgc, cgc/lib/libcgrt.so, cgc/include/cgrt/*.h). An
editable install or PYTHONPATH=python runs from the checkout and uses its
build tree directly.
"""

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def bundled(*parts):
    """A path inside the installed package (it may not exist: a package built
    without a build tree is pure Python)."""
    return PACKAGE.joinpath(*parts)


def build_dirs():
    """Build trees to look in: $CGC_BUILD_DIR, else build/ and build-rt/ of
    the source checkout when this package is its python/cgc (not an installed
    copy, whose parents are unrelated folders)."""
    env = os.environ.get("CGC_BUILD_DIR")
    if env:
        return [Path(env)]
    python = PACKAGE.parent
    if python.name == "python" and (python / "pyproject.toml").is_file():
        return [python.parent / "build", python.parent / "build-rt"]
    return []


#: How to get a compiler and runtime, for the messages of failed look-ups.
HOW_TO_FIX = (
    "this cgc Python package bundles no compiler or runtime (it was "
    "installed without a build tree): build the repository (`make` in the "
    "checkout writes build/bin/cgc and build/lib/libcgrt.so) and reinstall "
    "with `pip install ./python` (CGC_BUILD_DIR names another build tree), "
    "or point CGC_BINARY at a cgc binary and CGC_RUNTIME_LIB at its "
    "libcgrt.so")
