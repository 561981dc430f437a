"""Layout recalls to clients that are gone (ganesha-fsal/patches 0142, 0143).

Two plain NFSv4.1 clients (pando_testing.nfs4) put their sessions' back
channels on their connections, each gets a write layout of the same
files, and then their connections close, as when the client processes
are killed with SIGKILL.  The manager finds out (the connections' end)
before anyone recalls the layouts.  An admin recall of each file
follows, as the chaos soak's did when an OSD's death made the manager
recall the layouts of the files on it.  Ganesha 4.3 died of SIGSEGV in
two ways there:

- it called back on the dead connection's transport, in libntirpc
  (`svc_rqst_expire_insert`, the transport no longer on an event
  channel), at the first recall (0142 fails such a call instead);
- with the call failed, the revocation of the layout that Ganesha queues
  at once ran on another thread while `layoutrecall()` still walked the
  recall's work list, which that revocation frees (0143): one recall in
  about ten crashed, hence several files, each recalled from two
  clients.

Now no callback goes out, Ganesha revokes the layouts as it does for a
client without a back channel, the manager stays up, and another client
writes and reads a file and gets a write layout of it.  A revoked write
layout was never given back: its holder may come back on a new
connection and write on with its handles, so the manager fences every
file a revoked layout covered (a new capability version on each of its
objects) before anyone else writes it.  Run it on an
earlier series' Ganesha (PANDO_GANESHA_ROOT, ganesha-fsal/patches/README.md)
to see it fail.
"""
from __future__ import annotations

import os
import time
from typing import Callable

from pando_testing.nfs3 import FILE_SYNC, NFS3_OK
from pando_testing.nfs4 import (EOF, IOMODE_RW, NFS4_OK, OPEN4_SHARE_ACCESS_BOTH, Layout,
                                Nfs4Client)
from pando_testing.pnfs_tools import PnfsCluster

DIR = "/pando"                  # the pseudo path of the export root
# Each recall raced the revocation its failed call queued (0143) and lost
# about one time in ten: six files, each recalled from two clients, crash
# a series without 0143 in most runs.
NAMES = [f"held{i}" for i in range(6)]
NAME = NAMES[0]                 # the file others use afterwards
HOLDERS = 2
PAGE = 4096
RECALL_TIMEOUT = 3
# The manager reads the end of the connection and takes its transport
# down within milliseconds; the SIGSEGV came within a second of the recall.
SETTLE_S = 1.0


def test_recalls_to_clients_whose_connections_are_gone_do_not_crash_the_manager(
        pnfs_cluster: Callable[..., PnfsCluster]) -> None:
    c = pnfs_cluster(recall_timeout=RECALL_TIMEOUT)
    m = c.mds
    holders = [Nfs4Client(m.pod.connect(m.host, m.nfs_port), name=f"gone{i}", back_channel=True)
               for i in range(HOLDERS)]
    for h in holders:
        assert h.reclaim_complete() == NFS4_OK
    for name in NAMES:
        for i, h in enumerate(holders):
            fh, open_sid = (h.create(DIR, name) if i == 0
                            else h.open(DIR, name, OPEN4_SHARE_ACCESS_BOTH))
            status, lo = h.on(fh, h.layoutget(open_sid, IOMODE_RW, 0, EOF, PAGE))
            assert status == NFS4_OK and isinstance(lo, Layout) and lo.segments, \
                f"LAYOUTGET of {name} by holder {i}: {status}"
    ls0 = c.layout_status()
    assert ls0.segments == HOLDERS * len(NAMES), f"the holders' layouts are not all out: {ls0}"
    inos = [c.nfs3_lookup(name)[1].fileid for name in NAMES]
    versions0 = {ino: [k.cap_version for k in c.wait_components(ino, 2)] for ino in inos}

    for h in holders:
        h.close()               # what the kernel does for a process killed with SIGKILL
    time.sleep(SETTLE_S)
    assert m.alive()
    for name in NAMES:
        ok, msg = c.recall_file(f"/{name}")
        assert ok and "recalling" in msg, f"recall_file {name}: {ok} {msg!r}"
    time.sleep(2 * SETTLE_S)
    assert m.alive(), (f"ganesha.nfsd died (exit {m.proc.returncode if m.proc else None}) "
                       "recalling layouts from clients whose connections are gone")

    # The layouts end (revoked at once, or fenced after Recall_Timeout).
    ls1 = c.wait_layouts(lambda s: s.segments == 0, RECALL_TIMEOUT + 10,
                         "the gone clients' recalled layouts ending")
    assert ls1.recalls == ls0.recalls + len(NAMES), f"{ls0} -> {ls1}"
    ls2 = c.wait_layouts(lambda s: s.fenced >= ls0.fenced + HOLDERS * len(NAMES), 10,
                         "every revoked write layout fenced")
    assert ls2.fenced == ls0.fenced + HOLDERS * len(NAMES), f"{ls0} -> {ls2}"
    for ino in inos:
        after = [k.cap_version for k in c.components(ino)]
        assert len(after) == len(versions0[ino]) and \
            all(a > b for a, b in zip(after, versions0[ino])), \
            f"inode {ino}: capability versions {versions0[ino]} -> {after}: a revoked " \
            "holder's handles still work"

    # Others are served: NFSv3 through the manager, and a new NFSv4.1
    # client's write layout of the same file.
    data = os.urandom(3 * PAGE)
    fh3, _ = c.nfs3_lookup(NAME)
    with c.nfs3() as n:
        r = n.write(fh3, 0, data, FILE_SYNC)
    assert r.status == NFS3_OK and r.count == len(data), f"NFSv3 WRITE: {r.status}"
    assert c.nfs3_read(NAME) == data
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port), name="next") as other:
        assert other.reclaim_complete() == NFS4_OK
        fh4, sid = other.open(DIR, NAME, OPEN4_SHARE_ACCESS_BOTH)
        status, lo = other.on(fh4, other.layoutget(sid, IOMODE_RW, 0, EOF, PAGE))
        assert status == NFS4_OK and isinstance(lo, Layout), f"a new client's LAYOUTGET: {status}"
        status, _ = other.on(fh4, other.layoutreturn(lo.stateid))
        assert status == NFS4_OK
    assert m.alive()
