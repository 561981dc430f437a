"""Erasure-coded files through the gateway (NFSv3 to the metadata manager):
a directory with an RS(4,2) policy gets RS maps; what is written, whole
rows and partial ones, reads back byte for byte; with one and with m OSDs
killed reads decode and writes go on; with m + 1 killed the file fails
cleanly (NFS3ERR_IO), never with wrong bytes (ganesha-fsal/cluster/objio_rs.c,
ganesha-fsal/README.md "Erasure-coded files")."""
from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

import pytest
from pando_testing import nfs3
from pando_testing.cluster_map import file_map
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_IO, UNSTABLE, Nfs3Client, Sattr3

KIB = 1024
SU = 16 * KIB
ROW = 4 * SU
INLINE_MAX = 4096


@pytest.fixture
def ec_mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Six OSDs: RS(4,2) uses every one of them for each file."""
    return mds_factory(6, object_pool=0, inline_max=INLINE_MAX)


def rs_dir(mds: PandoMds, c: Nfs3Client, name: str = "ec") -> bytes:
    d = mkdir(c, mds.root_handle(), name)
    ok, msg = layout_set(mds, f"/{name}", {"scheme": "rs", "k": 4, "m": 2, "stripe_unit": SU})
    assert ok, msg
    return d


def create(c: Nfs3Client, d: bytes, name: str) -> bytes:
    res = c.create(d, name, nfs3.GUARDED, Sattr3(mode=0o644))
    assert res.status == NFS3_OK and res.fh is not None
    return res.fh


def read_back(c: Nfs3Client, fh: bytes, n: int) -> bytes:
    return c.read_all(fh, 0, n)


def osds_of(mds: PandoMds, path: str) -> list[int]:
    ok, msg, j = file_map(mds, path)
    assert ok, msg
    assert j["scheme"] == "rs", j
    return [k["osd"] for g in j["groups"] for k in g["components"]]


def test_whole_and_partial_row_writes_read_back_byte_for_byte(ec_mds: PandoMds) -> None:
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = create(c, d, "f")
    rng = random.Random(1)
    want = bytearray(rng.randbytes(5 * ROW + 1234))
    c.write_all(fh, 0, bytes(want), stable=FILE_SYNC, chunk=ROW)
    for _ in range(30):
        off = rng.randrange(len(want))
        piece = rng.randbytes(min(rng.randrange(1, 2 * ROW), len(want) - off))
        res = c.write(fh, off, piece, stable=rng.choice([FILE_SYNC, UNSTABLE]))
        assert res.status == NFS3_OK and res.count == len(piece)
        want[off:off + len(piece)] = piece
    assert c.commit(fh).status == NFS3_OK
    assert len(osds_of(ec_mds, "/ec/f")) == 6
    assert read_back(c, fh, len(want)) == bytes(want)


def test_reads_decode_with_one_and_with_m_osds_killed_and_writes_go_on(
        ec_mds: PandoMds) -> None:
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = create(c, d, "f")
    data = random.Random(2).randbytes(3 * ROW + 999)
    c.write_all(fh, 0, data, stable=FILE_SYNC, chunk=ROW)
    comps = osds_of(ec_mds, "/ec/f")
    by_id = {o.osd_id: o for o in ec_mds.osds}
    by_id[comps[1]].kill9()                       # a data component
    assert hashlib.sha256(read_back(c, fh, len(data))).digest() == hashlib.sha256(data).digest()
    patch = b"x" * 5000
    assert c.write(fh, SU - 100, patch, stable=FILE_SYNC).status == NFS3_OK
    data = data[:SU - 100] + patch + data[SU - 100 + len(patch):]
    by_id[comps[4]].kill9()                       # a parity component: m lost
    assert read_back(c, fh, len(data)) == data
    assert c.write(fh, 2 * ROW, b"y" * ROW, stable=FILE_SYNC).status == NFS3_OK
    data = data[:2 * ROW] + b"y" * ROW + data[3 * ROW:]
    assert read_back(c, fh, len(data)) == data


def test_more_than_m_osds_killed_fails_with_io_errors_not_wrong_bytes(ec_mds: PandoMds) -> None:
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = create(c, d, "f")
    data = random.Random(3).randbytes(2 * ROW)
    c.write_all(fh, 0, data, stable=FILE_SYNC, chunk=ROW)
    comps = osds_of(ec_mds, "/ec/f")
    by_id = {o.osd_id: o for o in ec_mds.osds}
    for i in (0, 2, 5):
        by_id[comps[i]].kill9()
    res = c.read(fh, 0, SU)
    assert res.status == NFS3ERR_IO
    assert c.write(fh, 0, b"z" * 100, stable=FILE_SYNC).status == NFS3ERR_IO


def test_truncate_to_the_middle_of_a_row_then_grow_reads_zeros_in_the_gap(
        ec_mds: PandoMds) -> None:
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = create(c, d, "f")
    data = random.Random(4).randbytes(3 * ROW)
    c.write_all(fh, 0, data, stable=FILE_SYNC, chunk=ROW)
    cut = ROW + SU + 77
    assert c.setattr(fh, Sattr3(size=cut)).status == NFS3_OK
    assert c.write(fh, 2 * ROW, b"t" * 10, stable=FILE_SYNC).status == NFS3_OK
    want = data[:cut] + bytes(2 * ROW - cut) + b"t" * 10
    assert read_back(c, fh, len(want)) == want
    # the row the cut went through decodes right: its parity followed
    comps = osds_of(ec_mds, "/ec/f")
    next(o for o in ec_mds.osds if o.osd_id == comps[0]).kill9()
    assert read_back(c, fh, len(want)) == want
