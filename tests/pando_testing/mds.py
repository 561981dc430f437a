"""The Pando metadata manager: stock ganesha.nfsd 4.3 loading
libfsalpando.so from the build tree, over a set of pando-osd targets in
the same Pod.  `write_cluster_conf` writes the cluster.conf
the FSAL and pando-fsck read, with the renderer `pando-cluster up` uses
(pando_cluster.mds_config.render_conf).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from pando_cluster.ganesha_conf import EXPORT_PATH, PandoFsal
from pando_cluster.mds_config import ConfOsd, render_conf
from pando_cluster.paths import built, fsal_dir

from .daemons import OsdProcess
from .ganesha import GaneshaServer
from .keys import ClusterKey


def fsck_binary() -> Path:
    return built("ganesha-fsal", "tools", "pando-fsck")


def write_cluster_conf(path: Path, key: ClusterKey, osds: Sequence[OsdProcess],
                       advertise_host: str | None = None, partition: int = 1,
                       pools: Mapping[int, str] | None = None) -> Path:
    """One `osd` line per target; `advertise_host` replaces the data-server
    host pNFS clients are told (10.0.2.2 for a qemu guest); `pools` names
    the pool of an OSD by id."""
    descs = [ConfOsd(o.osd_id, o.ctl_addr, f"{o.host}:{o.nfs_port}",
                     f"{advertise_host}:{o.nfs_port}" if advertise_host else "",
                     pool=(pools or {}).get(o.osd_id, "")) for o in osds]
    path.write_text(render_conf(key.path, descs, partition, header=""))
    return path


@dataclass
class PandoMds(GaneshaServer):
    """Ganesha with FSAL PANDO exporting the namespace store at `db_path`
    (formatted by the FSAL on first start) over the targets in `osds`."""

    osds: Sequence[OsdProcess] = ()
    key: ClusterKey | None = None
    inline_max: int = 65536
    mirrors: int = 2
    stripe_unit: int = 1 << 20
    advertise_host: str | None = None
    db_path: Path | None = None
    pseudo: str = EXPORT_PATH
    protocols: tuple[int, ...] | None = None
    dbus: bool = True
    extra_fsal: str = ""                  # more FSAL option lines
    mds_group: str = ""                   # the FSAL's Mds_Group
    osd_pools: Mapping[int, str] = field(default_factory=dict)  # cluster.conf's pool=, by OSD id
    partition: int = 1                    # the OSD partition of its objects (cluster.conf)
    # pNFS: flexfiles layouts naming the OSDs at `advertise_host` (or
    # their listen address); off by default (the FSAL's Pnfs = false) so
    # plain gateway tests see no layouts.
    pnfs: bool = False
    # Storage maps made ahead for new files (the FSAL's Object_Pool; None:
    # its default); its objects sit on the OSDs, named by removal intents,
    # until taken.
    object_pool: int | None = None
    cluster_conf: Path = field(init=False)

    def __post_init__(self) -> None:
        if self.export_dir is None:
            self.export_dir = Path(EXPORT_PATH)
        super().__post_init__()
        if self.db_path is None:
            self.db_path = self.workdir / "ns"
        self.plugins_dir = str(fsal_dir())
        self.cluster_conf = self.workdir / "cluster.conf"

    def fsal(self) -> PandoFsal:
        assert self.db_path is not None
        pool = () if self.object_pool is None else (f"Object_Pool = {self.object_pool};",)
        return PandoFsal(db_path=self.db_path, cluster_conf=self.cluster_conf,
                         mirrors=self.mirrors, inline_max=self.inline_max,
                         stripe_unit=self.stripe_unit, mds_group=self.mds_group,
                         options=(*pool, *self.extra_fsal.splitlines()))

    def pnfs_mds(self) -> bool:
        return self.pnfs

    def start(self, wait: bool = True) -> "PandoMds":
        super().start(wait)
        return self

    def wait_serving(self, timeout: float) -> None:
        """Also until the FSAL's dbus interface answers (_wait_dbus)."""
        super().wait_serving(timeout)
        if self.dbus:
            self._wait_dbus()

    def _notify(self) -> None:
        """A group's active runs sm-notify itself once it serves (the FSAL's
        nsm_hosts.c), with the hosts of the group's earlier actives."""
        if not self.mds_group:
            super()._notify()

    def store_snapshot(self, path: Path) -> str:
        """A copy of the store in path (store_snapshot over dbus): what a new
        standby of the manager group starts from.  Its words."""
        argv = ["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.store_snapshot",
                f"string:{path}"]
        cp = self.pod.run(argv, check=True, env={**os.environ, **self.dbus_env()}, timeout=60)
        assert "boolean true" in cp.stdout, cp.stdout
        return cp.stdout

    def _wait_dbus(self) -> None:
        """The FSAL puts its dbus interface up from a thread once Ganesha's
        init is done, a moment after the export answers: a test that asked
        at once got UnknownMethod (map_status)."""
        deadline = time.monotonic() + self.start_timeout
        argv = ["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.layout_status"]
        while True:
            cp = self.pod.run(argv, check=False, env={**os.environ, **self.dbus_env()},
                              timeout=30)
            if cp.returncode == 0:
                return
            if not self.alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the pando dbus interface did not come up: {cp.stderr}")
            time.sleep(0.05)

    def write_config(self) -> None:
        assert self.key is not None, "PandoMds needs the cluster key"
        write_cluster_conf(self.cluster_conf, self.key, self.osds, self.advertise_host,
                           partition=self.partition, pools=self.osd_pools)
        super().write_config()

    def fsck(self, *args: str, check: bool = False) -> tuple[int, str]:
        """pando-fsck on this manager's store and OSDs (Ganesha must be
        stopped: the store is single-writer).  (exit status, output)."""
        cp = self.pod.run([fsck_binary(), "--db", str(self.db_path),
                           "--cluster", str(self.cluster_conf), *args], check=check)
        return cp.returncode, cp.stdout + cp.stderr
