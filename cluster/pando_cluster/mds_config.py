"""The metadata manager's files: ganesha.conf (rendered by ganesha_conf.py),
cluster.conf, which the FSAL reads (format:
ganesha-fsal/osdio/cluster_conf.h), and the private dbus bus's policy."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .etcd_auth import EtcdAccess
from .ganesha_conf import ExportClient, GaneshaSettings, PandoFsal, render
from .net import client_host, host_port
from .state import OsdRecord

MAX_MIRRORS = 2
# `up`'s export keeps root for this host's own clients, whose root owns
# the cluster's files anyway; every other host's root is nobody.
LOCAL_CLIENTS = ("127.0.0.1", "::1")
WRITTEN_BY = "# written by pando-cluster; edits are replaced by the next `up`"

# dbus-daemon refuses a bus without a policy.  Whoever reaches this bus
# can recall layouts, remove the export or end grace: only root may
# connect; it may own names and call every method, as ganesha_mgr needs.
DBUS_CONF = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class GaneshaFiles:
    """Where a Ganesha's own files are, all in one directory (`dir`):
    the metadata manager's of `pando-cluster up`, a test server's workdir."""

    @property
    def dir(self) -> Path:
        raise NotImplementedError

    @property
    def ganesha_conf(self) -> Path:
        return self.dir / "ganesha.conf"

    @property
    def dbus_socket(self) -> Path:
        return self.dir / "dbus.sock"

    @property
    def dbus_address(self) -> str:
        return f"unix:path={self.dbus_socket}"

    def file(self, name: str) -> Path:
        return self.dir / name


@dataclass(frozen=True)
class MdsPaths(GaneshaFiles):
    """Where the metadata manager's files live in the cluster directory."""
    cluster_dir: Path

    @property
    def dir(self) -> Path:
        return self.cluster_dir / "mds"

    @property
    def cluster_conf(self) -> Path:
        return self.cluster_dir / "cluster.conf"


def pando_fsal(db_path: Path, cluster_conf: Path, mirrors: int,
               etcd: EtcdAccess | None = None, prefix: str = "/pando/", name: str = "",
               **more: Any) -> PandoFsal:
    """The FSAL block; with etcd, the manager named name keeps its
    presence there and follows the map (as etcd's user mds.<name>)."""
    if etcd is None:
        return PandoFsal(db_path=db_path, cluster_conf=cluster_conf, mirrors=mirrors, **more)
    return PandoFsal(db_path=db_path, cluster_conf=cluster_conf, mirrors=mirrors,
                     etcd=etcd.endpoints, etcd_prefix=prefix, mds_name=name,
                     etcd_ca=etcd.ca_file, etcd_user=etcd.user,
                     etcd_password_file=etcd.password_file, **more)


def render_ganesha_conf(paths: MdsPaths, bind: str, nfs_port: int, mnt_port: int,
                        plugins_dir: Path, mirrors: int, etcd: EtcdAccess | None = None,
                        nsm_notify_dir: Path | None = None, mds_name: str = "") -> str:
    """ganesha.conf with production's settings (ganesha_conf.py)."""
    settings = GaneshaSettings(
        plugins_dir=plugins_dir, recovery_root=paths.dir / "recovery",
        fsal=pando_fsal(paths.dir / "ns", paths.cluster_conf, mirrors, etcd, name=mds_name),
        nfs_port=nfs_port, mnt_port=mnt_port, bind=bind, nsm_notify_dir=nsm_notify_dir,
        clients=(ExportClient(LOCAL_CLIENTS),))
    return f"{WRITTEN_BY}\n{render(settings)}"


def mirrors_for(osds: int) -> int:
    """Two mirrors (RAID-1 across two OSDs), one when there is only one OSD."""
    return min(MAX_MIRRORS, osds)


def _reachable(addr: str) -> str:
    """An OSD's listen address as the FSAL dials it (a wildcard bind
    becomes loopback)."""
    host, _, port = addr.rpartition(":")
    return host_port(client_host(host.strip("[]")), int(port))


@dataclass(frozen=True)
class ConfOsd:
    """One `osd` line of cluster.conf: the addresses the FSAL
    dials, the data server pNFS clients are told where that differs, and
    a placement weight in bytes where statfs is not to be taken, and the
    pool it serves ("": none)."""
    osd_id: int
    ctl: str
    nfs: str
    advertise: str = ""
    capacity: int = 0
    pool: str = ""

    def line(self) -> str:
        adv = f" advertise={self.advertise}" if self.advertise else ""
        cap = f" capacity={self.capacity}" if self.capacity else ""
        pool = f" pool={self.pool}" if self.pool else ""
        return f"osd {self.osd_id} ctl={self.ctl} nfs={self.nfs}{adv}{cap}{pool}"


def render_conf(key_file: Path, osds: Iterable[ConfOsd], partition: int = 1,
                header: str = WRITTEN_BY) -> str:
    """cluster.conf (format: ganesha-fsal/osdio/cluster_conf.h),
    the OSDs in the order given; no header line when header is empty."""
    lines = [*([header] if header else []), f"key_file = {key_file}", f"partition = {partition}"]
    return "\n".join(lines + [o.line() for o in osds]) + "\n"


def render_cluster_conf(key_file: Path, osds: Iterable[OsdRecord], partition: int = 1,
                        header: str = WRITTEN_BY, pools: Mapping[int, str] | None = None) -> str:
    """The description of the OSDs `up` started, by id, as the FSAL dials
    them, each with its pool from `pools` (by id; none when absent)."""
    return render_conf(key_file, [ConfOsd(o.osd_id, _reachable(o.ctl_addr), _reachable(o.nfs_addr),
                                          pool=(pools or {}).get(o.osd_id, ""))
                                  for o in sorted(osds, key=lambda o: o.osd_id)], partition, header)


def render_dbus_conf(socket: Path) -> str:
    return DBUS_CONF.format(socket=socket)
