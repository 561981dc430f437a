"""A cluster key rotation without a restart (osd-target/README.md,
"Cluster key file"): SIGHUP makes a running target read its key file
again.  Handles and control calls under every key the new file holds are
served at once, those under a key it dropped are refused, and the data
directory follows the new key as at a start.  A key file that cannot be
read, or that holds neither of the directory's keys, changes nothing: the
target goes on with the keys it had and says why in its log."""
from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_BADHANDLE


def tool_as(osd: OsdProcess, key: ClusterKey, *args: str) -> subprocess.CompletedProcess[Any]:
    """pando-osd-tool's control calls signed with `key`."""
    return osd.tool(*args, check=False, key=key)


def statuses(osd: OsdProcess, *handles: bytes) -> list[int]:
    with osd.nfs3() as nfs:
        return [nfs.getattr(h).status for h in handles]


def test_sighup_rotates_the_key_of_a_running_target(tmp_path: Path, osd: OsdProcess,
                                                     cluster_key: ClusterKey) -> None:
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "10")
    pid = osd.proc.pid if osd.proc else 0
    old = cluster_key
    old_copy = write_cluster_key(tmp_path / "old.key", old.key_id, old.secret)
    old_handle = handle_for(osd, 1, 10)

    osd.key = write_cluster_key(old.path, key_id=2, previous=old)
    osd.reload("SIGHUP: cluster key 2 (previous 1) in use")
    assert osd.superblock_key() == "key_id = 2"
    new_handle = handle_for(osd, 1, 10)
    assert statuses(osd, old_handle, new_handle) == [NFS3_OK, NFS3_OK]
    assert tool_as(osd, old_copy, "getattr", "1", "10").returncode == 0
    assert tool_as(osd, osd.key, "getattr", "1", "10").returncode == 0

    new_copy = write_cluster_key(tmp_path / "new.key", 2, osd.key.secret)
    osd.key = write_cluster_key(old.path, key_id=2, secret=osd.key.secret)
    osd.reload("SIGHUP: cluster key 2 in use")
    assert statuses(osd, old_handle, new_handle) == [NFS3ERR_BADHANDLE, NFS3_OK]
    assert tool_as(osd, old_copy, "getattr", "1", "10").returncode != 0
    assert tool_as(osd, new_copy, "getattr", "1", "10").returncode == 0
    assert osd.proc is not None and osd.proc.pid == pid, "the target restarted"


def test_a_bad_key_file_on_sighup_keeps_the_keys_in_use(tmp_path: Path, osd: OsdProcess,
                                                        cluster_key: ClusterKey) -> None:
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "10")
    handle = handle_for(osd, 1, 10)
    keep = write_cluster_key(tmp_path / "keep.key", cluster_key.key_id, cluster_key.secret)

    cluster_key.path.write_text("id = 2\nsecret = nothex\n")
    osd.reload("; keeping cluster key 1")
    write_cluster_key(cluster_key.path, key_id=3)     # neither of the directory's keys
    osd.reload("; keeping cluster key 1")
    assert "holds neither key 1 of" in osd.log_text()
    assert osd.superblock_key() == "key_id = 1"
    assert statuses(osd, handle) == [NFS3_OK]
    assert tool_as(osd, keep, "getattr", "1", "10").returncode == 0


def test_calls_in_flight_ride_through_reloads(tmp_path: Path, osd: OsdProcess,
                                              cluster_key: ClusterKey) -> None:
    """Twenty SIGHUPs, each file holding both keys in turn, while one
    client reads attributes over NFSv3 and the control protocol without
    a pause: every call is served (the swap is whole for each call)."""
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "10")
    handle = handle_for(osd, 1, 10)
    other = write_cluster_key(tmp_path / "other.key", key_id=2, previous=cluster_key)
    files = [(cluster_key.path.read_text(), "cluster key 1 (previous 2)"),
             (other.path.read_text(), "cluster key 2 (previous 1)")]
    files[0] = (files[0][0] + f"previous_id = 2\nprevious_secret = {other.secret.hex()}\n",
                files[0][1])
    stop = threading.Event()
    failures: list[str] = []

    def load() -> None:
        with osd.nfs3() as nfs:
            while not stop.is_set():
                status = nfs.getattr(handle).status
                if status != NFS3_OK:
                    failures.append(f"GETATTR {status}")

    t = threading.Thread(target=load)
    t.start()
    try:
        for i in range(20):
            text, line = files[i % 2]
            cluster_key.path.write_text(text)
            osd.reload(f"SIGHUP: {line} in use")
            if tool_as(osd, other, "getattr", "1", "10").returncode != 0:
                failures.append(f"control GETATTR after reload {i}")
    finally:
        stop.set()
        t.join()
    assert not failures, failures
