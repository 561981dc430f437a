"""Extent checksums for scrub: every object keeps a CRC32C per 64 KiB
extent, kept by NFSv3 and control writes, read back with CHECKSUMS, and
verified against the bytes on disk; corruption behind the target's back
shows as exactly the extent it hit.  Also the procedure's malformed input."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from pando_testing import nfs3, oncrpc
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK
from pando_testing.oncrpc import RpcAccepted
from pando_testing.osdctl import OsdCtl, Stable, Status, open_ctl
from pando_testing.pod import Pod
from pando_testing.xdr import Packer, Unpacker

PROC_CHECKSUMS = 15
EXTENT = 64 * 1024
MAX_EXTENT = ((1 << 63) - 1) >> 16
PART = 1
UNCHECKED, OK, MISMATCH, UNREADABLE = range(4)


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli), the slow way: the reference the target must match."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def extent_crc(data: bytes, e: int) -> int:
    return crc32c(data[e * EXTENT:(e + 1) * EXTENT].ljust(EXTENT, b"\0"))


@dataclass
class Extent:
    crc: int
    stored: bool
    verify: int


def args_checksums(obj: int, first: int, count: int, verify: bool,
                   partition: int = PART) -> bytes:
    return Packer().u64(partition).u64(obj).u64(first).u32(count).boolean(verify).bytes()


def checksums(ctl: OsdCtl, obj: int, first: int, count: int,
              verify: bool = False) -> tuple[Status, int, list[Extent]]:
    u = Unpacker(ctl.call_signed(PROC_CHECKSUMS, args_checksums(obj, first, count, verify)).body)
    status = Status(u.u32())
    if status != Status.OK:
        u.done()
        return status, 0, []
    length = u.u64()
    extents = [Extent(u.u32(), u.boolean(), u.u32()) for _ in range(u.u32())]
    u.done()
    return status, length, extents


def data_file(osd: OsdProcess, obj: int) -> Path:
    """Where the target keeps an object's bytes (README "Object store on disk")."""
    found = list((osd.data_path / "objects").glob(f"*/{PART:016x}.{obj:016x}"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def ctl(pod: Pod, osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(pod, osd) as c:
        assert c.create_partition(PART) == Status.OK
        assert c.create(PART, 1) == [1]
        yield c


def test_checksums_are_the_crc32c_of_each_extent_written_over_nfs(
        osd: OsdProcess, ctl: OsdCtl) -> None:
    data = os.urandom(3 * EXTENT + 1000)
    with osd.nfs3() as c:
        fh = handle_for(osd, PART, 1)
        assert c.write(fh, 0, data, nfs3.UNSTABLE).status == NFS3_OK
        part = b"p" * 5000                                   # a partial overwrite
        assert c.write(fh, EXTENT + 300, part, nfs3.FILE_SYNC).status == NFS3_OK
    data = data[:EXTENT + 300] + part + data[EXTENT + 5300:]
    status, length, ext = checksums(ctl, 1, 0, 6, verify=True)
    assert (status, length) == (Status.OK, len(data))
    assert [e.crc for e in ext[:4]] == [extent_crc(data, e) for e in range(4)]
    assert [e.stored for e in ext] == [True] * 4 + [False] * 2
    assert all(e.verify == OK for e in ext)
    assert ext[5].crc == crc32c(bytes(EXTENT))               # past the end: zeros


def test_verify_reports_exactly_the_extent_corrupted_behind_the_targets_back(
        osd: OsdProcess, ctl: OsdCtl) -> None:
    data = os.urandom(8 * EXTENT)
    for off in range(0, len(data), 4 * EXTENT):
        assert ctl.write(PART, 1, off, data[off:off + 4 * EXTENT],
                         Stable.FILE_SYNC).status == Status.OK
    path = data_file(osd, 1)
    with open(path, "r+b") as f:                             # one flipped byte in extent 5
        f.seek(5 * EXTENT + 12345)
        old = f.read(1)
        f.seek(5 * EXTENT + 12345)
        f.write(bytes([old[0] ^ 0x40]))
    _, _, before = checksums(ctl, 1, 0, 8)
    assert all(e.verify == UNCHECKED for e in before)        # no verify: nothing read
    _, _, ext = checksums(ctl, 1, 0, 8, verify=True)
    assert [e.verify for e in ext] == [OK] * 5 + [MISMATCH] + [OK] * 2
    assert ext[5].crc == extent_crc(data, 5)                 # the stored one, the good one
    # the repair a scrub does: the good bytes written over the extent
    assert ctl.write(PART, 1, 5 * EXTENT, data[5 * EXTENT:6 * EXTENT],
                     Stable.FILE_SYNC).status == Status.OK
    _, _, after = checksums(ctl, 1, 0, 8, verify=True)
    assert all(e.verify == OK for e in after)
    assert ctl.read_all(PART, 1) == data


def test_truncate_and_sparse_writes_keep_checksums(osd: OsdProcess, ctl: OsdCtl) -> None:
    assert ctl.write(PART, 1, 10 * EXTENT + 7, b"s" * 100).status == Status.OK
    _, length, ext = checksums(ctl, 1, 0, 12, verify=True)
    assert length == 10 * EXTENT + 107
    assert [e.stored for e in ext] == [False] * 10 + [True, False]
    assert all(e.verify == OK for e in ext)
    assert ctl.setattr(PART, 1, [(1, 1, struct.pack(">Q", 10 * EXTENT + 50))])[0] == Status.OK
    _, length, ext = checksums(ctl, 1, 10, 1, verify=True)
    assert ext[0].crc == crc32c(bytes(7) + b"s" * 43 + bytes(EXTENT - 50))
    assert ext[0].verify == OK


def test_checksums_of_a_removed_object_are_gone(osd: OsdProcess, ctl: OsdCtl) -> None:
    assert ctl.write(PART, 1, 0, b"r" * 3 * EXTENT).status == Status.OK
    assert ctl.remove_objects(PART, [1]) == (Status.OK, [Status.OK])
    assert checksums(ctl, 1, 0, 4)[0] == Status.NOENT
    assert ctl.create(PART, 1) == [1]
    _, length, ext = checksums(ctl, 1, 0, 4)
    assert length == 0 and not any(e.stored for e in ext)


def test_answers_are_cut_to_their_bounds(osd: OsdProcess, ctl: OsdCtl) -> None:
    assert len(checksums(ctl, 1, 0, 0xFFFFFFFF)[2]) == 1024
    assert len(checksums(ctl, 1, 0, 0xFFFFFFFF, verify=True)[2]) == 64
    assert checksums(ctl, 1, 0, 0) == (Status.OK, 0, [])
    assert len(checksums(ctl, 1, MAX_EXTENT, 10)[2]) == 1      # the last extent there is
    assert checksums(ctl, 1, MAX_EXTENT + 1, 1)[0] == Status.FBIG
    assert checksums(ctl, 1, (1 << 64) - 1, 1)[0] == Status.FBIG
    assert checksums(ctl, 1, MAX_EXTENT, 1, verify=True)[2][0].verify == OK


def test_malformed_checksums_calls_get_garbage_args_or_a_status(
        osd: OsdProcess, ctl: OsdCtl) -> None:
    args = args_checksums(1, 0, 4, True)
    for cut in sorted({0, 4, 8, len(args) // 2, len(args) - 4, len(args) - 1}):
        with pytest.raises(RpcAccepted) as e:
            ctl.call_signed(PROC_CHECKSUMS, args[:cut])
        assert e.value.stat == oncrpc.GARBAGE_ARGS
    with pytest.raises(RpcAccepted) as e:
        ctl.call_signed(PROC_CHECKSUMS, args + b"\0\0\0\0")
    assert e.value.stat == oncrpc.GARBAGE_ARGS
    assert checksums(ctl, 999, 0, 1)[0] == Status.NOENT
    st = Status(struct.unpack(">I", ctl.call_signed(
        PROC_CHECKSUMS, args_checksums(0, 0, 1, False, partition=0)).body[:4])[0])
    assert st in (Status.INVAL, Status.NOENT)
    assert osd.alive()
    ctl.null()


def test_tool_prints_one_line_per_extent(osd: OsdProcess, ctl: OsdCtl) -> None:
    data = os.urandom(2 * EXTENT + 5)
    assert ctl.write(PART, 1, 0, data).status == Status.OK
    out = osd.tool("checksums", str(PART), "1", "--verify").stdout.splitlines()
    assert out == [f"length {len(data)}"] + [
        f"{e} {extent_crc(data, e):08x} stored ok" for e in range(3)]
    res = osd.tool("checksums", str(PART), "2", check=False)
    assert res.returncode != 0 and "No such file" in res.stderr
