"""pando-osd configuration files (format: osd-target/README.md, Configuration)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .net import host_port

NFS_PORT_OFFSET = 0     # NFS data server: base + osd id
CTL_PORT_OFFSET = 100   # control protocol: base + 100 + osd id
MAX_OSDS = 99           # keeps the two port ranges apart


@dataclass(frozen=True)
class OsdConfig:
    osd_id: int
    data_dir: Path
    key_file: Path
    bind: str
    base_port: int
    threads: int = 8
    log_level: str = "info"
    # etcd presence (mgr/README.md, "OSD presence"); "" : none, a static cluster
    etcd: str = ""              # client URLs, comma-separated
    etcd_prefix: str = "/pando/"
    advertise: str = ""         # the NFS address clients dial, when not nfs_listen
    domain: str = ""            # failure domain (the host, on several hosts)
    pool: str = ""              # the pool it serves ("": none)
    etcd_ttl: int = 0           # 0: pando-osd's default (5 s)
    etcd_interval: int = 0      # 0: pando-osd's default (2 s)
    # a secured etcd (cluster/README.md, "etcd's TLS and users")
    etcd_ca: str = ""
    etcd_user: str = ""
    etcd_password_file: str = ""

    @property
    def nfs_listen(self) -> str:
        return host_port(self.bind, self.base_port + NFS_PORT_OFFSET + self.osd_id)

    @property
    def ctl_listen(self) -> str:
        return host_port(self.bind, self.base_port + CTL_PORT_OFFSET + self.osd_id)

    def render(self, header: str = "# written by pando-cluster; edits are replaced by "
                                   "the next `up`") -> str:
        return (f"{header}\n"
                f"osd_id     = {self.osd_id}\n"
                f"data_dir   = {self.data_dir}\n"
                f"key_file   = {self.key_file}\n"
                f"nfs_listen = {self.nfs_listen}\n"
                f"ctl_listen = {self.ctl_listen}\n"
                f"threads    = {self.threads}\n"
                f"log_level  = {self.log_level}\n" + self._etcd_lines())

    def _etcd_lines(self) -> str:
        if not self.etcd:
            return ""
        lines = [f"etcd        = {self.etcd}", f"etcd_prefix = {self.etcd_prefix}"]
        if self.advertise:
            lines.append(f"advertise   = {self.advertise}")
        if self.domain:
            lines.append(f"domain      = {self.domain}")
        if self.pool:
            lines.append(f"pool        = {self.pool}")
        if self.etcd_ttl:
            lines.append(f"etcd_ttl    = {self.etcd_ttl}")
        if self.etcd_interval:
            lines.append(f"etcd_interval = {self.etcd_interval}")
        for key in ("etcd_ca", "etcd_user", "etcd_password_file"):
            if getattr(self, key):
                lines.append(f"{key} = {getattr(self, key)}")
        return "".join(f"{x}\n" for x in lines)

    def write(self, path: Path) -> None:
        path.write_text(self.render())
