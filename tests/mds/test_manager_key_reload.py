"""A cluster key rotation with no restart of the metadata manager
(osd-target/README.md, "Cluster key file"): `pando mds reload-key` (what
`systemctl reload pando-mds` runs) makes it read its key file again.
From then on it mints capabilities and signs control calls with the new
key, so the OSDs can drop the old one while gateway I/O and new layouts
go on.  A key file that gives the key in use another secret, or that
cannot be read, is refused and changes nothing."""
from __future__ import annotations

import os
import struct
from collections.abc import Callable

from pando_testing import nfs3
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.mds import PandoMds
from pando_testing.nfs3 import NFS3_OK, Nfs3Client, Sattr3
from pando_testing.nfs4 import IOMODE_RW, NFS4_OK, Layout, Nfs4Client, ff_data_servers
from pando_testing.pando_cli import run_cli

DIR = "/pando"
MIB = 1 << 20


def reload_key(mds: PandoMds) -> tuple[int, str]:
    cp = run_cli(mds.pod, "mds", "reload-key", env=mds.dbus_env())
    return cp.returncode, (cp.stdout + cp.stderr).strip()


def handle_key_ids(mds: PandoMds, name: str) -> set[int]:
    """The key ids of the capabilities in a new write layout of `name`
    (bytes 2 and 3 of each handle, osd-target/README.md)."""
    with Nfs4Client(mds.pod.connect(mds.host, mds.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        fh, sid = nfs.create(DIR, name, mode=0o644)
        status, lo = nfs.on(fh, nfs.layoutget(sid, IOMODE_RW, 0, MIB, MIB))
        assert status == NFS4_OK and isinstance(lo, Layout), f"LAYOUTGET: {status}"
        return {struct.unpack(">H", h[2:4])[0]
                for ds in ff_data_servers(lo.bodies[0]) for h in ds.handles}


def gateway_round_trip(mds: PandoMds, name: str) -> None:
    data = os.urandom(MIB)
    with Nfs3Client.over(mds.pod.connect(mds.host, mds.nfs_port)) as c:
        r = c.create(mds.root_handle(), name, nfs3.GUARDED, Sattr3(mode=0o644))
        assert r.status == NFS3_OK and r.fh is not None
        c.write_all(r.fh, 0, data, nfs3.FILE_SYNC, chunk=256 << 10)
        assert c.read_all(r.fh, 0, len(data)) == data


def rotate_osds(mds: PandoMds, key: ClusterKey, want: str) -> None:
    for osd in mds.osds:
        osd.key = key
        osd.reload(want)


def test_a_key_rotation_needs_no_manager_restart(
        mds_factory: Callable[..., PandoMds], cluster_key: ClusterKey) -> None:
    mds = mds_factory(2, pseudo=DIR, pnfs=True, protocols=(3, 4), mirrors=2, inline_max=1)
    gateway_round_trip(mds, "before")
    old = write_cluster_key(cluster_key.path.with_name("old.key"), cluster_key.key_id,
                            cluster_key.secret)
    both = write_cluster_key(cluster_key.path, key_id=2, previous=old)
    rotate_osds(mds, both, "SIGHUP: cluster key 2 (previous 1) in use")
    assert handle_key_ids(mds, "old-layout") == {1}
    assert reload_key(mds) == (0, "cluster key 2 (previous 1) in use")
    assert "pando: reload: cluster key 2 (previous 1) in use" in mds.log_text()
    new = write_cluster_key(cluster_key.path, key_id=2, secret=both.secret)
    rotate_osds(mds, new, "SIGHUP: cluster key 2 in use")
    gateway_round_trip(mds, "after")
    assert handle_key_ids(mds, "new-layout") == {2}
    assert mds.alive()


def test_a_key_file_the_manager_cannot_take_changes_nothing(
        mds_factory: Callable[..., PandoMds], cluster_key: ClusterKey) -> None:
    mds = mds_factory(2, inline_max=1)
    write_cluster_key(cluster_key.path, key_id=1)       # key 1, another secret
    code, out = reload_key(mds)
    assert code == 1 and "gives the key in use another secret" in out, out
    assert out.endswith("keeping cluster key 1"), out
    cluster_key.path.write_text("id = 2\nsecret = nothex\n")
    code, out = reload_key(mds)
    assert code == 1 and "keeping cluster key 1" in out, out
    write_cluster_key(cluster_key.path, cluster_key.key_id, cluster_key.secret)
    gateway_round_trip(mds, "still")
