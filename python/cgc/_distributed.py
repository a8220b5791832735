"""Ranks of a package split over several GPUs (docs/multi-gpu.md).

A package of `cgc --tensor-parallel=N` or `cgc --train --data-parallel=N`
runs as N processes, one GPU each. Each process makes the communicator of
its rank and loads the package with it::

    comm = cgc.Communicator.from_torch()       # after init_process_group
    model = cgc.load("gpt.tp2", comm=comm)
    y = model(x)                                 # every rank calls alike

Without torch.distributed, one rank makes an id (`Communicator.new_id()`)
and sends it to the others however it likes; with NCCL_COMM_ID=HOST:PORT in
every rank's environment, each rank may make the id itself.
"""

import ctypes
import weakref

from ._errors import InvalidArgumentError, StatusCode
from ._runtime import _check, _lib

#: Bytes of a communicator's id (CGRT_COMM_ID_BYTES).
ID_BYTES = 128


class _CommId(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_char * ID_BYTES)]


def _declare(lib):
    """The communicator calls' signatures, once per library."""
    if getattr(lib, "_cgc_comm_declared", False):
        return lib
    vp = ctypes.c_void_p
    lib.cgrt_comm_id_create.argtypes = [ctypes.POINTER(_CommId)]
    lib.cgrt_comm_id_create.restype = vp
    lib.cgrt_comm_create.argtypes = [
        ctypes.POINTER(_CommId), ctypes.c_int32, ctypes.c_int32,
        ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(vp)]
    lib.cgrt_comm_create.restype = vp
    lib.cgrt_comm_release.argtypes = [vp]
    lib.cgrt_comm_release.restype = None
    lib._cgc_comm_declared = True
    return lib


def _invalid(message):
    return InvalidArgumentError(message, StatusCode.INVALID_ARGUMENT)


class Communicator:
    """This process's rank among `ranks` (NCCL's communicator, loaded at run
    time from $CGRT_NCCL_LIBRARY or libnccl.so.2). Making it waits for every
    rank at most `timeout` seconds; the same timeout bounds every later wait
    on the other ranks (cgc.RankFailedError when one is dead or late).
    Close it (or let it go) after the models loaded with it."""

    def __init__(self, ranks, rank, id, device=None, timeout=300.0):
        ranks, rank = int(ranks), int(rank)
        if not 0 <= rank < ranks:
            raise _invalid("rank %d of %d: a rank is 0 to ranks-1" % (
                rank, ranks))
        if not isinstance(id, (bytes, bytearray)) or len(id) != ID_BYTES:
            raise _invalid("id must be the %d bytes of Communicator.new_id()"
                           % ID_BYTES)
        if timeout is None or not timeout > 0:
            raise _invalid("timeout must be a positive number of seconds")
        self.ranks, self.rank = ranks, rank
        self.device = rank if device is None else int(device)
        self.timeout = float(timeout)
        self._handle = None
        self._models = weakref.WeakSet()
        lib = self._lib = _declare(_lib())
        cid = _CommId()
        ctypes.memmove(ctypes.addressof(cid), bytes(id), ID_BYTES)
        handle = ctypes.c_void_p()
        _check(lib, lib.cgrt_comm_create(
            ctypes.byref(cid), ranks, rank, self.device,
            max(1, int(self.timeout * 1000)), ctypes.byref(handle)))
        self._handle = handle

    @staticmethod
    def new_id():
        """A new communicator's id (bytes), made on one rank and sent to the
        others. Unless NCCL_COMM_ID is set, this process listens for the
        ranks and must live until each has made its Communicator."""
        lib = _declare(_lib())
        cid = _CommId()
        _check(lib, lib.cgrt_comm_id_create(ctypes.byref(cid)))
        # Not cid.bytes, which ends at the first zero byte.
        return ctypes.string_at(ctypes.addressof(cid), ID_BYTES)

    @classmethod
    def from_torch(cls, group=None, device=None, timeout=300.0):
        """The communicator of torch.distributed's process group `group`
        (default: the world): its rank and size, the id made on its first
        rank and broadcast over it, and torch's current CUDA device unless
        `device` is given."""
        import torch
        import torch.distributed as dist
        if not dist.is_available() or not dist.is_initialized():
            raise _invalid("Communicator.from_torch needs "
                           "torch.distributed.init_process_group first")
        ranks = dist.get_world_size(group)
        rank = dist.get_rank(group)
        box = [cls.new_id() if rank == 0 else None]
        source = 0 if group is None else dist.get_global_rank(group, 0)
        dist.broadcast_object_list(box, src=source, group=group)
        if device is None:
            device = torch.cuda.current_device()
        return cls(ranks, rank, box[0], device=device, timeout=timeout)

    def _require_open(self):
        if not self._handle:
            raise _invalid("the communicator is closed")
        return self._handle

    def close(self):
        """Ends this rank's part, after closing the models loaded with it
        (their graphs hold its calls)."""
        for model in list(self._models):
            model.close()
        if self._handle:
            self._lib.cgrt_comm_release(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self):
        return "cgc.Communicator(rank %d of %d, device %d)" % (
            self.rank, self.ranks, self.device)
