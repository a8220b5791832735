#!/usr/bin/env python3
"""Checks that a file is a PNG a person could look at, with the standard
library only (no Pillow): prints `png WIDTHxHEIGHT colors=N nonwhite=P%`
and exits 1 if it is not a PNG or falls outside the given bounds.

  png_info.py FILE [--min-size WxH] [--max-size WxH] [--min-colors N]
                   [--min-nonwhite PERCENT]

Colours are counted over every pixel of 8-bit RGB/RGBA/grey images (the
kinds Graphviz and Chromium write); `nonwhite` is the share of pixels that
are not (near) white, so a blank page fails.
"""
import argparse
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG (bad signature)")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG layout (depth {depth}, color type "
                         f"{color}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            upleft = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - upleft
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else upleft
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--min-size", default="1x1")
    parser.add_argument("--max-size", default="100000x100000")
    parser.add_argument("--min-colors", type=int, default=1)
    parser.add_argument("--min-nonwhite", type=float, default=0.0)
    args = parser.parse_args()
    try:
        width, height, channels, rows = decode(args.file)
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print(f"{args.file}: {e}")
        return 1
    colors, nonwhite = set(), 0
    rgb = min(channels, 3)
    for line in rows:
        for x in range(0, len(line), channels):
            pixel = line[x:x + rgb]
            colors.add(pixel)
            if min(pixel) < 240:
                nonwhite += 1
    share = 100.0 * nonwhite / max(1, width * height)
    print(f"png {width}x{height} colors={len(colors)} nonwhite={share:.1f}%")
    minw, minh = map(int, args.min_size.split("x"))
    maxw, maxh = map(int, args.max_size.split("x"))
    problems = []
    if not (minw <= width <= maxw and minh <= height <= maxh):
        problems.append(f"size {width}x{height} outside {args.min_size} .. "
                        f"{args.max_size}")
    if len(colors) < args.min_colors:
        problems.append(f"{len(colors)} colours, fewer than {args.min_colors}")
    if share < args.min_nonwhite:
        problems.append(f"{share:.1f}% non-white pixels, less than "
                        f"{args.min_nonwhite}%")
    for p in problems:
        print(f"{args.file}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
