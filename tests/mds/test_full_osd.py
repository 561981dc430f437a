"""An OSD whose disk is full (ENOSPC) under files that keep copies on
other OSDs: the gateway's writes go on, the full OSD's component recorded
stale as for any mirror or RS unit that missed a write (the rebuild
catches it up once there is room), so no application sees an error while
a copy can take its bytes; a write no copy can take fails with NOSPC and
leaves the copies as they were.  Each small disk is a tmpfs mounted at
the OSD's data directory inside the test's pod."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, fileid_of, new_file, objects_of, ok
from pando_testing.nfs3 import FILE_SYNC, NFS3ERR_NOSPC, UNSTABLE, Nfs3Client
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.pod import Pod

KIB = 1024
DISK = "size=128m"


def small_disks(pod: Pod, tmp_path: Path, *ids: int) -> None:
    """tmpfs disks where osd_factory puts these OSDs' data (before they
    are formatted)."""
    for i in ids:
        d = tmp_path / "osds" / f"osd.{i}"
        d.mkdir(parents=True)
        pod.run(["mount", "-t", "tmpfs", "-o", DISK, f"pando-osd{i}", d])


def fill(mds: PandoMds, osd_id: int) -> None:
    """Writes a file beside the OSD's data until its disk is full."""
    cp = mds.pod.run(["dd", "if=/dev/zero", f"of={filler(mds, osd_id)}", "bs=1M"], check=False)
    assert "No space left" in cp.stderr, cp.stderr


def filler(mds: PandoMds, osd_id: int) -> Path:
    return mds.osds[osd_id - 1].data_path / "filler"


def unfill(mds: PandoMds, *ids: int) -> None:
    """The room back before the OSDs stop: RocksDB (Debian's 7.8, built
    with assertions) aborts pando-osd at a stop on a full disk."""
    for i in ids:
        mds.pod.run(["rm", filler(mds, i)])


def file_on(mds: PandoMds, c: Nfs3Client, osd_id: int, data: bytes) -> tuple[bytes, int]:
    """A new file with `data` whose map has a component on OSD osd_id:
    (handle, inode)."""
    for n in range(20):
        fh = new_file(c, mds.root_handle(), f"f{n}")
        ok(c.write(fh, 0, data, FILE_SYNC))
        ino = fileid_of(c, fh)
        if osd_id in {osd for osd, _ in objects_of(mds, ino)}:
            return fh, ino
    raise AssertionError(f"no file placed on OSD {osd_id} in 20")


def stale_on(mds: PandoMds, ino: int) -> set[int]:
    return {d.osd_id for d in PnfsCluster(mds.pod, mds, list(mds.osds)).damage()
            if d.ino == ino and d.stale}


def test_a_full_osd_under_a_mirror_gets_its_component_recorded_stale_and_writes_go_on(
        pod: Pod, tmp_path: Path, mds_factory: Callable[..., PandoMds]) -> None:
    small_disks(pod, tmp_path, 1)
    mds = mds_factory(3, object_pool=0, inline_max=4 * KIB)
    with connect(mds) as c:
        data = bytearray(os.urandom(256 * KIB))
        fh, ino = file_on(mds, c, 1, bytes(data))
        fill(mds, 1)
        grow, patch = os.urandom(512 * KIB), os.urandom(4 * KIB)
        ok(c.write(fh, len(data), grow, FILE_SYNC), "a FILE_SYNC write with one mirror full")
        data += grow
        ok(c.write(fh, 1000, patch, UNSTABLE), "an UNSTABLE write with one mirror full")
        ok(c.commit(fh), "its COMMIT")
        data[1000:1000 + len(patch)] = patch
        assert stale_on(mds, ino) == {1}, "the full OSD's copy missed the writes"
        assert c.read_all(fh, 0, len(data) + 10) == bytes(data)
    unfill(mds, 1)


def test_a_write_no_copy_can_take_fails_with_nospc_and_changes_no_copy(
        pod: Pod, tmp_path: Path, mds_factory: Callable[..., PandoMds]) -> None:
    small_disks(pod, tmp_path, 1, 2)
    mds = mds_factory(2, object_pool=0, inline_max=4 * KIB)
    with connect(mds) as c:
        data = os.urandom(256 * KIB)
        fh, ino = file_on(mds, c, 1, data)
        fill(mds, 1)
        fill(mds, 2)
        res = c.write(fh, len(data), os.urandom(512 * KIB), FILE_SYNC)
        assert res.status == NFS3ERR_NOSPC, res.status
        assert stale_on(mds, ino) == set(), "no copy took the write: none is behind"
        assert c.read_all(fh, 0, len(data) + 10) == data
    unfill(mds, 1, 2)


def test_a_full_osd_under_an_rs_file_gets_its_unit_recorded_stale_and_writes_go_on(
        pod: Pod, tmp_path: Path, mds_factory: Callable[..., PandoMds]) -> None:
    small_disks(pod, tmp_path, 1)
    mds = mds_factory(6, object_pool=0, inline_max=4 * KIB)
    with connect(mds) as c:
        d = mkdir(c, mds.root_handle(), "ec")
        ok_, msg = layout_set(mds, "/ec", {"scheme": "rs", "k": 4, "m": 2, "stripe_unit": 16 * KIB})
        assert ok_, msg
        fh = new_file(c, d, "f")
        data = bytearray(os.urandom(256 * KIB))
        ok(c.write(fh, 0, bytes(data), FILE_SYNC))
        ino = fileid_of(c, fh)
        fill(mds, 1)
        grow, patch = os.urandom(512 * KIB + 123), os.urandom(5 * KIB)
        ok(c.write(fh, len(data), grow, FILE_SYNC), "whole rows with one unit's OSD full")
        data += grow
        ok(c.write(fh, 7000, patch, FILE_SYNC), "a partial row with one unit's OSD full")
        data[7000:7000 + len(patch)] = patch
        assert stale_on(mds, ino) == {1}
        assert c.read_all(fh, 0, len(data) + 10) == bytes(data)
    unfill(mds, 1)
