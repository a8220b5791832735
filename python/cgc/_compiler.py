"""cgc.compile: runs the cgc compiler binary on an ONNX model.

The compiler writes its package files in a fixed order (weights.bin once
import and the pass pipeline are done, kernels.cu, then kernels.cubin once
NVRTC has compiled every kernel, model.cpp / metadata.json, and libmodel.so
once the host C++ compiler is done), so the progress bar follows those files.
It writes them into a staging folder beside the package, `<out_dir>.cgc-
partial-<pid of cgc>`, and renames that to out_dir at the end (replacing an
earlier package whole), so the bar watches both folders.
NVRTC compiles all of a model's kernels as one program: the kernel count is
known from kernels.cu, but the bar can only move from 0 to all of them.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import _paths
from ._errors import CompileError

__all__ = ["compile", "find_compiler", "PRECISIONS"]

#: Precisions of matrix products, attentions and convolutions (cgc
#: --precision): fp32 FMAs, or tensor cores with tf32/fp16/bf16 inputs and
#: f32 accumulation.
#: A compiler older than the option gives a CompileError for the others.
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

# (file the stage ends with, what the compiler is doing until it appears)
_STAGES = (
    ("weights.bin", "importing and optimizing"),
    ("kernels.cu", "generating kernels"),
    ("kernels.cubin", "compiling kernels with NVRTC"),
    ("metadata.json", "writing the graph builder"),
    ("libmodel.so", "compiling the package library"),
)


def find_compiler(cgc_binary=None):
    """The cgc binary: the argument, $CGC_BINARY, the copy bundled inside the
    installed package (cgc/bin/cgc), the source tree's build/bin/cgc (or
    $CGC_BUILD_DIR/bin/cgc), or `cgc` on PATH. Raises CompileError."""
    for source, candidate in (("argument", cgc_binary),
                              ("CGC_BINARY", os.environ.get("CGC_BINARY"))):
        if candidate:
            path = Path(candidate)
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
            found = shutil.which(str(candidate))
            if found:
                return found
            raise CompileError("the cgc compiler given by %s (%s) does not "
                               "exist or is not executable" % (source, candidate))
    tried = []
    for path in [_paths.bundled("bin", "cgc")] + \
            [build / "bin" / "cgc" for build in _paths.build_dirs()]:
        tried.append(str(path))
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which("cgc")
    if found:
        return found
    tried.append("cgc on PATH")
    raise CompileError("cannot find the cgc compiler (tried %s): %s"
                       % (", ".join(tried), _paths.HOW_TO_FIX))


def _compiler_env(binary):
    """The environment to run `binary` in. The bundled compiler must compile
    libmodel.so against the bundled runtime headers: the include folder it
    was built with may not exist where the package is installed. A
    CGC_INCLUDE_DIR the user set wins."""
    include = _paths.bundled("include")
    if os.environ.get("CGC_INCLUDE_DIR") or \
            not (include / "cgrt" / "cgrt.h").is_file():
        return None
    if Path(binary).resolve() != _paths.bundled("bin", "cgc").resolve():
        return None
    return dict(os.environ, CGC_INCLUDE_DIR=str(include))


def _dims_text(name, shape):
    try:
        dims = [int(d) for d in shape]
    except (TypeError, ValueError):
        raise TypeError("shapes[%r] must be a sequence of ints, got %r"
                        % (name, shape)) from None
    if any(d < 0 for d in dims):
        raise ValueError("shapes[%r] has a negative dim: %r" % (name, shape))
    return "x".join(str(d) for d in dims)


LIBRARY_POLICIES = ("auto", "always", "never")

#: What train= takes (cgc --train; docs/training.md).
TRAIN_KEYS = ("loss", "loss_output", "optimizer", "trainable",
              "data_parallel")


def _train_flags(train):
    """cgc --train and its options from compile()'s train= dict: loss
    ("mse", "cross_entropy", "none"), loss_output (an output name),
    optimizer ("sgd", "adamw", "none", or a dict {"name": ..., "lr": ...,
    "momentum": ..., "betas": (b1, b2), "eps": ..., "weight_decay": ...}
    or cgc's own "adamw:lr=..." text), trainable (initializer names)."""
    if train is None:
        return []
    if train is True:
        train = {}
    if not isinstance(train, dict):
        raise TypeError("train must be a dict (keys %s) or True, got %r"
                        % (", ".join(TRAIN_KEYS), train))
    unknown = sorted(set(train) - set(TRAIN_KEYS))
    if unknown:
        raise ValueError("train has unknown key(s) %s; it takes %s" % (
            ", ".join(unknown), ", ".join(TRAIN_KEYS)))
    flags = ["--train"]
    if "loss" in train:
        flags.append("--loss=%s" % train["loss"])
    if "loss_output" in train:
        flags.append("--loss-output=%s" % train["loss_output"])
    optimizer = train.get("optimizer")
    if isinstance(optimizer, dict):
        settings = dict(optimizer)
        name = settings.pop("name", None)
        if not name:
            raise ValueError("train['optimizer'] as a dict needs 'name' "
                             "(sgd or adamw)")
        parts = []
        for key, value in settings.items():
            if key == "betas":
                value = "%r/%r" % tuple(value)
            parts.append("%s=%r" % (key, value) if not isinstance(
                value, str) else "%s=%s" % (key, value))
        optimizer = name + (":" + ",".join(parts) if parts else "")
    if optimizer is not None:
        flags.append("--optimizer=%s" % optimizer)
    if "trainable" in train:
        names = train["trainable"]
        names = [names] if isinstance(names, str) else list(names)
        flags.append("--trainable=%s" % ",".join(names))
    if "data_parallel" in train:
        flags.append("--data-parallel=%d" % _ranks("train['data_parallel']",
                                                   train["data_parallel"]))
    return flags


def _ranks(what, value):
    """A number of ranks (2 or more) for --tensor-parallel/--data-parallel."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise ValueError("%s must be a number of ranks (2 or more), got %r"
                         % (what, value))
    return value


def _build_command(binary, model_path, out_dir, shapes, dims, precision,
                   arch, binds, library, extra_args, pad_to_bucket=False,
                   cublaslt=None, cudnn=None, train=None,
                   tensor_parallel=None, channels_last=None,
                   narrow_storage=None):
    cmd = [binary, str(model_path), "-o", str(out_dir),
           "--emit=lib" if library else "--emit=package"]
    if arch:
        cmd.append("--arch=%s" % arch)
    for name, value in (dims or {}).items():
        # A sequence of values makes shape buckets (--dim N=1,2,4).
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("dims[%r] must be an int or a sequence of "
                                "ints, got %r" % (name, value))
            if v < 0:
                raise ValueError("dims[%r] is negative: %d" % (name, v))
        if not values:
            raise ValueError("dims[%r] is an empty sequence" % (name,))
        cmd.append("--dim=%s=%s" % (name, ",".join(str(v) for v in values)))
    if pad_to_bucket:
        cmd.append("--pad-to-bucket")
    for name, shape in (shapes or {}).items():
        cmd.append("--shape=%s=%s" % (name, _dims_text(name, shape)))
    for name, path in (binds or {}).items():
        cmd.append("--bind=%s=%s" % (name, path))
    if precision != "fp32":
        cmd.append("--precision=%s" % precision)
    for option, policy in (("cublaslt", cublaslt), ("cudnn", cudnn),
                           ("channels-last", channels_last),
                           ("narrow-storage", narrow_storage)):
        if policy is None:
            continue
        if policy not in LIBRARY_POLICIES:
            raise ValueError("%s must be one of %s, got %r"
                             % (option.replace("-", "_"),
                                ", ".join(LIBRARY_POLICIES), policy))
        cmd.append("--%s=%s" % (option, policy))
    cmd.extend(_train_flags(train))
    if tensor_parallel is not None:
        cmd.append("--tensor-parallel=%d" % _ranks("tensor_parallel",
                                                   tensor_parallel))
    cmd.extend(extra_args or ())
    return cmd


def _compiler_has_option(binary, option):
    try:
        out = subprocess.run([binary, "--help-hidden"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return ("--%s" % option) in out.stdout + out.stderr


class _Progress:
    """A one-line bar on a terminal; one line per stage otherwise."""

    WIDTH = 24

    def __init__(self, stream, enabled, label):
        self.stream = stream
        self.enabled = enabled
        self.tty = enabled and hasattr(stream, "isatty") and stream.isatty()
        self.label = label
        self.start = time.monotonic()
        self.last_line = None
        self.kernels = None

    def text(self, stage):
        what = _STAGES[stage][1] if stage < len(_STAGES) else "done"
        if self.kernels is not None and stage == 2:
            what += " (0/%d kernels)" % self.kernels
        elif self.kernels is not None and stage > 2:
            what += " (%d/%d kernels)" % (self.kernels, self.kernels)
        return what

    def update(self, stage):
        if not self.enabled or stage >= len(_STAGES):
            return
        what = self.text(stage)
        elapsed = time.monotonic() - self.start
        if self.tty:
            done = self.WIDTH * stage // len(_STAGES)
            bar = "#" * done + "." * (self.WIDTH - done)
            line = "\rcgc: %s [%s] %d/%d %s %5.1fs\x1b[K" % (
                self.label, bar, stage, len(_STAGES), what, elapsed)
            self.stream.write(line)
            self.stream.flush()
        elif what != self.last_line:
            self.stream.write("cgc: %s: %s (%.1fs)\n" % (self.label, what, elapsed))
            self.stream.flush()
        self.last_line = what

    def finish(self, summary):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write("cgc: %s: %s in %.1fs\n" % (self.label, summary, elapsed))
        self.stream.flush()

    def abort(self):
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _fresh(dirs, name, since_ns):
    """The file `name` written since the start in one of `dirs`, or None (an
    earlier package's files in out_dir are older)."""
    for folder in dirs:
        path = folder / name
        try:
            if path.stat().st_mtime_ns >= since_ns:
                return path
        except OSError:
            pass
    return None


def _stage(dirs, since_ns, progress):
    """How many stages are done: the files written since the start, in the
    staging folder or (once renamed) the package folder."""
    done = 0
    for name, _ in _STAGES:
        path = _fresh(dirs, name, since_ns)
        if path is None:
            break
        done += 1
        if name == "kernels.cu" and progress.kernels is None:
            try:
                source = path.read_text(errors="replace")
                progress.kernels = source.count("__global__")
            except OSError:
                pass
    return done


def _summary(out_dir, progress):
    import json
    try:
        meta = json.loads((out_dir / "metadata.json").read_text())
    except (OSError, ValueError):
        return "done"
    graphs = meta.get("graphs", [])
    nodes = sum(int(g.get("nodes", 0)) for g in graphs)
    # The fused kernels, as --explain counts them (metadata's "kernels" lists
    # distinct functions: identical kernels share one); older packages lack it.
    kernels = meta.get("model_kernels", len(meta.get("kernels", [])))
    return "%d kernels, %d graph(s) of %d nodes -> %s" % (
        kernels, len(graphs), nodes, out_dir)


def compile(model_path, out_dir, shapes=None, dims=None, precision="fp32",
            cgc_binary=None, *, arch=None, binds=None, library=True,
            progress=True, timeout=None, extra_args=None,
            pad_to_bucket=False, cublaslt=None, cudnn=None, train=None,
            tensor_parallel=None, channels_last=None, narrow_storage=None):
    """Compiles an ONNX model into a package folder with the cgc compiler.
    With train=, the package is a training step (cgc --train): each call of
    the loaded model runs forward, loss, backward and the optimizer on
    (inputs..., label) and returns the loss (Model.train_step).

    model_path: a binary ONNX file (external data beside it) or ONNX text
        (.onnxtxt).
    out_dir: the package folder to write (created if needed; an earlier
        package there is replaced whole, a file or a folder with other
        files is refused).
    shapes: {input name: sequence of ints} -> --shape NAME=AxBxC.
    dims: {symbolic dim: int} -> --dim NAME=N; {symbolic dim: [ints]} ->
        shape buckets, --dim NAME=V1,V2,... (one package for every value).
    pad_to_bucket: with buckets, run sizes in between padded in the next
        bucket (--pad-to-bucket; cgc refuses it where padding is unsafe).
    precision: "fp32" (the default), "tf32", "fp16" or "bf16": what matrix
        products and convolutions compute in (--precision; tensor cores,
        f32 accumulation; the package's inputs and outputs keep the
        model's types).
    cublaslt: "auto", "always" or "never": which matrix products cuBLASLt
        computes (--cublaslt; None leaves the compiler's default, auto).
    cudnn: the same for convolutions and cuDNN (--cudnn).
    channels_last: "auto", "always" or "never": whether the convolutions
        cuDNN computes store their tensors channels last (--channels-last;
        None leaves the compiler's default, auto).
    narrow_storage: "auto", "always" or "never": under fp16/bf16, which
        tensors products read are stored in that type (--narrow-storage;
        None leaves the compiler's default, auto). It also lets cuDNN
        convolve in bf16 (fp16 only under "always"), rounding each such
        convolution's output before its bias (docs/kernels.md).
    cgc_binary: the compiler; else $CGC_BINARY, the one bundled in the
        installed package, the source tree's build/bin/cgc, or `cgc` on PATH.
    arch: GPU architecture of the cubin (the compiler's default: sm_90).
    binds: {input name: path of a serialized TensorProto} -> --bind.
    library: False writes the package sources only (--emit=package).
    progress: a bar on stderr (a line per stage when stderr is no terminal);
        False for silence.
    timeout: seconds before the compiler is killed (CompileError).
    extra_args: more compiler arguments, passed as they are.
    train: a training step instead of inference (cgc --train): a dict of
        loss ("mse", "cross_entropy" or "none"), loss_output, optimizer
        ("sgd", "adamw" or a dict {"name": "adamw", "lr": 1e-3,
        "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}) and
        trainable (initializer names; default every float initializer), and
        data_parallel (ranks: the step of one rank of several, its gradients
        summed over the ranks; --data-parallel).
    tensor_parallel: ranks to split the model over (--tensor-parallel; one
        process a GPU loads the package with a cgc.Communicator,
        docs/multi-gpu.md).

    Returns the package folder as a pathlib.Path. Raises CompileError with the
    compiler's diagnostics and exit code (exit_code: 1 for the model, 2 for
    usage) when it fails, TypeError/ValueError for malformed arguments.
    """
    if precision not in PRECISIONS:
        raise ValueError("precision must be one of %s, got %r"
                         % (", ".join(PRECISIONS), precision))
    binary = find_compiler(cgc_binary)
    if precision != "fp32" and not _compiler_has_option(binary, "precision"):
        raise CompileError(
            "precision %r is not supported: this cgc (%s) emits fp32 kernels "
            "only (it has no --precision option)" % (precision, binary))
    model_path = Path(model_path)
    out_dir = Path(out_dir)
    cmd = _build_command(binary, model_path, out_dir, shapes, dims, precision,
                         arch, binds, library, extra_args, pad_to_bucket,
                         cublaslt, cudnn, train, tensor_parallel,
                         channels_last, narrow_storage)
    bar = _Progress(sys.stderr, progress, model_path.name)
    since_ns = time.time_ns() - 10_000_000  # coarse file system clocks
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                errors="replace", env=_compiler_env(binary))
    except OSError as e:
        raise CompileError("cannot run the cgc compiler %s: %s" % (binary, e),
                           command=cmd) from None
    # cgc writes into <out_dir>.cgc-partial-<its pid> (Popen runs it without a
    # shell, so that is proc.pid) and renames it to out_dir when done.
    watched = (Path(str(out_dir) + ".cgc-partial-%d" % proc.pid), out_dir)
    deadline = None if timeout is None else time.monotonic() + timeout
    stages = len(_STAGES) if library else len(_STAGES) - 1
    bar.update(0)
    while True:
        try:
            stdout, stderr = proc.communicate(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            bar.update(min(_stage(watched, since_ns, bar), stages))
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                proc.communicate()
                bar.abort()
                raise CompileError("cgc did not finish within %s s" % timeout,
                                   command=cmd) from None
        except BaseException:  # KeyboardInterrupt: do not leave it running
            proc.kill()
            proc.communicate()
            bar.abort()
            raise
    if proc.returncode != 0:
        bar.abort()
        message = stderr.strip() or ("cgc exited with status %d"
                                     % proc.returncode)
        raise CompileError(message, returncode=proc.returncode, command=cmd,
                           stderr=stderr)
    if stderr.strip():  # warnings: pass them on
        bar.abort()
        sys.stderr.write(stderr if stderr.endswith("\n") else stderr + "\n")
    _stage(watched, since_ns, bar)
    bar.finish(_summary(out_dir, bar))
    return out_dir
