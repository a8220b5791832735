#!/usr/bin/env python3
"""Packs a folder into a few compressed parts, and back, for the device
tool's limits (at most 8 files of 16 MiB come back from the GPU machine;
64 MiB travel there).

    python3 bench/transfer.py pack DIR OUTDIR PREFIX   # OUTDIR/PREFIX.tar.xz.00 ...
    python3 bench/transfer.py unpack DEST PART...      # PARTs in order

The tar keeps hard links as links (identical files are stored once when the
packer hard-linked them); the tar stream is compressed in 4 MiB blocks, each
an xz stream of its own, in parallel (the concatenation is a valid .xz file:
`cat PREFIX.tar.xz.* | xz -d | tar x` works too).
"""

import glob
import io
import lzma
import os
import sys
import tarfile
from concurrent.futures import ProcessPoolExecutor

BLOCK = 4 << 20
PART = 15 << 20


def _compress(block):
    return lzma.compress(block, preset=6)


def pack(folder, outdir, prefix, part=PART):
    """Returns the part files written."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(folder, arcname=".")
    data = buf.getvalue()
    blocks = [data[i:i + BLOCK] for i in range(0, len(data), BLOCK)]
    workers = max(1, min(len(blocks), os.cpu_count() or 1))
    with ProcessPoolExecutor(workers) as pool:
        packed = b"".join(pool.map(_compress, blocks))
    os.makedirs(outdir, exist_ok=True)
    for old in glob.glob(os.path.join(outdir, prefix + ".tar.xz.*")):
        os.remove(old)
    parts = []
    for k, i in enumerate(range(0, len(packed), part)):
        path = os.path.join(outdir, "%s.tar.xz.%02d" % (prefix, k))
        with open(path, "wb") as f:
            f.write(packed[i:i + part])
        parts.append(path)
    print("packed %s: %.1f MB -> %.1f MB in %d part(s)" % (
        folder, len(data) / 1e6, len(packed) / 1e6, len(parts)),
        file=sys.stderr)
    return parts


def unpack(dest, parts):
    data = b"".join(open(p, "rb").read() for p in sorted(parts))
    raw = lzma.decompress(data)  # handles the concatenated streams
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r") as tar:
        try:
            tar.extractall(dest, filter="data")
        except TypeError:  # Python without extraction filters
            tar.extractall(dest)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "pack":
        pack(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 4 and sys.argv[1] == "unpack":
        unpack(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
