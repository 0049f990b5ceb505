#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A pinned BPF hash map with 8-byte keys, straight through bpf(2), for
the tests (bpftool makes one process per update: 65536 of them take
minutes; this takes one syscall).

  bpf_map.py fill PIN BASE   inserts zero values under the keys BASE,
                             BASE+1, ... until the map is full (E2BIG);
                             prints how many went in
  bpf_map.py keys PIN        prints every key, in decimal, one a line

Exit status 0, or 1 with the error on stderr.
"""
import ctypes
import errno
import os
import platform
import struct
import sys

NR_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
BPF_MAP_GET_NEXT_KEY = 4
BPF_OBJ_GET = 7
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_MAP_UPDATE_BATCH = 26

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    """bpf(cmd, attr): the result, or OSError with the errno."""
    r = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32), ("path_fd", ctypes.c_int32),
                ("pad", ctypes.c_uint32)]


class InfoByFd(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32),
                ("info", ctypes.c_uint64)]


class Batch(ctypes.Structure):
    _fields_ = [("in_batch", ctypes.c_uint64), ("out_batch", ctypes.c_uint64),
                ("keys", ctypes.c_uint64), ("values", ctypes.c_uint64),
                ("count", ctypes.c_uint32), ("map_fd", ctypes.c_uint32),
                ("elem_flags", ctypes.c_uint64), ("flags", ctypes.c_uint64)]


class NextKey(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("next_key", ctypes.c_uint64),
                ("flags", ctypes.c_uint64)]


def open_pinned(pin):
    path = ctypes.create_string_buffer(os.fsencode(pin))
    return bpf(BPF_OBJ_GET, ObjGet(pathname=ctypes.addressof(path)))


def map_info(fd):
    """(key_size, value_size, max_entries) of the map open as fd."""
    buf = ctypes.create_string_buffer(256)
    bpf(BPF_OBJ_GET_INFO_BY_FD, InfoByFd(bpf_fd=fd, info_len=len(buf),
                                         info=ctypes.addressof(buf)))
    _, _, key_size, value_size, max_entries = struct.unpack_from("5I", buf.raw)
    return key_size, value_size, max_entries


def fill(pin, base):
    fd = open_pinned(pin)
    key_size, value_size, n = map_info(fd)
    if key_size != 8:
        raise OSError(errno.EINVAL, f"{pin}: key size {key_size}, not 8")
    keys = (ctypes.c_uint64 * n)(*range(base, base + n))
    values = ctypes.create_string_buffer(value_size * n)
    attr = Batch(keys=ctypes.addressof(keys), values=ctypes.addressof(values),
                 count=n, map_fd=fd)
    try:
        bpf(BPF_MAP_UPDATE_BATCH, attr)
    except OSError as e:
        if e.errno != errno.E2BIG:
            raise
    print(attr.count)


def keys(pin):
    fd = open_pinned(pin)
    key = ctypes.c_uint64()
    nxt = ctypes.c_uint64()
    attr = NextKey(map_fd=fd, key=0, next_key=ctypes.addressof(nxt))
    while True:
        try:
            bpf(BPF_MAP_GET_NEXT_KEY, attr)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return
            raise
        print(nxt.value)
        key.value = nxt.value
        attr.key = ctypes.addressof(key)


def main():
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "fill":
            fill(sys.argv[2], int(sys.argv[3], 0))
        elif len(sys.argv) == 3 and sys.argv[1] == "keys":
            keys(sys.argv[2])
        else:
            print(__doc__, file=sys.stderr)
            return 1
    except OSError as e:
        print(f"bpf_map.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
