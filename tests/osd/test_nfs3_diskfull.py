"""A full target: WRITE answers NFS3ERR_NOSPC (counted as the target's I/O
error), data committed before stays intact, the target keeps serving, and
space freed by removing an object can be written again.  The data directory
sits on a 16 MiB tmpfs mounted inside the test's pod, so nothing outside it
fills up."""
from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing import nfs3
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK, Nfs3Client
from pando_testing.osdctl import open_ctl
from pando_testing.pod import Pod

PART = 4
KEEP, FILL, SPARE = 1, 2, 3
MIB = 1 << 20


@pytest.fixture
def full_osd(pod: Pod, tmp_path: Path,
             osd_factory: Callable[..., OsdProcess]) -> Iterator[OsdProcess]:
    mnt = tmp_path / "small"
    mnt.mkdir()
    pod.run(["mount", "-t", "tmpfs", "-o", "size=16m", "pando-full", mnt])
    osd = osd_factory(1, data_dir=mnt / "osd.1")
    osd.tool("mkpart", str(PART))
    for oid in (KEEP, FILL, SPARE):
        osd.tool("create", str(PART), str(oid))
    yield osd


def fill_until_nospc(c: Nfs3Client, fh: bytes, stable: int, limit: int) -> int:
    """Writes 1 MiB pieces until NOSPC; returns the bytes acknowledged."""
    chunk = random.Random(2).randbytes(MIB)
    offset = 0
    for _ in range(limit):
        w = c.write(fh, offset, chunk, stable)
        if w.status == nfs3.NFS3ERR_NOSPC:
            assert w.count == 0 and w.verf == b""
            return offset
        assert w.status == NFS3_OK, w.status
        offset += w.count
    raise AssertionError(f"no NFS3ERR_NOSPC after {limit} MiB on a 16 MiB target")


@pytest.mark.parametrize("stable", [nfs3.UNSTABLE, nfs3.FILE_SYNC])
def test_full_target_answers_nospc_and_keeps_data(full_osd: OsdProcess, stable: int) -> None:
    osd = full_osd
    keep, fill, spare = (handle_for(osd, PART, oid) for oid in (KEEP, FILL, SPARE))
    kept = random.Random(1).randbytes(3 * MIB + 5)
    with osd.nfs3() as c:
        for at in range(0, len(kept), MIB):
            assert c.write(keep, at, kept[at:at + MIB], nfs3.UNSTABLE).status == NFS3_OK
        assert c.commit(keep).status == NFS3_OK

        filled = fill_until_nospc(c, fill, stable, limit=64)
        assert filled < 16 * MIB
        # a small write into another object fails the same way, cleanly
        small = c.write(spare, 0, bytes(MIB), nfs3.FILE_SYNC)
        assert small.status in (NFS3_OK, nfs3.NFS3ERR_NOSPC)

        st = c.fsstat(keep)
        assert st.status == NFS3_OK and st.fbytes < 2 * MIB
        c.null()
        assert c.read_all(keep, 0, len(kept) + 1) == kept
        ka = c.getattr(keep).attrs
        assert ka is not None and ka.size == len(kept)
        assert c.commit(fill).status in (NFS3_OK, nfs3.NFS3ERR_NOSPC)
        # what the full object acknowledged reads back as written
        piece = random.Random(2).randbytes(MIB)
        assert c.read(fill, 0, MIB).data == piece
        assert c.read(fill, filled - MIB, MIB).data == piece

    # NOSPC is counted as the target's failure, not as a refused handle
    with open_ctl(osd.pod, osd) as ctl:
        stats = ctl.stats()
    assert stats.nfs_err_io >= 1 and stats.nfs_err_rejected == 0 and stats.nfs_err_other == 0
    assert stats.nfs_write_bytes >= len(kept) + filled

    # freeing space makes room again, and nothing else moved
    osd.tool("rm", str(PART), str(FILL))
    with osd.nfs3() as c:
        assert c.getattr(fill).status == nfs3.NFS3ERR_STALE
        w = c.write(spare, 0, b"room again" * 1000, nfs3.FILE_SYNC)
        assert w.status == NFS3_OK
        assert c.read_all(keep, 0, len(kept) + 1) == kept

    # and a clean restart on the once-full disk brings it all back
    osd.restart()
    with osd.nfs3() as c:
        assert c.read_all(keep, 0, len(kept) + 1) == kept
        assert c.read(spare, 0, 10).data == b"room again"


def test_a_target_whose_disk_filled_up_stops_cleanly_on_sigterm(
        full_osd: OsdProcess, pod: Pod, tmp_path: Path) -> None:
    """RocksDB's own info log lives on the same disk: once a write of it
    failed, the next line it logged aborted the target (an assertion in
    Debian's librocksdb), at the latest on SIGTERM.  The osd_factory
    fixture asserts the clean exit."""
    osd = full_osd
    pod.run(["sh", "-c", f"cat /dev/zero > {tmp_path / 'small' / 'filler'}"], check=False)
    for oid in range(10, 20):
        osd.tool("create", str(PART), str(oid), check=False)
        time.sleep(0.7)
    with osd.nfs3() as c:
        assert c.getattr(handle_for(osd, PART, KEEP)).status == NFS3_OK
