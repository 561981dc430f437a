"""What a client was told is durable survives kill -9 of the target: data
acknowledged by COMMIT, or written DATA_SYNC/FILE_SYNC.  The new process
draws a new write verifier, which is how clients learn that UNSTABLE data
they had not committed must be sent again.

(kill -9 loses the process, not the page cache: these tests show the target
keeps nothing it acknowledged only in its own memory, and that its index
and attributes come back; power loss is the object store's fsync tests.)"""
from __future__ import annotations

import random
from typing import Callable

import pytest

from pando_testing import nfs3
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK

PART = 2
MIB = 1 << 20


@pytest.fixture
def partition() -> int:
    return PART


def test_committed_unstable_writes_survive_kill9(osd: OsdProcess,
                                                 make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    data = random.Random(1).randbytes(8 * MIB + 123)
    with osd.nfs3() as c:
        verfs = set()
        for at in range(0, len(data), MIB):
            w = c.write(fh, at, data[at:at + MIB], nfs3.UNSTABLE)
            assert (w.status, w.committed) == (NFS3_OK, nfs3.UNSTABLE)
            verfs.add(w.verf)
        commit = c.commit(fh)
        assert commit.status == NFS3_OK
        assert verfs == {commit.verf}
        assert commit.wcc is not None and commit.wcc.after is not None
        assert commit.wcc.after.size == len(data)
        before = c.getattr(fh).attrs
    osd.kill9()
    osd.start()
    with osd.nfs3() as c:
        after = c.getattr(fh).attrs
        assert after is not None and before is not None
        assert (after.size, after.mtime_ns, after.fileid) == \
            (before.size, before.mtime_ns, before.fileid)
        assert c.read_all(fh, 0, len(data) + MIB) == data
        again = c.commit(fh)
        assert again.status == NFS3_OK and again.verf != commit.verf
        w = c.write(fh, len(data), b"more", nfs3.UNSTABLE)
        assert w.status == NFS3_OK and w.verf == again.verf


@pytest.mark.parametrize("stable", [nfs3.FILE_SYNC, nfs3.DATA_SYNC])
def test_sync_writes_survive_kill9_without_commit(osd: OsdProcess,
                                                  make_object: Callable[[int], bytes],
                                                  stable: int) -> None:
    fhs = [make_object(10), make_object(11)]
    rng = random.Random(stable)
    written: dict[bytes, bytearray] = {fh: bytearray() for fh in fhs}
    with osd.nfs3() as c:
        old_verf = b""
        for i in range(24):  # interleaved 64 KiB writes to two objects
            fh = fhs[i % 2]
            chunk = rng.randbytes(64 * 1024)
            w = c.write(fh, len(written[fh]), chunk, stable)
            assert (w.status, w.committed) == (NFS3_OK, nfs3.FILE_SYNC)
            written[fh] += chunk
            old_verf = w.verf
    osd.kill9()
    osd.start()
    with osd.nfs3() as c:
        for fh in fhs:
            assert c.getattr(fh).attrs.size == len(written[fh])  # type: ignore[union-attr]
            assert c.read_all(fh, 0, len(written[fh]) + 1) == bytes(written[fh])
        assert c.commit(fhs[0]).verf != old_verf


def test_verifier_changes_on_every_start(osd: OsdProcess,
                                         make_object: Callable[[int], bytes]) -> None:
    fh = make_object(20)
    seen = []
    for crash in (False, True, False):
        with osd.nfs3() as c:
            seen.append(c.commit(fh).verf)
        if crash:
            osd.kill9()
            osd.start()
        else:
            osd.restart()
    with osd.nfs3() as c:
        seen.append(c.commit(fh).verf)
    assert len(set(seen)) == len(seen), seen


def test_revocation_survives_kill9(osd: OsdProcess, make_object: Callable[[int], bytes]) -> None:
    """A fence must hold after a crash, or a fenced client could write again."""
    old = make_object(30)
    osd.tool("setcap", str(PART), "30", "7")
    osd.kill9()
    osd.start()
    with osd.nfs3() as c:
        assert c.write(old, 0, b"fenced", nfs3.FILE_SYNC).status == nfs3.NFS3ERR_STALE
        new = handle_for(osd, PART, 30, cap_version=7)
        assert c.write(new, 0, b"owner", nfs3.FILE_SYNC).status == NFS3_OK
