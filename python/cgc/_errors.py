"""Exceptions of the cgc Python package.

Every failure of the runtime (libcgrt) is raised as a subclass of
`cgc.RuntimeError` that carries the runtime's status code and message;
`cgc.CompileError` carries the compiler's diagnostics.
"""

import builtins
import enum


class StatusCode(enum.IntEnum):
    """The runtime's status codes (cgrt_status_code in include/cgrt/cgrt.h)."""

    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    INCOMPATIBLE = 3
    CORRUPT = 4
    NO_DEVICE = 5
    CUDA_ERROR = 6
    OUT_OF_MEMORY = 7
    INTERNAL = 8
    RANK_FAILED = 9


class Error(Exception):
    """Base class of every exception this package raises on purpose."""


class CompileError(Error):
    """The cgc compiler could not be run or rejected the model.

    Attributes: ``message`` (the compiler's diagnostics, e.g.
    ``model.onnx: error: op 'mm': ...``), ``exit_code`` (the compiler's exit
    status: `MODEL_ERROR` when the model cannot be read or compiled,
    `USAGE_ERROR` for a bad option or -o target; None when the compiler did
    not run or was killed on timeout), ``returncode`` (the same),
    ``command`` (the argument list) and ``stderr`` (everything the compiler
    printed on stderr).
    """

    #: Exit codes of the cgc tool (0 is success).
    MODEL_ERROR = 1
    USAGE_ERROR = 2

    def __init__(self, message, returncode=None, command=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.exit_code = self.returncode = returncode
        self.command = list(command) if command else []
        self.stderr = stderr


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 (cgc.RuntimeError)
    """A status from libcgrt. ``code`` is a `StatusCode`, ``message`` the
    runtime's message (it names the call, the tensor or the CUDA call that
    failed)."""

    code = StatusCode.INTERNAL

    def __init__(self, message, code=None):
        if code is not None:
            code = StatusCode(code)
            self.code = code
        super().__init__(message)
        self.message = message

    def __str__(self):
        return "%s (%s)" % (self.message, self.code.name)


class InvalidArgumentError(RuntimeError, builtins.ValueError):
    """Wrong dtype, rank, shape, device or buffer of an input or output."""
    code = StatusCode.INVALID_ARGUMENT


class NotFoundError(RuntimeError, builtins.FileNotFoundError):
    """A missing package file or symbol, or no libcgrt to load."""
    code = StatusCode.NOT_FOUND


class IncompatibleError(RuntimeError):
    """The package was written by another cgc / package ABI version."""
    code = StatusCode.INCOMPATIBLE


class CorruptError(RuntimeError):
    """The package's files do not match its metadata."""
    code = StatusCode.CORRUPT


class NoDeviceError(RuntimeError):
    """No CUDA driver or no GPU on this machine."""
    code = StatusCode.NO_DEVICE


class CudaError(RuntimeError):
    """A CUDA driver call failed."""
    code = StatusCode.CUDA_ERROR


class OutOfMemoryError(RuntimeError, builtins.MemoryError):
    """The device ran out of memory."""
    code = StatusCode.OUT_OF_MEMORY


class InternalError(RuntimeError):
    """A bug in the runtime or the package."""
    code = StatusCode.INTERNAL


class RankFailedError(RuntimeError):
    """Another rank of a package split over several GPUs died, failed or
    did not answer within the communicator's timeout; the communicator was
    aborted, and every later call of its models fails alike."""
    code = StatusCode.RANK_FAILED


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, NotFoundError, IncompatibleError, CorruptError,
    NoDeviceError, CudaError, OutOfMemoryError, InternalError,
    RankFailedError)}


def error_for(code, message):
    """The exception for a runtime status code (unknown codes: InternalError,
    keeping the number in the message)."""
    try:
        code = StatusCode(code)
    except ValueError:
        return InternalError("status code %d: %s" % (code, message))
    cls = _BY_CODE.get(code, InternalError)
    return cls(message, code)
