"""The layout stateid as RFC 8881 12.5 serialises it, from a plain NFSv4.1
client (pando_testing.nfs4) against the metadata manager, one op at a time
(ganesha-fsal/patches 0131-0134):

* a LAYOUTRETURN with an older seqid than the state's is
  NFS4ERR_OLD_STATEID and returns nothing, so a return the client sent
  before a LAYOUTGET's reply cannot take that LAYOUTGET's segment away
  (the fsync EIO of issue 21); LAYOUTGET keeps accepting older seqids;
* only a layout stateid returns a layout;
* returning part of a whole-file layout keeps the rest, and returning the
  rest ends it;
* a LAYOUTCOMMIT of a layout the server no longer knows is
  NFS4ERR_BADLAYOUT, not the BAD_STATEID on which Linux fails fsync;
* a fenced segment still in the layout state does not swallow the
  LAYOUTCOMMIT of writes made through the segment granted after it.

Run them on stock Ganesha (PANDO_GANESHA_ROOT, ganesha-fsal/patches/README.md)
to see them fail.
"""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from pando_testing.nfs4 import (EOF, IOMODE_RW, NFS4_OK, NFS4ERR_BAD_STATEID,
                                NFS4ERR_BADLAYOUT, NFS4ERR_OLD_STATEID, Layout, Nfs4Client,
                                Stateid)
from pando_testing.pnfs_tools import FENCING_RECALL_TIMEOUT, PnfsCluster

DIR = "/pando"
PAGE = 4096


@pytest.fixture
def client(pnfs_cluster: Callable[..., PnfsCluster]) -> Iterator[Nfs4Client]:
    c = pnfs_cluster(mirrors=2)
    m = c.mds
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        yield nfs


def layoutget(nfs: Nfs4Client, fh: bytes, sid: Stateid) -> Layout:
    """A write layout for the first page (the ranged ask of writeback)."""
    status, lo = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 0, PAGE, PAGE))
    assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
    return lo


def test_a_layoutreturn_with_an_older_seqid_is_old_stateid_and_keeps_the_later_layout(
        client: Nfs4Client) -> None:
    fh, open_sid = client.create(DIR, "older-seqid")
    first = layoutget(client, fh, open_sid)
    second = layoutget(client, fh, open_sid)       # as Linux asks in every OPEN
    assert second.stateid.other == first.stateid.other, "the layout state was not reused"
    assert second.stateid.seqid == first.stateid.seqid + 1
    # LAYOUTGET accepts the older seqid (knfsd does; patch 0002).
    third = layoutget(client, fh, first.stateid)
    assert third.stateid.seqid == second.stateid.seqid + 1

    status, _ = client.on(fh, client.layoutreturn(second.stateid))
    assert status == NFS4ERR_OLD_STATEID
    status, size = client.on(fh, client.layoutcommit(third.stateid, PAGE - 1))
    assert (status, size) == (NFS4_OK, PAGE), "the layout was taken by the older return"
    status, kept = client.on(fh, client.layoutreturn(third.stateid))
    assert (status, kept) == (NFS4_OK, None)


def test_a_layoutreturn_of_seqid_zero_returns_the_current_layout(client: Nfs4Client) -> None:
    fh, open_sid = client.create(DIR, "seqid-zero")
    lo = layoutget(client, fh, open_sid)
    status, kept = client.on(fh, client.layoutreturn(lo.stateid.with_seqid(0)))
    assert (status, kept) == (NFS4_OK, None)


def test_a_layoutreturn_with_an_open_stateid_is_bad_stateid(client: Nfs4Client) -> None:
    fh, open_sid = client.create(DIR, "open-stateid")
    lo = layoutget(client, fh, open_sid)
    status, _ = client.on(fh, client.layoutreturn(open_sid))
    assert status == NFS4ERR_BAD_STATEID
    status, size = client.on(fh, client.layoutcommit(lo.stateid, PAGE - 1))
    assert (status, size) == (NFS4_OK, PAGE), "the open stateid's return took the layout"


def test_returning_part_of_a_layout_keeps_the_rest_and_returning_the_rest_ends_it(
        client: Nfs4Client) -> None:
    fh, open_sid = client.create(DIR, "partial")
    lo = layoutget(client, fh, open_sid)
    assert lo.segments == [(0, EOF, IOMODE_RW)], "mirrored layouts cover the whole file"
    status, kept = client.on(fh, client.layoutreturn(lo.stateid, IOMODE_RW, 0, PAGE))
    assert status == NFS4_OK and isinstance(kept, Stateid), "nothing kept after a partial return"
    status, size = client.on(fh, client.layoutcommit(kept, 2 * PAGE - 1, PAGE, PAGE))
    assert (status, size) == (NFS4_OK, 2 * PAGE)
    status, left = client.on(fh, client.layoutreturn(kept, IOMODE_RW, PAGE, EOF))
    assert (status, left) == (NFS4_OK, None), "the rest of the layout was not returned"


def test_a_layoutcommit_after_the_whole_layout_was_returned_is_badlayout(
        client: Nfs4Client) -> None:
    fh, open_sid = client.create(DIR, "returned")
    lo = layoutget(client, fh, open_sid)
    status, kept = client.on(fh, client.layoutreturn(lo.stateid))
    assert (status, kept) == (NFS4_OK, None)
    status, _ = client.on(fh, client.layoutcommit(lo.stateid, PAGE - 1))
    assert status == NFS4ERR_BADLAYOUT


def test_a_layoutcommit_through_a_layout_granted_after_a_fence_grows_the_file(
        fencing: tuple[PnfsCluster, Nfs4Client]) -> None:
    """Linux keeps a fenced segment in the layout state until its return,
    and gets a new segment beside it; Ganesha offers the FSAL the commit
    segment by segment.  The fenced one must pass the commit on, or the
    size of what the client wrote through the new one is lost while its
    fsync returns 0 (test_fencing's 7.x data loss)."""
    c, nfs = fencing
    fh, open_sid = nfs.create(DIR, "fenced")
    fenced = layoutget(nfs, fh, open_sid)
    before = c.layout_status()
    ok, why = c.recall_file("/fenced")
    assert ok, why
    c.wait_layouts(lambda s: s.fenced > before.fenced, timeout=FENCING_RECALL_TIMEOUT + 20,
                   what="the silent holder fenced")
    new = layoutget(nfs, fh, fenced.stateid)
    assert new.stateid.other == fenced.stateid.other, "the layout state was not reused"
    assert nfs.rpc.ignored_calls >= 1, "no CB_LAYOUTRECALL reached the client"
    size = 8 * 1024 * 1024
    status, got = nfs.on(fh, nfs.layoutcommit(new.stateid, size - 1))
    assert (status, got) == (NFS4_OK, size), \
        f"LAYOUTCOMMIT through the new layout: {status}, size {got}"
    assert nfs.size_and_mode(fh)[0] == size
