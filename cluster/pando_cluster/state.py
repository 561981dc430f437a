"""The cluster directory's state file: what `up` started, for `status`/`down`."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .net import host_port

STATE_FILE = "cluster.json"


@dataclass
class OsdRecord:
    osd_id: int
    nfs_addr: str
    ctl_addr: str
    data_dir: str
    conf: str
    log: str
    pid: int | None = None


@dataclass
class DaemonRecord:
    """A helper daemon `up` started: dbus-daemon (address: its bus), rpcbind,
    rpc.statd (address: its state directory), sm-notify, etcd or pando-mgr.  Only daemons
    pando-cluster started are recorded, so only those are stopped."""
    pid: int | None
    log: str
    address: str = ""


@dataclass
class MdsRecord:
    """The metadata manager: ganesha.nfsd loading libfsalpando.so."""
    host: str               # the address clients mount from
    nfs_port: int
    mnt_port: int
    conf: str
    log: str
    osd_ids: list[int]      # the OSDs its cluster.conf names
    pid: int | None = None

    @property
    def nfs_addr(self) -> str:
        return host_port(self.host, self.nfs_port)


@dataclass
class ClusterState:
    dir: Path
    key_file: str = ""
    osds: dict[int, OsdRecord] = field(default_factory=dict)
    mds: MdsRecord | None = None
    dbus: DaemonRecord | None = None
    rpcbind: DaemonRecord | None = None
    statd: DaemonRecord | None = None
    sm_notify: DaemonRecord | None = None
    etcd: DaemonRecord | None = None    # address: its client URL
    mgr: DaemonRecord | None = None     # address: its HTTP API's URL

    @property
    def path(self) -> Path:
        return self.dir / STATE_FILE

    @classmethod
    def load(cls, cluster_dir: Path) -> ClusterState:
        st = cls(cluster_dir)
        if st.path.exists():
            raw: dict[str, Any] = json.loads(st.path.read_text())
            st.key_file = raw.get("key_file", "")
            st.osds = {int(o["osd_id"]): OsdRecord(**o) for o in raw.get("osds", [])}
            st.mds = MdsRecord(**raw["mds"]) if raw.get("mds") else None
            for name in st.daemons():
                setattr(st, name, DaemonRecord(**raw[name]) if raw.get(name) else None)
        return st

    def daemons(self) -> dict[str, DaemonRecord | None]:
        return {"dbus": self.dbus, "rpcbind": self.rpcbind, "statd": self.statd,
                "sm_notify": self.sm_notify, "etcd": self.etcd, "mgr": self.mgr}

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        raw = {"key_file": self.key_file,
               "osds": [asdict(o) for _, o in sorted(self.osds.items())],
               "mds": asdict(self.mds) if self.mds else None,
               **{name: asdict(d) if d else None for name, d in self.daemons().items()}}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(raw, indent=2) + "\n")
        os.replace(tmp, self.path)
