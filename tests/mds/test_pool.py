"""The object pool: maps made ahead so an empty file moves to objects
without waiting on the OSDs.  Its objects are named by intents, so they
are not leaked (fsck stays clean) and a restart's reaper removes what the
last run left."""
from __future__ import annotations

import os
import time
from typing import Callable

from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect

POOL = 4
INLINE_MAX = 65536


def objects_on_osds(mds: PandoMds) -> int:
    total = 0
    for o in mds.osds:
        for line in o.tool("stat").stdout.splitlines():
            name, _, value = line.partition(" ")
            if name == "objects":
                total += int(value.strip())
    return total


def wait_objects(mds: PandoMds, want: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while (have := objects_on_osds(mds)) != want:
        assert time.monotonic() < deadline, f"{have} objects on the OSDs, want {want}"
        time.sleep(0.2)


def test_empty_file_takes_pool_objects_and_restart_reaps_the_rest(
        mds_factory: Callable[..., PandoMds]) -> None:
    mds = mds_factory(4, object_pool=POOL)
    wait_objects(mds, POOL * 2)                 # two mirrors per pooled map
    root = mds.root_handle()
    c = connect(mds)
    try:
        fh = mds.create_files(["grown"])[0]
        # Growing an empty file past Inline_Max moves it; the pool has maps.
        assert c.setattr(fh, nfs3.Sattr3(size=INLINE_MAX + 4096)).status == nfs3.NFS3_OK
        data = os.urandom(8192)
        assert c.write(fh, INLINE_MAX, data, stable=nfs3.FILE_SYNC).status == nfs3.NFS3_OK
        got = c.read_all(fh, 0, INLINE_MAX + 8192)
        assert got[:INLINE_MAX] == bytes(INLINE_MAX) and got[INLINE_MAX:] == data
    finally:
        c.close()
    # The pool refilled behind the taken entry.
    wait_objects(mds, POOL * 2 + 2)
    mds.stop_ganesha()
    code, out = mds.fsck()
    assert code == 0, out
    # A restart: the old pool's objects go, a new pool comes; the file stays.
    mds.start()
    wait_objects(mds, POOL * 2 + 2)
    c = connect(mds)
    try:
        fh = c.lookup_fh(root, "grown")
        assert c.read_all(fh, INLINE_MAX, 8192) == data
    finally:
        c.close()
