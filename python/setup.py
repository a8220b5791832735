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

    the shared libraries the compiler links that a machine without the
    build tree's packages lacks (libonnx, libprotobuf: whatever ldd finds
    outside the C/C++ runtime and CUDA) -> cgc/lib/, where the compiler's
    RUNPATH ($ORIGIN/../lib) finds them. LLVM is linked into it
    (CGC_STATIC_LLVM); libnvrtc comes from the CUDA toolkit or NVIDIA's
    wheels (nvidia/cu13/lib beside the package, as PyTorch installs them).

Without a build tree the package is pure Python and looks for them at run
time ($CGC_BINARY, $CGC_RUNTIME_LIB, PATH); see docs/python.md.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

REPO = Path(__file__).resolve().parent.parent


# Libraries every Linux with a C++ runtime has, and CUDA's (the toolkit's
# or NVIDIA's wheels'), which a wheel must not carry.
SYSTEM_LIBRARIES = re.compile(
    r"^(ld-linux.*|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|"
    r"libz|libnvrtc|libcuda)\.so")


def linked_libraries(binary):
    """(soname, path) of the shared libraries `binary` loads that are not
    the system's, as ldd resolves them here; [] where ldd is missing."""
    try:
        out = subprocess.run(["ldd", str(binary)], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not SYSTEM_LIBRARIES.match(m.group(1)):
            found.append((m.group(1), Path(m.group(2))))
    return found


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
    files += [(path, "lib/" + soname)
              for soname, path in linked_libraries(build / "bin" / "cgc")]
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


class DistributionWithBinaries(Distribution):
    """A distribution that carries machine code when the build tree is
    there: its wheel is then tagged for this platform and Python (the
    native module is built for one), not py3-none-any."""

    def has_ext_modules(self):
        return any(target == "bin/cgc" for _, target in bundled_files())


setup(cmdclass={"build_py": BuildPyWithBinaries},
      distclass=DistributionWithBinaries)
