"""A fence that did not reach every component is not a fence
(ganesha-fsal/README.md, "Fencing").  A holder that never answers a
recall (a plain NFSv4.1 client whose back channel drops every call) is
fenced by moving its file's capability version on at each component's
OSD; these tests take OSDs away first:

* one component's OSD down: the others are fenced and the one not
  reached is recorded stale, durably, so nothing reads it until repair,
  whatever the fenced client still writes there when it comes back;
* every component's OSD down: nothing is fenced, so the fence is not
  counted and stays due; it is made once the OSDs answer again, and
  then every component carries the new version."""
from __future__ import annotations

import time


from pando_testing.nfs4 import IOMODE_RW, NFS4_OK, Layout, Nfs4Client
from pando_testing.pnfs_tools import FENCING_RECALL_TIMEOUT, Component, PnfsCluster

DIR = "/pando"
PAGE = 4096


def silent_writer(c: PnfsCluster, nfs: Nfs4Client, name: str) -> tuple[int, list[Component]]:
    """A file the client holds a write layout of; its inode and components."""
    fh, sid = nfs.create(DIR, name)
    status, lo = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 0, PAGE, PAGE))
    assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
    ino = c.nfs3_lookup(f"/{name}")[1].fileid
    comps = c.wait_components(ino, 2)
    assert len(comps) == 2, comps
    return ino, comps


def test_a_component_the_fence_does_not_reach_is_stale(
        fencing: tuple[PnfsCluster, Nfs4Client]) -> None:
    c, nfs = fencing
    ino, comps = silent_writer(c, nfs, "half-reached")
    down = c.osd(comps[1].osd_id)
    down.kill9()
    before = c.layout_status()
    ok, why = c.recall_file("/half-reached")
    assert ok, why
    c.wait_layouts(lambda s: s.fenced > before.fenced, timeout=FENCING_RECALL_TIMEOUT + 30,
                   what="the silent holder fenced")
    stale = [(d.osd_id, d.stale) for d in c.damage() if d.ino == ino]
    assert stale == [(down.osd_id, True)], \
        f"damage records of inode {ino}: {stale}; want OSD {down.osd_id} stale"
    down.start()
    now = {k.osd_id: k.cap_version for k in c.components(ino)}
    assert now[comps[0].osd_id] > comps[0].cap_version, "the reached component was not fenced"


def test_a_fence_that_reaches_no_component_waits_for_the_osds(
        fencing: tuple[PnfsCluster, Nfs4Client]) -> None:
    c, nfs = fencing
    ino, comps = silent_writer(c, nfs, "unreached")
    for k in comps:
        c.osd(k.osd_id).kill9()
    before = c.layout_status()
    ok, why = c.recall_file("/unreached")
    assert ok, why
    time.sleep(FENCING_RECALL_TIMEOUT + 5)
    assert c.layout_status().fenced == before.fenced, "counted fenced with no OSD reached"
    for k in comps:
        c.osd(k.osd_id).start()
    c.wait_layouts(lambda s: s.fenced > before.fenced, timeout=30,
                   what="the fence made once the OSDs answer")
    after = {k.osd_id: k.cap_version for k in c.components(ino)}
    assert all(after[k.osd_id] > k.cap_version for k in comps), (comps, after)
