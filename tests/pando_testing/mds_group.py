"""Manager groups (Mds_Group) in tests: the FSAL lines of a member, a
standby beside an active in one pod, and waiting for a manager's log."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from .etcd import EtcdCluster
from .mds import PandoMds

GROUP = "g1"


def group_fsal(etcd: EtcdCluster, name: str) -> str:
    """FSAL lines that make a manager `name` on etcd (with mds_group=GROUP
    a member of the group)."""
    return f'Etcd = "{etcd.endpoints}";\nMds_Name = "{name}";'


def standby_of(active: PandoMds, etcd: EtcdCluster, workdir: Path, db: Path,
               name: str = "b") -> PandoMds:
    """A second manager of the group over the active's OSDs, on other
    ports, its store at db (a store_snapshot of the active's), serving
    what the active serves; it shares the pod's rpcbind and runs no statd
    of its own.  Not started."""
    b = PandoMds(active.pod, workdir, osds=active.osds, key=active.key, object_pool=0,
                 db_path=db, nfs_port=active.nfs_port + 10, mnt_port=active.mnt_port + 10,
                 extra_fsal=group_fsal(etcd, name), mds_group=active.mds_group,
                 protocols=active.protocols, pseudo=active.pseudo, graceless=active.graceless,
                 nsm=False)
    b.rpcbind = active.rpcbind
    return b


def standby_in_place(active: PandoMds, etcd: EtcdCluster, workdir: Path, db: Path,
                     active_name: str = "a", name: str = "b") -> PandoMds:
    """A second manager of the active's group (its FSAL lines
    group_fsal(etcd, active_name)), configured as the active is and on
    the same ports: the service address clients mount, which it takes
    over when it leads (a standby opens no port until then).  Its store at
    db (a store_snapshot of the active's); the pod's rpcbind, no statd of
    its own.  Not started."""
    lines = group_fsal(etcd, active_name)
    assert lines in active.extra_fsal, "the active is not a member made by group_fsal"
    b = dataclasses.replace(active, workdir=workdir, db_path=db, nsm=False,
                            extra_fsal=active.extra_fsal.replace(lines, group_fsal(etcd, name)))
    b.rpcbind = active.rpcbind
    return b


def wait_log(m: PandoMds, words: str, timeout: float, count: int = 1) -> None:
    """Until words are in m's log count times (a restart appends to it);
    fails when m dies first."""
    deadline = time.monotonic() + timeout
    while m.log_text().count(words) < count:
        assert m.alive(), f"{m.workdir.name} died:\n{m.log_text()[-3000:]}"
        assert time.monotonic() < deadline, f"'{words}' not {count} times in {m.log_path}"
        time.sleep(0.1)


def start_standby(active: PandoMds, etcd: EtcdCluster, tmp_path: Path,
                  in_place: bool = False) -> PandoMds:
    """The standby "b" of the active's group (standby_in_place, or
    standby_of), from a store_snapshot of the active's store, started and
    following the journal; stopped again if it does not."""
    active.store_snapshot(tmp_path / "b-store")
    make = standby_in_place if in_place else standby_of
    b = make(active, etcd, tmp_path / "mdsb", tmp_path / "b-store")
    b.start(wait=False)
    try:
        wait_log(b, "b follows the journal until it leads", 30)
    except BaseException:
        b.stop()
        raise
    return b
