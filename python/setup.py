"""The build step of the cgc Python package; pyproject.toml has the metadata.

A regular (non-editable) `pip install ./python` copies the package into
site-packages, where it cannot find the repository's build tree any more. So,
when the build tree exists (<repo>/build, or $CGC_BUILD_DIR), build_py copies
into the package:

    build/bin/cgc          -> cgc/bin/cgc          (the compiler)
    build/lib/libcgrt.so   -> cgc/lib/libcgrt.so   (the runtime)
    build/lib/_cgc_native.<python's tag>.so -> cgc/  (the call path for torch
                                                    tensors, when built for
                                                    this Python)
    include/cgrt/*.h       -> cgc/include/cgrt/    (libmodel.so is compiled
                                                    against these headers)

Without a build tree the package is pure Python and looks for them at run
time ($CGC_BINARY, $CGC_RUNTIME_LIB, PATH); see docs/python.md.
"""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REPO = Path(__file__).resolve().parent.parent


def bundled_files():
    """(source, path inside the package) of everything there is to bundle."""
    build = Path(os.environ.get("CGC_BUILD_DIR") or REPO / "build")
    files = [(build / "bin" / "cgc", "bin/cgc"),
             (build / "lib" / "libcgrt.so", "lib/libcgrt.so")]
    # The native call path, if CMake built it for the Python running this.
    import importlib.machinery
    files += [(build / "lib" / ("_cgc_native" + suffix), "_cgc_native" + suffix)
              for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    files += [(header, "include/cgrt/" + header.name)
              for header in sorted((REPO / "include" / "cgrt").glob("*.h"))]
    return [(source, target) for source, target in files if source.is_file()]


class BuildPyWithBinaries(build_py):
    """build_py that also bundles the build tree's compiler and runtime."""

    def run(self):
        # A build folder left by an earlier build must not ship its copies
        # when the build tree is gone now (or has fewer files).
        for folder in ("bin", "lib", "include"):
            shutil.rmtree(Path(self.build_lib) / "cgc" / folder,
                          ignore_errors=True)
        for stale in (Path(self.build_lib) / "cgc").glob("_cgc_native*"):
            stale.unlink()
        super().run()
        # An editable install runs from the checkout, which finds the build
        # tree itself; copies would only go stale.
        if getattr(self, "editable_mode", False):
            return
        files = bundled_files()
        if not any(target == "bin/cgc" for _, target in files):
            self.announce("cgc: no build tree (build/bin/cgc); building a pure "
                          "Python package", level=2)
        for source, target in files:
            dest = Path(self.build_lib) / "cgc" / target
            self.mkpath(str(dest.parent))
            # copy_file keeps the mode: cgc stays executable in the wheel.
            self.copy_file(str(source), str(dest))


setup(cmdclass={"build_py": BuildPyWithBinaries})
