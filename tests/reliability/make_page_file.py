#!/usr/bin/env python3
"""Writes a minimal parquet file by hand (thrift compact, no library): one REQUIRED INT32 column
`x`, one row group, one data page whose values are `nbytes` zero bytes, compressed with `codec`
(zstd: a frame of RLE blocks, written here; gzip: zlib), and whose page header DECLARES
`claimed` uncompressed bytes (num_values = claimed / 4).  With claimed == nbytes the file is
valid; with claimed > nbytes it is a decompression bomb / lying header.

    make_page_file.py OUT zstd|gzip NBYTES CLAIMED
"""
import os, struct, sys, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'format'))
from craft_parquet import varint, zz  # noqa: E402  (thrift compact integers)


class W:
    """thrift compact protocol writer (just what FileMetaData/PageHeader need)"""

    def __init__(self):
        self.b = bytearray()
        self.last = [0]

    def fh(self, fid, t):
        d = fid - self.last[-1]
        if 0 < d <= 15:
            self.b.append((d << 4) | t)
        else:
            self.b.append(t)
            self.b += zz(fid)
        self.last[-1] = fid

    def i32(self, fid, v):
        self.fh(fid, 5)
        self.b += zz(v)

    def i64(self, fid, v):
        self.fh(fid, 6)
        self.b += zz(v)

    def string(self, fid, s):
        self.fh(fid, 8)
        s = s.encode()
        self.b += varint(len(s)) + s

    def begin(self, fid=None):  # a struct field (or the top-level struct when fid is None)
        if fid is not None:
            self.fh(fid, 12)
        self.last.append(0)

    def end(self):
        self.b.append(0)
        self.last.pop()

    def list(self, fid, et, n):
        self.fh(fid, 9)
        self.b.append((n << 4) | et if n < 15 else 0xF0 | et)
        if n >= 15:
            self.b += varint(n)

    def elem_begin(self):
        self.last.append(0)


def zstd_rle_frame(n):
    """a zstd frame of n zero bytes: RLE blocks of up to 128 KiB (4 bytes each)"""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    out.append(0x00)  # frame header descriptor: no content size, no checksum, window follows
    out.append(0x38)  # window descriptor: 2^17 = 128 KiB
    left = n
    while True:
        size = min(left, 128 * 1024)
        left -= size
        last = 1 if left == 0 else 0
        out += struct.pack("<I", last | (1 << 1) | (size << 3))[:3]  # RLE block
        out.append(0)
        if last:
            return bytes(out)


def main():
    out, codec, nbytes, claimed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if codec == "zstd":
        data, cid = zstd_rle_frame(nbytes), 6
    else:
        data, cid = zlib.compress(b"\0" * nbytes, 9), 2
        co = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip wrapper
        data = co.compress(b"\0" * nbytes) + co.flush()
    nvals = claimed // 4
    h = W()
    h.begin()
    h.i32(1, 0)  # DATA_PAGE
    h.i32(2, claimed)  # uncompressed_page_size
    h.i32(3, len(data))  # compressed_page_size
    h.begin(5)  # DataPageHeader
    h.i32(1, nvals)
    h.i32(2, 0)  # PLAIN
    h.i32(3, 3)  # RLE
    h.i32(4, 3)
    h.end()
    h.end()
    page = bytes(h.b) + data
    off = 4
    m = W()
    m.begin()
    m.i32(1, 1)  # version
    m.list(2, 12, 2)  # schema
    m.elem_begin(); m.string(4, "schema"); m.i32(5, 1); m.end()
    m.elem_begin(); m.i32(1, 1); m.i32(3, 0); m.string(4, "x"); m.end()
    m.i64(3, nvals)  # num_rows
    m.list(4, 12, 1)  # row_groups
    m.elem_begin()
    m.list(1, 12, 1)  # columns
    m.elem_begin()
    m.i64(2, off)  # file_offset
    m.begin(3)  # ColumnMetaData
    m.i32(1, 1)  # INT32
    m.list(2, 5, 1); m.b += zz(0)  # encodings [PLAIN]
    m.list(3, 8, 1); m.b += varint(1) + b"x"  # path_in_schema
    m.i32(4, cid)
    m.i64(5, nvals)
    m.i64(6, claimed + len(h.b))
    m.i64(7, len(page))
    m.i64(9, off)  # data_page_offset
    m.end()
    m.end()  # ColumnChunk
    m.i64(2, claimed)  # total_byte_size
    m.i64(3, nvals)
    m.end()  # RowGroup
    m.end()  # FileMetaData
    footer = bytes(m.b)
    with open(out, "wb") as f:
        f.write(b"PAR1" + page + footer + struct.pack("<I", len(footer)) + b"PAR1")


main()
