"""A sync that fails (fdatasync EIO, injected by libpando_syncfault) may
have dropped UNSTABLE data the target acknowledged, and Linux reports such
an error once: the next sync succeeds.  So the target changes its write
verifier on any failed sync, as knfsd does (nfsd_reset_write_verifier): a
later COMMIT answers another verifier than the WRITEs got, and the client
sends them again rather than trusting them lost.  Both the NFSv3 data
server and the control protocol (the gateway's writes and COMMIT).

A power cut (libpando_syncfault puts back what was synced, names
included) after a COMMIT has answered keeps the data and the extent
checksums scrub relies on.  An object's checksum file comes into being
with its first write, after the object's own creation made the data
file's name durable, so the sync that commits the checksums must make
the new file's name durable too: without it, the power cut takes the
file away and scrub reads every extent of the object as a hole it never
checks.  The commit may come after the open-object cache closed the
object's files, so it cannot rely on a descriptor the write left open."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from pando_testing import nfs3
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK
from pando_testing.osdctl import Stable, Status, open_ctl
from pando_testing.pod import Pod
from pando_testing.syncfault import SyncFault

PART = 5
EXTENT = 65536


@pytest.fixture
def partition() -> int:
    return PART


@pytest.fixture
def faults(tmp_path: Path) -> SyncFault:
    return SyncFault(tmp_path / "syncfault")


@pytest.fixture
def osd(osd_factory: Callable[..., OsdProcess], faults: SyncFault) -> OsdProcess:
    return osd_factory(1, env=faults.env)


def test_nfs3_commit_after_a_failed_sync_answers_a_new_verifier(
        osd: OsdProcess, faults: SyncFault, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    with osd.nfs3() as c:
        w = c.write(fh, 0, b"u" * 8192, nfs3.UNSTABLE)
        assert (w.status, w.committed) == (NFS3_OK, nfs3.UNSTABLE)
        faults.fail_next_sync()
        failed = c.commit(fh)
        assert faults.sync_failed()
        assert failed.status == nfs3.NFS3ERR_IO or failed.verf != w.verf
        again = c.commit(fh)
        assert again.status == NFS3_OK and again.verf != w.verf
        w2 = c.write(fh, 0, b"v" * 8192, nfs3.UNSTABLE)
        assert w2.status == NFS3_OK and w2.verf == again.verf
        assert c.commit(fh).verf == w2.verf       # no failure since: unchanged


def test_nfs3_stable_write_whose_sync_failed_changes_the_verifier(
        osd: OsdProcess, faults: SyncFault, make_object: Callable[[int], bytes]) -> None:
    """A FILE_SYNC write's own sync can be the one to fail, and report the
    loss of another client's UNSTABLE bytes in the same object."""
    fh = make_object(1)
    with osd.nfs3() as c:
        w = c.write(fh, 0, b"u" * 8192, nfs3.UNSTABLE)
        faults.fail_next_sync()
        assert c.write(fh, 65536, b"s" * 100, nfs3.FILE_SYNC).status == nfs3.NFS3ERR_IO
        again = c.commit(fh)
        assert again.status == NFS3_OK and again.verf != w.verf


def test_control_commit_after_a_failed_sync_answers_a_new_verifier(
        pod: Pod, osd: OsdProcess, faults: SyncFault,
        make_object: Callable[[int], bytes]) -> None:
    """The gateway's COMMIT is a zero-length DATA_SYNC WRITE (objio_flush);
    FLUSH failing counts as well."""
    make_object(1)
    with open_ctl(pod, osd) as ctl:
        w = ctl.write(PART, 1, 0, b"u" * 8192, Stable.UNSTABLE)
        assert w.status == Status.OK
        faults.fail_next_sync()
        failed = ctl.write(PART, 1, 0, b"", Stable.DATA_SYNC)
        assert faults.sync_failed()
        assert failed.status == Status.IO or failed.verifier != w.verifier
        again = ctl.write(PART, 1, 0, b"", Stable.DATA_SYNC)
        assert again.status == Status.OK and again.verifier != w.verifier
        faults.fail_next_sync()
        assert ctl.flush(PART, 1) == Status.IO
        assert ctl.write(PART, 1, 0, b"", Stable.DATA_SYNC).verifier != again.verifier


def power_cut(osd: OsdProcess, faults: SyncFault) -> None:
    osd.kill9()
    faults.power_cut(osd)
    osd.start()


def extents(osd: OsdProcess, oid: int) -> list[str]:
    """`stored ok` per extent when its CRC survived and matches the data."""
    out = osd.tool("checksums", str(PART), str(oid), "--verify").stdout
    return [" ".join(line.split()[2:]) for line in out.splitlines()[1:]]


def test_checksums_of_a_control_commit_survive_a_power_cut(
        pod: Pod, osd: OsdProcess, faults: SyncFault,
        make_object: Callable[[int], bytes]) -> None:
    make_object(1)
    data = os.urandom(3 * EXTENT)
    with open_ctl(pod, osd) as ctl:
        assert ctl.write(PART, 1, 0, data, Stable.UNSTABLE).status == Status.OK
        assert ctl.write(PART, 1, 0, b"", Stable.DATA_SYNC).status == Status.OK
    power_cut(osd, faults)
    assert osd.tool("get", str(PART), "1", "-", text=False).stdout == data
    assert extents(osd, 1) == ["stored ok"] * 3


def test_checksums_of_an_nfs3_commit_survive_a_power_cut(
        osd: OsdProcess, faults: SyncFault, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(2)
    data = os.urandom(2 * EXTENT)
    with osd.nfs3() as c:
        assert c.write(fh, 0, data, nfs3.UNSTABLE).status == NFS3_OK
        assert c.commit(fh).status == NFS3_OK
    power_cut(osd, faults)
    assert extents(osd, 2) == ["stored ok"] * 2


def test_checksums_of_a_commit_survive_a_power_cut_after_the_object_left_the_cache(
        pod: Pod, osd_factory: Callable[..., OsdProcess], faults: SyncFault) -> None:
    """128 descriptors keep 16 idle objects open (an eighth of the limit);
    writing 40 others after object 1 closes its files before its COMMIT."""
    small = osd_factory(1, env=faults.env, nofile=128)
    small.tool("mkpart", str(PART))
    data = os.urandom(2 * EXTENT)
    with open_ctl(pod, small) as ctl:
        for oid in range(1, 42):
            small.tool("create", str(PART), str(oid))
        assert ctl.write(PART, 1, 0, data, Stable.UNSTABLE).status == Status.OK
        for oid in range(2, 42):
            assert ctl.write(PART, oid, 0, b"x" * 4096, Stable.UNSTABLE).status == Status.OK
        assert ctl.write(PART, 1, 0, b"", Stable.DATA_SYNC).status == Status.OK
    power_cut(small, faults)
    assert extents(small, 1) == ["stored ok"] * 2
