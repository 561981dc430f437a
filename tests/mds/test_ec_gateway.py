"""Erasure-coded files through the gateway (NFSv3 to the metadata manager):
a directory with an RS(4,2) policy gets RS maps; what is written, whole
rows and partial ones, reads back byte for byte; with one and with m OSDs
killed reads decode and writes go on; with m + 1 killed the file fails
cleanly (NFS3ERR_IO), never with wrong bytes; a manager killed in the middle
of row updates leaves no write hole (ganesha-fsal/osdio/objio_rs.c,
ganesha-fsal/fsal/write_hole.c, ganesha-fsal/README.md "Erasure-coded files")."""
from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable

import pytest
from pando_testing import nfs3
from pando_testing.cluster_map import file_map, wait_for
from pando_testing.cluster_status import cluster_status
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.daemons import OsdProcess
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_IO, UNSTABLE, Nfs3Client, Sattr3, status_name
from pando_testing.oncrpc import ConnectionClosed, RpcError
from pando_testing.threads import RaisingThread

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
    fh = new_file(c, d, "f")
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
    fh = new_file(c, d, "f")
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
    fh = new_file(c, d, "f")
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
    fh = new_file(c, d, "f")
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


def partial_row_writer(mds: PandoMds, fh: bytes, stop: threading.Event, done: list[int]) -> None:
    """Partial-row writes (each a read-modify-write of parity), some
    UNSTABLE and never committed, each acknowledged, until the manager
    dies under them."""
    rng = random.Random(5)
    try:
        with connect(mds) as c:
            while not stop.is_set():
                off = rng.randrange(4 * ROW)
                stable = rng.choice([FILE_SYNC, UNSTABLE])
                res = c.write(fh, off, rng.randbytes(rng.randrange(1, SU)), stable=stable)
                assert res.status == NFS3_OK, f"partial-row WRITE at {off}: {status_name(res.status)}"
                done[0] += 1
    except (OSError, ConnectionClosed, RpcError):
        pass


def test_manager_killed_mid_partial_row_writes_leaves_no_write_hole(
        mds_factory: Callable[..., PandoMds]) -> None:
    """kill -9 of Ganesha while rows are half updated: at start it
    recomputes the parity of every file it was updating, so a decode
    (an OSD with data lost) gives exactly the bytes a healthy read does.
    The OSDs' disks are slow so that a row update spends most of its time
    between its data write and its last parity write: without the
    recompute, this fails most runs."""
    ec_mds = mds_factory(6, object_pool=0, inline_max=INLINE_MAX,
                         osd_args=["--write-bandwidth", "512K"])
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = new_file(c, d, "f")
    c.write_all(fh, 0, random.Random(6).randbytes(4 * ROW), stable=FILE_SYNC, chunk=ROW)
    c.close()
    stop, done = threading.Event(), [0]
    t = RaisingThread(target=partial_row_writer, args=(ec_mds, fh, stop, done))
    t.start()
    time.sleep(2.0)
    ec_mds.kill9()
    stop.set()
    t.join(30)
    assert done[0] > 10, "the writer hardly ran"
    ec_mds.start()
    assert "recomputing their parity" in ec_mds.log_text()
    with connect(ec_mds) as c:
        healthy = read_back(c, fh, 4 * ROW)
        comps = osds_of(ec_mds, "/ec/f")
        by_id = {o.osd_id: o for o in ec_mds.osds}
        by_id[comps[0]].kill9()
        assert read_back(c, fh, 4 * ROW) == healthy
        by_id[comps[3]].kill9()
        assert read_back(c, fh, 4 * ROW) == healthy


def revert_object_bytes(osd: OsdProcess, object_id: int, off: int, old: bytes) -> None:
    """What a power cut does to UNSTABLE data on a stopped OSD: its object
    file holds the old bytes again (a kill -9 alone keeps the page cache)."""
    assert osd.data_dir is not None and not osd.alive()
    paths = list(osd.data_dir.glob(f"objects/*/*.{object_id:016x}"))
    assert len(paths) == 1, paths
    with open(paths[0], "r+b") as f:
        f.seek(off)
        f.write(old)


def test_osd_that_lost_unstable_row_updates_fails_commit_and_parity_follows_data(
        ec_mds: PandoMds) -> None:
    """An OSD that restarts may have lost UNSTABLE data units while their
    parity (on other OSDs) kept the update: COMMIT fails (the client is
    told), and the manager recomputes the parity from the data at once, so
    a decode agrees with a healthy read."""
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    fh = new_file(c, d, "f")
    data = random.Random(7).randbytes(2 * ROW)
    c.write_all(fh, 0, data, stable=FILE_SYNC, chunk=ROW)
    assert c.write(fh, 100, b"u" * 3000, stable=UNSTABLE).status == NFS3_OK
    ok, msg, j = file_map(ec_mds, "/ec/f")
    assert ok, msg
    unit0 = j["groups"][0]["components"][0]
    by_id = {o.osd_id: o for o in ec_mds.osds}
    victim = by_id[unit0["osd"]]                  # holds the unstable bytes
    victim.kill9()
    revert_object_bytes(victim, unit0["object"], 100, data[100:3100])
    victim.start()
    wait_for(f"OSD {victim.osd_id} reachable again",
             lambda: cluster_status(ec_mds).osds[victim.osd_id].reachable, timeout=15)
    assert c.commit(fh).status == NFS3ERR_IO
    healthy = read_back(c, fh, 2 * ROW)
    assert healthy == data                        # the lost update is gone everywhere
    comps = osds_of(ec_mds, "/ec/f")
    by_id[comps[1]].kill9()
    by_id[comps[2]].kill9()
    assert read_back(c, fh, 2 * ROW) == healthy


def test_a_new_file_with_m_osds_down_is_born_degraded_and_reads_back(ec_mds: PandoMds) -> None:
    """Six OSDs, RS(4,2), two of them killed: a new file's map must use
    the dead ones too; their components are recorded stale at create
    (rebuild makes them later) and the file is written and read degraded."""
    c = connect(ec_mds)
    d = rs_dir(ec_mds, c)
    for o in ec_mds.osds[:2]:
        o.kill9()
    fh = new_file(c, d, "new")
    data = random.Random(8).randbytes(3 * ROW + 5)
    c.write_all(fh, 0, data, stable=FILE_SYNC, chunk=ROW)
    assert read_back(c, fh, len(data)) == data
    assert len(osds_of(ec_mds, "/ec/new")) == 6
    ec_mds.osds[2].kill9()                        # one more than m: refused, not wrong
    res = c.create(d, "third", nfs3.GUARDED, Sattr3(mode=0o644))
    assert res.status == NFS3_OK and res.fh is not None
    assert c.write(res.fh, 0, b"w" * (2 * ROW), stable=FILE_SYNC).status != NFS3_OK
