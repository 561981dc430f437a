"""A cluster key rotation as a target sees it (osd-target/README.md,
"Cluster key file"): started with the new key and the old one as
previous, it serves handles of both and its data directory follows the
new key; once the previous key is dropped it opens with the new key alone
and refuses the old handles.  Control calls across a rotation are in
tests/security/test_ctl_auth_replay.py."""
from __future__ import annotations

from pathlib import Path

from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess, osd_binary
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_BADHANDLE
from pando_testing.pod import Pod


def test_a_target_follows_a_rotated_key_file(pod: Pod, tmp_path: Path, osd: OsdProcess,
                                             cluster_key: ClusterKey) -> None:
    osd.tool("mkpart", "1")
    osd.tool("create", "1", "10")
    old_handle = handle_for(osd, 1, 10)

    osd.key = write_cluster_key(tmp_path / "rotated.key", key_id=2, previous=cluster_key)
    osd.restart()
    assert osd.superblock_key() == "key_id = 2"
    assert "cluster key 2 replaces key 1" in osd.log_text()
    new_handle = handle_for(osd, 1, 10)
    with osd.nfs3() as nfs:
        assert nfs.getattr(old_handle).status == NFS3_OK
        assert nfs.getattr(new_handle).status == NFS3_OK

    osd.key = write_cluster_key(tmp_path / "done.key", key_id=2, secret=osd.key.secret)
    osd.restart()
    with osd.nfs3() as nfs:
        assert nfs.getattr(old_handle).status == NFS3ERR_BADHANDLE
        assert nfs.getattr(new_handle).status == NFS3_OK
    osd.stop()

    # a key file that holds neither of the directory's keys is refused
    osd.key = write_cluster_key(tmp_path / "other.key", key_id=3, previous=cluster_key)
    cp = pod.run([osd_binary(), "--osd-id", "1", "--data-dir", osd.data_path, "--key-file",
                  osd.key.path, "--ctl-listen", "127.0.0.1:0", "--nfs-listen", "127.0.0.1:0"],
                 check=False)
    assert cp.returncode != 0
    assert "formatted for osd 1 with key 2, not osd 1 with key 3 or its previous key" in \
        cp.stderr, cp.stderr
