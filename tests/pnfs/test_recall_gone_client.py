"""A layout recall to a client that is gone (ganesha-fsal/patches 0142).

A plain NFSv4.1 client (pando_testing.nfs4) puts its session's back
channel on its connection, opens a file for write, gets a write layout,
and then its connection closes, as when the client process is killed
with SIGKILL.  The manager finds out (the connection's end) before anyone
recalls the layout.  An admin recall of the file follows: Ganesha 4.3
called back on the dead connection's transport and died with SIGSEGV in
libntirpc (`svc_rqst_expire_insert`, the transport no longer on an event
channel), as the chaos soak found when an OSD's death made the manager
recall the layouts of the files on it.

Now the callback fails to go out, Ganesha revokes the layout as it does
for a client without a back channel, the manager stays up, and another
client writes and reads the file and gets a write layout of it.  Run it
on the previous series' Ganesha (PANDO_GANESHA_ROOT,
ganesha-fsal/patches/README.md) to see it fail.
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
NAME = "held"
PAGE = 4096
RECALL_TIMEOUT = 3
# The manager reads the end of the connection and takes its transport
# down within milliseconds; the SIGSEGV came within a second of the recall.
SETTLE_S = 1.0


def test_a_recall_to_a_client_whose_connection_is_gone_does_not_crash_the_manager(
        pnfs_cluster: Callable[..., PnfsCluster]) -> None:
    c = pnfs_cluster(recall_timeout=RECALL_TIMEOUT)
    m = c.mds
    holder = Nfs4Client(m.pod.connect(m.host, m.nfs_port), name="gone", back_channel=True)
    assert holder.reclaim_complete() == NFS4_OK
    fh, open_sid = holder.create(DIR, NAME)
    status, lo = holder.on(fh, holder.layoutget(open_sid, IOMODE_RW, 0, EOF, PAGE))
    assert status == NFS4_OK and isinstance(lo, Layout) and lo.segments, f"LAYOUTGET: {status}"
    ls0 = c.layout_status()
    assert ls0.segments == 1, f"the holder has no layout out: {ls0}"

    holder.close()              # what the kernel does for a process killed with SIGKILL
    time.sleep(SETTLE_S)
    assert m.alive()
    ok, msg = c.recall_file(f"/{NAME}")
    assert ok and "recalling" in msg, f"recall_file: {ok} {msg!r}"
    time.sleep(2 * SETTLE_S)
    assert m.alive(), (f"ganesha.nfsd died (exit {m.proc.returncode if m.proc else None}) "
                       "recalling a layout from a client whose connection is gone")

    # The layout ends (revoked at once, or fenced after Recall_Timeout).
    ls1 = c.wait_layouts(lambda s: s.segments == 0, RECALL_TIMEOUT + 10,
                         "the gone client's recalled layout ending")
    assert ls1.recalls == ls0.recalls + 1, f"{ls0} -> {ls1}"

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
