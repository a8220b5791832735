"""cgc.Communicator and the ranks of a split package (docs/multi-gpu.md).

The ranks are processes, as in use. They run where NCCL can: on the stub
driver and stub NCCL (test/Runtime/python-ranks-stub.test sets
CGRT_DRIVER_LIBRARY and CGRT_NCCL_LIBRARY; the stub runs no kernel, so
outputs are not compared there), or on a machine with two GPUs and NCCL,
where every rank's output is compared with numpy. Elsewhere they skip.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from _util import DATA, REPO, cgc, have_compiler

TP_MLP = DATA / "tp_mlp.onnxtxt"

_RANK_SCRIPT = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import cgc
    rank = int(os.environ["RANK"])
    try:
        comm = cgc.Communicator(2, rank, cgc.Communicator.new_id(),
                                timeout=float(sys.argv[3]))
        package = (sys.argv[2] if rank == 0 else
                   os.environ.get("RANK1_PACKAGE", sys.argv[2]))
        model = cgc.load(package, comm=comm, warm_up=2)
        x = (np.arange(8, dtype=np.float32).reshape(2, 4) - 3) / 4
        y = model(x)
        model.close()
        comm.close()
        print(json.dumps({"ok": True, "y": np.asarray(y).tolist()}))
    except cgc.Error as e:
        print(json.dumps({"ok": False, "error": type(e).__name__,
                          "message": str(e)}))
""")


def _stubbed():
    return ("stub" in os.environ.get("CGRT_DRIVER_LIBRARY", "") and
            "stub" in os.environ.get("CGRT_NCCL_LIBRARY", ""))


def _two_gpus():
    try:
        import torch
        return torch.cuda.device_count() >= 2
    except ImportError:
        return False


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reference(x):
    """data/tp_mlp.onnxtxt in numpy."""
    import numpy as np
    w1 = np.array([0.5, -1, 0.25, 2, -0.5, 1, 1, 0.5, -0.25, 0, 1.5, -1, -1,
                   0.25, 0.5, 1, 0, 2, 0.75, 1, -1.5, 0.5, 0.25, -0.5]
                  ).reshape(4, 6)
    b1 = np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.6])
    w2 = np.array([1, 0.5, -0.5, 0.25, -1, 2, 0.5, 0, 0.25, -0.75, 1, 1.5,
                   0.5, 0.5, -1, 2, -0.25, 1, 0.75, -0.5, 2, -1, 0.5, 1]
                  ).reshape(6, 4)
    b2 = np.array([0.01, 0.02, 0.03, 0.04])
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


@unittest.skipUnless(have_compiler(), "no compiler: the test compiles its "
                                      "split package")
class RanksTest(unittest.TestCase):
    """Two ranks of `cgc --tensor-parallel=2`, one process each."""

    @classmethod
    def setUpClass(cls):
        if not (_stubbed() or _two_gpus()):
            raise unittest.SkipTest("needs the stub driver: and the stub "
                                    "NCCL (or two GPUs and NCCL)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="cgc-ranks-")
        root = Path(cls.tmp.name)
        cls.split = cgc.compile(TP_MLP, root / "split", tensor_parallel=2,
                                progress=False)
        # Another package of the same shape: other weights.
        other = root / "other.onnxtxt"
        other.write_text(TP_MLP.read_text().replace(
            "0.01, 0.02, 0.03, 0.04", "0.5, 0.02, 0.03, 0.04"))
        cls.other = cgc.compile(other, root / "other", tensor_parallel=2,
                                progress=False)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_ranks(self, package, timeout=20.0, rank1_package=None, env=None):
        """Both ranks' results (dicts), meeting at a fresh NCCL_COMM_ID."""
        base = dict(os.environ, NCCL_COMM_ID="127.0.0.1:%d" % _free_port(),
                    WORLD_SIZE="2", CGRT_STUB_DEVICES="2",
                    TMPDIR=self.tmp.name)
        base.update(env or {})
        if rank1_package:
            base["RANK1_PACKAGE"] = str(rank1_package)
        procs = [subprocess.Popen(
            [sys.executable, "-c", _RANK_SCRIPT, str(REPO / "python"),
             str(package), str(timeout)],
            env=dict(base, RANK=str(r)), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True) for r in range(2)]
        results = []
        for p in procs:
            out, err = p.communicate(timeout=timeout + 60)
            lines = [l for l in out.splitlines() if l.startswith("{")]
            results.append(json.loads(lines[-1]) if lines else
                           {"ok": False, "exit": p.returncode, "stderr": err})
        return results

    def test_both_ranks_run(self):
        results = self.run_ranks(self.split)
        for r, result in enumerate(results):
            self.assertTrue(result["ok"], "rank %d: %s" % (r, result))
        if not _stubbed():  # real kernels: the split model's output
            import numpy as np
            x = (np.arange(8, dtype=np.float64).reshape(2, 4) - 3) / 4
            for result in results:
                np.testing.assert_allclose(result["y"], _reference(x),
                                           rtol=1e-5, atol=1e-5)

    def test_ranks_of_other_packages_are_refused(self):
        results = self.run_ranks(self.split, rank1_package=self.other)
        for r, result in enumerate(results):
            self.assertFalse(result["ok"], "rank %d: %s" % (r, result))
            self.assertEqual(result["error"], "InvalidArgumentError")
            self.assertIn("rank %d of 2" % r, result["message"])
            self.assertIn("loaded another package than some other rank",
                          result["message"])

    @unittest.skipUnless(_stubbed(), "needs the stub driver: the stub NCCL "
                                     "kills the rank")
    def test_a_dead_rank_is_reported(self):
        results = self.run_ranks(self.split, timeout=1.0,
                                 env={"CGRT_STUB_NCCL_EXIT": "1:init"})
        self.assertEqual(results[1].get("exit"), 3, results[1])
        self.assertFalse(results[0]["ok"])
        self.assertEqual(results[0]["error"], "RankFailedError")
        self.assertIn("joining the other ranks did not finish within 1 s",
                      results[0]["message"])


class CommunicatorArgumentsTest(unittest.TestCase):
    """What is refused before NCCL is asked."""

    def test_bad_arguments(self):
        good = bytes(128)
        with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                    "rank 2 of 2: a rank is 0 to ranks-1"):
            cgc.Communicator(2, 2, good)
        with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                    "the 128 bytes of Communicator.new_id"):
            cgc.Communicator(2, 0, b"short")
        with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                    "positive number of seconds"):
            cgc.Communicator(2, 0, good, timeout=0)

    @unittest.skipUnless(have_compiler(), "no compiler: the test compiles "
                                          "its split package")
    def test_a_split_package_needs_a_communicator(self):
        if "stub" not in os.environ.get("CGRT_DRIVER_LIBRARY", ""):
            self.skipTest("needs the stub driver: a GPU would load it")
        with tempfile.TemporaryDirectory() as tmp:
            split = cgc.compile(TP_MLP, Path(tmp) / "split",
                                tensor_parallel=2, progress=False)
            with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                        "split over 2 GPUs.*--ranks 2"):
                cgc.load(split)

    def test_from_torch_with_one_rank(self):
        """torch.distributed's group of one process (gloo: only the id
        travels over it), then a communicator of one rank on the GPU."""
        try:
            import torch
            import torch.distributed as dist
        except ImportError:
            self.skipTest("no torch: torch.distributed is not installed")
        if not torch.cuda.is_available():
            self.skipTest("no GPU: a communicator needs a CUDA device")
        if dist.is_initialized():
            self.skipTest("no torch: a process group exists already")
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d"
                                % _free_port(), world_size=1, rank=0)
        try:
            with cgc.Communicator.from_torch(timeout=60) as comm:
                self.assertEqual((comm.ranks, comm.rank), (1, 0))
                self.assertEqual(comm.device, torch.cuda.current_device())
        finally:
            dist.destroy_process_group()

    def test_from_torch_needs_a_process_group(self):
        try:
            import torch.distributed as dist
        except ImportError:
            self.skipTest("no torch: torch.distributed is not installed")
        if dist.is_available() and dist.is_initialized():
            self.skipTest("no torch: a process group exists already")
        with self.assertRaisesRegex(cgc.InvalidArgumentError,
                                    "init_process_group first"):
            cgc.Communicator.from_torch()


if __name__ == "__main__":
    unittest.main()
