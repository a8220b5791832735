"""Shared helpers of the cgc Python tests (unittest; pytest runs them too).

Packages are compiled with the cgc binary when one is found (the build
tree's build/bin/cgc, $CGC_BINARY or PATH). On a machine without the
compiler (the GPU machine), set CGC_TEST_PACKAGES to a folder holding
prebuilt `tiny_mlp/` and `eager_region/` packages (bench/device_smoke.sh
makes them); tests that need what is missing skip.
"""

import os
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data"
sys.path.insert(0, str(REPO / "python"))

import cgc  # noqa: E402

TINY_MLP = REPO / "examples" / "tiny_mlp" / "model.onnx"
EAGER = DATA / "eager_region.onnxtxt"
BUCKETS = DATA / "buckets.onnxtxt"
BAD_MATMUL = DATA / "bad_matmul.onnxtxt"


def have_compiler():
    try:
        cgc.find_compiler()
        return True
    except cgc.CompileError:
        return False


_packages = {}
_tmp = None


def package(name):
    """A package of `name` ('tiny_mlp', 'eager_region', 'narrow_types' or
    'buckets', the last with shape buckets N=1,2,4 and padding): prebuilt under
    $CGC_TEST_PACKAGES, else compiled once per process; SkipTest if neither
    is possible."""
    global _tmp
    if name in _packages:
        return _packages[name]
    prebuilt = os.environ.get("CGC_TEST_PACKAGES")
    if prebuilt and (Path(prebuilt) / name / "libmodel.so").is_file():
        _packages[name] = Path(prebuilt) / name
        return _packages[name]
    if not have_compiler():
        raise unittest.SkipTest("no compiler: no cgc binary and no prebuilt "
                                "package %r (CGC_TEST_PACKAGES)" % name)
    if _tmp is None:
        _tmp = tempfile.TemporaryDirectory(prefix="cgc-pytest-")
    if name == "narrow_types":
        source = Path(_tmp.name) / "narrow_types.onnx"
        try:  # int4 and float8 need onnx 1.16 or later
            import runpy
            script = runpy.run_path(str(DATA / "narrow_types_model.py"))
            script["onnx"].save(script["build"](), str(source))
        except (ImportError, AttributeError) as e:
            raise unittest.SkipTest("no onnx with int4/float8: %s" % e)
    else:
        source = {"tiny_mlp": TINY_MLP, "eager_region": EAGER,
                  "buckets": BUCKETS}[name]
    options = ({"dims": {"N": [1, 2, 4]}, "pad_to_bucket": True}
               if name == "buckets" else {})
    _packages[name] = cgc.compile(source, Path(_tmp.name) / name,
                                  progress=False, **options)
    return _packages[name]


def tiny_mlp_reference(x):
    """examples/tiny_mlp/make_model.py's model in numpy (float64)."""
    import math
    import numpy as np
    rng = np.random.default_rng(0)
    h = x.astype(np.float64)
    for _ in range(2):
        w = (rng.standard_normal((64, 64)).astype(np.float32) / 8).astype(np.float64)
        b = (rng.standard_normal(64).astype(np.float32) / 8).astype(np.float64)
        g = h @ w.T + b
        erf = np.vectorize(math.erf)
        gelu = 0.5 * g * (1 + erf(g / math.sqrt(2)))
        mu = gelu.mean(-1, keepdims=True)
        var = ((gelu - mu) ** 2).mean(-1, keepdims=True)
        h = h + (gelu - mu) / np.sqrt(var + 1e-5)
    return h


def eager_region_reference(x):
    """data/eager_region.onnxtxt in numpy: If on sum(x) > 0, Loop of 3
    tanh(v) + x, NonZero."""
    import numpy as np
    v = np.maximum(x, 0) if x.sum() > 0 else -x
    for _ in range(3):
        v = np.tanh(v) + x
    return v, np.stack(np.nonzero(v)).astype(np.int64)


def buckets_reference(x):
    """data/buckets.onnxtxt in numpy: relu(x @ w + b), row by row."""
    import numpy as np
    w = np.array([0.5, -1, 2, 0.25, 1, 1, 1, 1, -2, 0, 3, 1, 4, 0.5, -1, 2,
                  1, 2, 3, 4, 0, 0, 1, 0, -1, -1, 1, 1, 2, 2, -2, 2],
                 np.float64).reshape(8, 4)
    b = np.array([0.1, 0.2, 0.3, 0.4])
    return np.maximum(x.astype(np.float64) @ w + b, 0)


_gpu = None


def gpu_model(name):
    """cgc.load(package(name)), or SkipTest where no CUDA driver or GPU."""
    global _gpu
    pkg = package(name)
    if _gpu is False:
        raise unittest.SkipTest("no GPU: no CUDA driver or GPU")
    try:
        model = cgc.load(pkg)
    except cgc.NoDeviceError as e:
        _gpu = False
        raise unittest.SkipTest("no GPU: %s" % e.message)
    _gpu = True
    return model


def torch_cuda():
    try:
        import torch
    except ImportError:
        raise unittest.SkipTest("no torch: torch is not installed")
    if not torch.cuda.is_available():
        raise unittest.SkipTest("no GPU: torch sees no CUDA device")
    return torch
