"""What a plain NFSv4.1 client gets that never fetched FATTR4_MDSTHRESHOLD
(a conformance client, pando_testing.nfs4), with production's Inline_Max
of 64 KiB: it cannot know that a small file is kept inline, so every
layout it asks for is granted, and the file moves to objects.  A client
that fetched the threshold (as every Linux kernel does) keeps the inline
behaviour: a read layout of a small inline file is refused.
"""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from pando_testing.nfs4 import (EOF, FATTR4_MDSTHRESHOLD, IOMODE_READ, IOMODE_RW, NFS4_OK,
                                NFS4ERR_LAYOUTUNAVAILABLE, Layout, Nfs4Client)
from pando_testing.pnfs_tools import PnfsCluster

DIR = "/pando"
ASK = 8192


@pytest.fixture
def cluster(pnfs_cluster: Callable[..., PnfsCluster]) -> PnfsCluster:
    return pnfs_cluster(mirrors=2, inline_max=65536)


@pytest.fixture
def client(cluster: PnfsCluster) -> Iterator[Nfs4Client]:
    m = cluster.mds
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port), name="plain") as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        yield nfs


@pytest.mark.parametrize("iomode", [IOMODE_RW, IOMODE_READ], ids=["write", "read"])
def test_a_client_that_never_fetched_the_threshold_gets_a_layout_of_a_new_file(
        client: Nfs4Client, iomode: int) -> None:
    fh, open_sid = client.create(DIR, f"new-{iomode}")
    status, lo = client.on(fh, client.layoutget(open_sid, iomode, 0, EOF, ASK))
    assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
    assert lo.segments and lo.segments[0][2] == iomode


def test_a_client_that_fetched_the_threshold_keeps_small_files_inline(
        cluster: PnfsCluster, client: Nfs4Client) -> None:
    m = cluster.mds
    fh, open_sid = client.create(DIR, "small")
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port), name="aware") as aware:
        assert aware.reclaim_complete() == NFS4_OK
        status, hint = aware.on(fh, aware.getattr(FATTR4_MDSTHRESHOLD))
        assert status == NFS4_OK and isinstance(hint, bytes) and hint, "no MDS threshold"
        _, aware_open = aware.create(DIR, "small")
        status, _ = aware.on(fh, aware.layoutget(aware_open, IOMODE_READ, 0, ASK, ASK))
        assert status == NFS4ERR_LAYOUTUNAVAILABLE
