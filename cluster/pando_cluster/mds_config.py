"""The metadata manager's files: ganesha.conf, the cluster description the
FSAL reads (format: ganesha-fsal/cluster/cluster_desc.h), and the private
dbus bus's policy."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .net import client_host, host_port
from .state import OsdRecord

EXPORT_PATH = "/pando"
MAX_MIRRORS = 2

GANESHA_CONF = """\
# written by pando-cluster; edits are replaced by the next `up`
NFS_CORE_PARAM {{
    NFS_Port = {nfs_port};
    MNT_Port = {mnt_port};
    NFS_Protocols = 3, 4;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
    Bind_Addr = {bind};
    Plugins_Dir = "{plugins_dir}";
}}
NFSV4 {{
    Minor_Versions = 1;
    # pNFS: clients get flexfiles layouts and move data to the OSDs directly.
    PNFS_MDS = true;
    RecoveryRoot = "{recovery}";
    Only_Numeric_Owners = true;
}}
NFS_KRB5 {{
    Active_krb5 = false;
}}
EXPORT {{
    Export_Id = 1;
    Path = "{export}";
    Pseudo = "{export}";
    Protocols = 3, 4;
    Transports = TCP;
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    FSAL {{
        Name = PANDO;
        Db_Path = "{db}";
        Cluster = "{cluster_desc}";
        Inline_Max = {inline_max};
        Mirrors = {mirrors};
        Stripe_Unit = {stripe_unit};
    }}
}}
"""

# dbus-daemon refuses a bus without a policy; this one lets every local
# user own names and call every method, as ganesha_mgr needs.
DBUS_CONF = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


@dataclass(frozen=True)
class MdsPaths:
    """Where the metadata manager's files live in the cluster directory."""
    cluster_dir: Path

    @property
    def dir(self) -> Path:
        return self.cluster_dir / "mds"

    @property
    def cluster_desc(self) -> Path:
        return self.cluster_dir / "cluster.conf"

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
class GaneshaConfig:
    paths: MdsPaths
    bind: str
    nfs_port: int
    mnt_port: int
    plugins_dir: Path
    mirrors: int
    inline_max: int = 65536
    stripe_unit: int = 1 << 20

    def render(self) -> str:
        return GANESHA_CONF.format(
            nfs_port=self.nfs_port, mnt_port=self.mnt_port, bind=self.bind,
            plugins_dir=self.plugins_dir, recovery=self.paths.dir / "recovery",
            export=EXPORT_PATH, db=self.paths.dir / "ns", cluster_desc=self.paths.cluster_desc,
            inline_max=self.inline_max, mirrors=self.mirrors, stripe_unit=self.stripe_unit)


def mirrors_for(osds: int) -> int:
    """Two mirrors (RAID-1 across two OSDs), one when there is only one OSD."""
    return min(MAX_MIRRORS, osds)


def _reachable(addr: str) -> str:
    """An OSD's listen address as the FSAL dials it (a wildcard bind
    becomes loopback)."""
    host, _, port = addr.rpartition(":")
    return host_port(client_host(host.strip("[]")), int(port))


def render_cluster_desc(key_file: Path, osds: Iterable[OsdRecord], partition: int = 1) -> str:
    lines = ["# written by pando-cluster; edits are replaced by the next `up`",
             f"key_file = {key_file}", f"partition = {partition}"]
    lines += [f"osd {o.osd_id} ctl={_reachable(o.ctl_addr)} nfs={_reachable(o.nfs_addr)}"
              for o in sorted(osds, key=lambda o: o.osd_id)]
    return "\n".join(lines) + "\n"


def render_dbus_conf(socket: Path) -> str:
    return DBUS_CONF.format(socket=socket)
