"""Errors a client reports on the OSDs of its layout (flexfiles
LAYOUTRETURN bodies, RFC 8435 9.3; LAYOUTERROR goes the same way) become
durable damage records and make the manager probe the OSD: only a device
of the file's own layout may be named, or any client could mark any OSD's
components damaged, and fill the store with records."""
from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import pytest

from pando_testing.mds import PandoMds
from pando_testing.nfs4 import (IOMODE_RW, NFS4_OK, Layout, Nfs4Client, ff_device_ids,
                                ff_ioerr_body)
from pando_testing.pnfs_tools import PnfsCluster

DIR = "/pando"
NFS4ERR_IO, OP_READ, OP_WRITE = 5, 25, 38


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Six OSDs, two mirrors: a file's layout names two of them."""
    return mds_factory(6, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=1)


@pytest.fixture
def root(mds: PandoMds) -> Iterator[Nfs4Client]:
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        yield nfs


def osd_of(devid: bytes) -> int:
    return int(struct.unpack_from("<Q", devid, 8)[0])


def with_osd(devid: bytes, osd_id: int) -> bytes:
    """The device id of another OSD, as a client could make one up."""
    return devid[:8] + struct.pack("<Q", osd_id)


def report(nfs: Nfs4Client, name: str, errors: Callable[[list[bytes]], list[tuple[bytes, int, int]]]
           ) -> list[int]:
    """A write layout of a new file, returned with the errors `errors`
    makes of its device ids; the OSDs of its layout."""
    fh, sid = nfs.create(DIR, name, mode=0o644)
    status, lo = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 0, 1 << 20, 4096))
    assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
    ids = ff_device_ids(lo.bodies[0])
    body = ff_ioerr_body(0, 1 << 20, lo.stateid, errors(ids))
    status, _ = nfs.on(fh, nfs.layoutreturn(lo.stateid, IOMODE_RW, body=body))
    assert status == NFS4_OK
    return sorted({osd_of(d) for d in ids})


def test_an_error_on_a_device_of_the_layout_is_recorded(mds: PandoMds, root: Nfs4Client) -> None:
    osds = report(root, "real", lambda ids: [(ids[0], NFS4ERR_IO, OP_READ)])
    damage = PnfsCluster(mds.pod, mds, list(mds.osds)).damage()
    assert [d.osd_id for d in damage] == [osds[0]] or [d.osd_id for d in damage] == [osds[1]]


def test_an_error_naming_a_device_outside_the_layout_records_nothing(
        mds: PandoMds, root: Nfs4Client) -> None:
    def forged(ids: list[bytes]) -> list[tuple[bytes, int, int]]:
        mine = {osd_of(d) for d in ids}
        other = next(o.osd_id for o in mds.osds if o.osd_id not in mine)
        return [(with_osd(ids[0], other), NFS4ERR_IO, OP_WRITE),
                (with_osd(ids[0], 77), NFS4ERR_IO, OP_WRITE),
                # 2^32 + a device of the layout: the OSD id is 64 bits on the wire
                (with_osd(ids[0], (1 << 32) + osd_of(ids[0])), NFS4ERR_IO, OP_WRITE),
                (b"\x07" + ids[0][1:], NFS4ERR_IO, OP_WRITE)]
    report(root, "forged", forged)
    assert PnfsCluster(mds.pod, mds, list(mds.osds)).damage() == []
