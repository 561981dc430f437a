"""Manager groups (Mds_Group) in tests: the FSAL lines of a member, a
standby beside an active in one pod, and waiting for a manager's log."""
from __future__ import annotations

import time
from pathlib import Path

from .etcd import EtcdCluster
from .mds import PandoMds

GROUP = "g1"


def group_fsal(etcd: EtcdCluster, name: str, group: str = GROUP) -> str:
    """FSAL lines that make a manager `name` a member of `group`."""
    return f'Etcd = "{etcd.endpoints}";\nMds_Group = "{group}";\nMds_Name = "{name}";'


def standby_of(active: PandoMds, etcd: EtcdCluster, workdir: Path, db: Path,
               name: str = "b") -> PandoMds:
    """A second manager of the group over the active's OSDs, on other
    ports, its store at db (a store_snapshot of the active's); it shares
    the pod's rpcbind and runs no statd of its own.  Not started."""
    b = PandoMds(active.pod, workdir, osds=active.osds, key=active.key, object_pool=0,
                 db_path=db, nfs_port=active.nfs_port + 10, mnt_port=active.mnt_port + 10,
                 extra_fsal=group_fsal(etcd, name), nsm=False)
    b.rpcbind = active.rpcbind
    return b


def wait_log(m: PandoMds, words: str, timeout: float) -> None:
    """Until words are in m's log; fails when m dies first."""
    deadline = time.monotonic() + timeout
    while words not in m.log_text():
        assert m.alive(), f"{m.workdir.name} died:\n{m.log_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no '{words}' in {m.log_path}"
        time.sleep(0.1)
