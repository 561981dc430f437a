"""No application error with nothing injected: a stock kernel guest's two
writers (pando_testing.kernel_writers: files created, 64 KiB blocks
rewritten in place, every `dd` with fsync, files read back, the page
cache dropped every 8th step) run for WRITE_S seconds against two
mirrors, and not one write, fsync or read may fail.

This guards the fsync EIO of issue 21: 6.12 got NFS4ERR_BAD_STATEID for
a LAYOUTCOMMIT in about one run in three of test_rebuild_kernel.py's
writers, with no OSD killed too, its stateid deleted by a LAYOUTRETURN
that came right after a LAYOUTGET on the same file.  Ganesha let a
LAYOUTRETURN the client had sent before a LAYOUTGET's reply (an older
seqid) take away the segment that LAYOUTGET had just granted, and
deleted the layout state under the client (patches 0132 and 0133;
tests/pnfs/test_layout_stateids.py reproduces it op by op).

PANDO_FSYNC_RUNS=N repeats each kernel N times (the issue asks for 20).
"""
from __future__ import annotations

import os
import time
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.kernel_writers import Writers
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous

WRITE_S = 45
RUNS = int(os.environ.get("PANDO_FSYNC_RUNS", "1"))


@pytest.mark.slow
@pytest.mark.parametrize("run", range(RUNS))
@pytest.mark.parametrize("version", ["6.1", "6.12", "7.x"])
def test_kernel_writers_with_fsync_never_see_an_error(
        pnfs_cluster: Callable[..., PnfsCluster], gate: Rendezvous,
        guest: Callable[..., KernelClient], version: str, run: int) -> None:
    c = pnfs_cluster(mirrors=2)
    w = Writers(c, gate, guest, version)
    w.wait_writing(180)
    time.sleep(WRITE_S)
    w.assert_writes_go_on(5, "writers")
    r = w.finish()
    ops = sum(e.iterations for e in r.ends.values())
    print(f"run {run}: {len(r.sums)} files, {ops} iterations, "
          f"{sum(e.rewrites for e in r.ends.values())} rewrites")
    assert not r.failed, f"writes failed: {r.failed}"
    assert not r.readerrs, f"reads failed: {r.readerrs}"
    assert not r.badreads and not r.mismatched, f"wrong bytes: {r.badreads} {r.mismatched}"
    assert not r.lost and r.verified == (len(r.sums), 0), r.verified
