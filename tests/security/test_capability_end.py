"""A layout's handles end (SECURITY.md, "Client → OSD"), tried from a
plain NFSv4.1 client against the metadata manager and NFSv3 calls to the
OSDs with the handles of its layouts:

* a holder's write handles end when it returns its last write layout of
  the file, and other clients' read handles stay good, also when an OSD
  of the file cannot be reached (its component is then recorded stale);
  while other clients write the file, they keep theirs, and the last
  writer's return ends every writer's;
* every handle ends Capability_Lifetime seconds after its LAYOUTGET, and
  a new LAYOUTGET gives one that works;
* a handle answers only its holder, the synthetic uid of the client it
  was given to (RFC 8435's ffds_user), one per client."""
from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_ACCES, NFS3ERR_STALE, Nfs3Client
from pando_testing.nfs4 import (IOMODE_READ, IOMODE_RW, NFS4_OK, OPEN4_SHARE_ACCESS_BOTH,
                                Layout, Nfs4Client,
                                Stateid, ff_data_servers)
from pando_testing.oncrpc import auth_sys
from pando_testing.pnfs_tools import PnfsCluster

DIR = "/pando"
MIB = 1 << 20
LIFETIME_S = 5


@dataclass(frozen=True)
class Handle:
    osd_id: int
    fh: bytes
    holder: int


def manager(mds_factory: Callable[..., PandoMds], **kw: object) -> PandoMds:
    """Inline_Max 1: every file is on the OSDs and gets layouts."""
    return mds_factory(2, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=1,
                       **kw)


def client(m: PandoMds) -> Nfs4Client:
    nfs = Nfs4Client(m.pod.connect(m.host, m.nfs_port))
    assert nfs.reclaim_complete() == NFS4_OK
    return nfs


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return manager(mds_factory)


@pytest.fixture
def one(mds: PandoMds) -> Iterator[Nfs4Client]:
    with client(mds) as nfs:
        yield nfs


@pytest.fixture
def two(mds: PandoMds) -> Iterator[Nfs4Client]:
    with client(mds) as nfs:
        yield nfs


def layout_handles(nfs: Nfs4Client, fh: bytes, sid: Stateid,
                   iomode: int) -> tuple[Layout, list[Handle]]:
    """A layout of the file's first MiB and the handles in it."""
    status, lo = nfs.on(fh, nfs.layoutget(sid, iomode, 0, MIB, 4096))
    assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
    out = []
    for ds in ff_data_servers(lo.bodies[0]):
        assert ds.user == ds.group
        out.append(Handle(int(struct.unpack_from("<Q", ds.device_id, 8)[0]), ds.handles[0],
                          int(ds.user)))
    return lo, out


def layout(nfs: Nfs4Client, fh: bytes, sid: Stateid, iomode: int) -> tuple[Layout, Handle]:
    """A layout of the file's first MiB and the first handle in it."""
    lo, handles = layout_handles(nfs, fh, sid, iomode)
    return lo, handles[0]


def osd_client(mds: PandoMds, osd_id: int, uid: int) -> Nfs3Client:
    osd = next(o for o in mds.osds if o.osd_id == osd_id)
    return Nfs3Client.connect(mds.pod, osd.host, osd.nfs_port, auth_sys(uid, uid))


def write(mds: PandoMds, h: Handle, uid: int | None = None) -> int:
    with osd_client(mds, h.osd_id, h.holder if uid is None else uid) as c:
        return c.write(h.fh, 0, b"x" * 4096, nfs3.FILE_SYNC).status


def read(mds: PandoMds, h: Handle) -> int:
    with osd_client(mds, h.osd_id, h.holder) as c:
        return c.read(h.fh, 0, 4096).status


def test_a_returned_write_layouts_handles_write_no_more(mds: PandoMds, one: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "returned", mode=0o644)
    lo, h = layout(one, fh, sid, IOMODE_RW)
    assert write(mds, h) == NFS3_OK
    status, _ = one.on(fh, one.layoutreturn(lo.stateid, IOMODE_RW))
    assert status == NFS4_OK
    assert write(mds, h) == NFS3ERR_STALE
    assert read(mds, h) == NFS3ERR_STALE


def test_a_writers_return_leaves_other_clients_read_handles_good(
        mds: PandoMds, one: Nfs4Client, two: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "shared", mode=0o666)
    lo, w = layout(one, fh, sid, IOMODE_RW)
    assert write(mds, w) == NFS3_OK
    fh2, sid2 = two.open(DIR, "shared")
    _, r = layout(two, fh2, sid2, IOMODE_READ)
    assert one.on(fh, one.layoutreturn(lo.stateid, IOMODE_RW))[0] == NFS4_OK
    assert read(mds, r) == NFS3_OK


def test_a_writers_return_leaves_other_writers_writing_until_the_last_returns(
        mds: PandoMds, one: Nfs4Client, two: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "writers", mode=0o666)
    lo1, w1 = layout(one, fh, sid, IOMODE_RW)
    fh2, sid2 = two.open(DIR, "writers", OPEN4_SHARE_ACCESS_BOTH)
    lo2, w2 = layout(two, fh2, sid2, IOMODE_RW)
    assert one.on(fh, one.layoutreturn(lo1.stateid, IOMODE_RW))[0] == NFS4_OK
    assert write(mds, w2) == NFS3_OK
    assert two.on(fh2, two.layoutreturn(lo2.stateid, IOMODE_RW))[0] == NFS4_OK
    assert write(mds, w2) == NFS3ERR_STALE
    assert write(mds, w1) == NFS3ERR_STALE


def test_a_return_with_an_osd_away_leaves_readers_their_handles(
        mds: PandoMds, one: Nfs4Client, two: Nfs4Client) -> None:
    """The revocation cannot reach one mirror: that component is recorded
    stale (the file can lose it), and the file is not fenced."""
    fh, sid = one.create(DIR, "away", mode=0o666)
    lo, writes = layout_handles(one, fh, sid, IOMODE_RW)
    assert len(writes) == 2, writes
    fh2, sid2 = two.open(DIR, "away")
    _, reads = layout_handles(two, fh2, sid2, IOMODE_READ)
    away, here = writes
    next(o for o in mds.osds if o.osd_id == away.osd_id).stop()
    assert one.on(fh, one.layoutreturn(lo.stateid, IOMODE_RW))[0] == NFS4_OK
    time.sleep(1.5)             # past the grants' tick, which would fence
    assert write(mds, here) == NFS3ERR_STALE
    assert read(mds, next(h for h in reads if h.osd_id == here.osd_id)) == NFS3_OK
    damage = PnfsCluster(mds.pod, mds, list(mds.osds)).damage()
    assert [(d.osd_id, d.stale) for d in damage] == [(away.osd_id, True)], damage


def test_a_write_layout_after_a_return_writes(mds: PandoMds, one: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "again", mode=0o644)
    lo, old = layout(one, fh, sid, IOMODE_RW)
    assert one.on(fh, one.layoutreturn(lo.stateid, IOMODE_RW))[0] == NFS4_OK
    _, new = layout(one, fh, sid, IOMODE_RW)
    assert write(mds, new) == NFS3_OK
    assert write(mds, old) == NFS3ERR_STALE


def test_a_handle_answers_only_its_holder(mds: PandoMds, one: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "holder", mode=0o644)
    _, h = layout(one, fh, sid, IOMODE_RW)
    assert 1 << 30 <= h.holder < 1 << 31, "a synthetic uid, never 0 (any caller)"
    assert write(mds, h, uid=0) == NFS3ERR_ACCES
    assert write(mds, h, uid=h.holder + 1) == NFS3ERR_ACCES
    assert write(mds, h) == NFS3_OK


def test_each_client_has_its_own_holder(mds: PandoMds, one: Nfs4Client,
                                        two: Nfs4Client) -> None:
    fh, sid = one.create(DIR, "two-holders", mode=0o666)
    _, mine = layout(one, fh, sid, IOMODE_READ)
    fh2, sid2 = two.open(DIR, "two-holders")
    _, theirs = layout(two, fh2, sid2, IOMODE_READ)
    assert mine.holder != theirs.holder


def test_a_handle_ends_with_its_lifetime(mds_factory: Callable[..., PandoMds]) -> None:
    m = manager(mds_factory, extra_fsal=f"Capability_Lifetime = {LIFETIME_S};")
    with client(m) as nfs:
        fh, sid = nfs.create(DIR, "lifetime", mode=0o644)
        _, h = layout(nfs, fh, sid, IOMODE_RW)
        assert write(m, h) == NFS3_OK
        time.sleep(LIFETIME_S + 1.5)
        assert write(m, h) == NFS3ERR_STALE
        _, fresh = layout(nfs, fh, sid, IOMODE_RW)
        assert write(m, fresh) == NFS3_OK
