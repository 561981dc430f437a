"""The cluster of tests/bench/soak, every daemon on a machine of its own
in the rack model (rack.py): three etcd members, two pando-mgr, the OSDs
(each with a small disk of its own: a tmpfs mounted in its machine's
mount namespace, so it can be filled to ENOSPC), the metadata manager
(ganesha.nfsd + libfsalpando.so following the map in etcd, production's
settings: pNFS, NFSv3 with NLM, the 45 s grace period), and the client
machines the load runs on.  An `admin` machine, whose link is never cut,
is where the soak talks to etcd and the mgrs from; the manager's dbus,
and the reads that check every copy at the end, run on the manager's own
machine, as an admin logged in there would.

Only the switch side of a link is touched to cut it: `ip link set pN
down` on the machine's bridge port (in the hub namespace), a cable
pulled at the switch; the machine's own eth0 loses its carrier and its
sockets see nothing until the port comes up again."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .daemons import OsdProcess
from .etcd import CLIENT_PORT_BASE, PEER_PORT_BASE, EtcdClient, EtcdError, EtcdMember
from .keys import ClusterKey, write_cluster_key
from .layout_policy import layout_set
from .mds import PandoMds
from .mgr import MgrApi, MgrProcess
from .nfs3 import NFS3_OK
from .pnfs_tools import PnfsCluster
from .rack import Rack, RackNode

PREFIX = "/pando/"
MDS_NAME = "mds-1"
LEASE = 5                 # the mgrs' lease, as pando-osd's default presence TTL
ETCD_MEMBERS = 3
MGRS = 2
CLIENTS = ("load-mirror", "load-shared", "load-rs", "verify", "kclient")
EXPORT = "/pando"


def wait_for(what: str, cond: Callable[[], Any], timeout: float, step: float = 0.2) -> Any:
    """cond()'s first truthy value; an OSError, EtcdError or AssertionError
    counts as not yet.  TimeoutError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = cond()
            if v:
                return v
        except (OSError, EtcdError, AssertionError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(step)


class Daemon(Protocol):
    proc: subprocess.Popen[bytes] | None

    def alive(self) -> bool: ...

    def start(self) -> object: ...


@dataclass
class OsdMachine:
    node: RackNode
    osd: OsdProcess
    disk_mib: int

    @property
    def disk(self) -> Path:
        return self.osd.data_path

    def mount_disk(self) -> None:
        """A tmpfs of disk_mib at the data directory, in this machine's
        mount namespace only."""
        self.disk.mkdir(parents=True, exist_ok=True)
        self.node.pod.run(["mount", "-t", "tmpfs", "-o", f"size={self.disk_mib}m",
                           f"pando-osd{self.osd.osd_id}", self.disk])

    def free_bytes(self) -> int:
        out = self.node.pod.run(["df", "-B1", "--output=avail", self.disk]).stdout
        return int(out.split()[-1])

    def fill(self) -> int:
        """Writes a file until the disk is full (ENOSPC); what it took."""
        free = self.free_bytes()
        cp = self.node.pod.run(["dd", "if=/dev/zero", f"of={self.disk / 'soak.filler'}", "bs=1M"],
                               check=False)
        assert "No space left" in cp.stderr, f"filling {self.disk}: {cp.stderr}"
        return free

    def unfill(self) -> None:
        self.node.pod.run(["rm", "-f", self.disk / "soak.filler"])


@dataclass
class SoakCluster:
    workdir: Path
    osd_count: int = 8
    disk_mib: int = 1024
    nic_mbit: int = 1000
    rack: Rack = field(init=False)
    admin: RackNode = field(init=False)
    etcd: list[EtcdMember] = field(default_factory=list)
    mgrs: list[MgrProcess] = field(default_factory=list)
    osds: list[OsdMachine] = field(default_factory=list)
    clients: dict[str, RackNode] = field(default_factory=dict)
    mds: PandoMds = field(init=False)
    key: ClusterKey = field(init=False)

    # -- bring-up
    def start(self) -> "SoakCluster":
        self.rack = Rack(nic_mbit=self.nic_mbit).start()
        self.admin = self.rack.node("admin")
        self.key = write_cluster_key(self.workdir / "cluster.key")
        self._start_etcd()
        self._start_osds()
        self.mds = self._mds()
        self.mds.write_config()        # the mgrs seed the map from its cluster.conf
        self._start_mgrs()
        wait_for("every OSD up and in the map", self._all_in, 90)
        self.mds.start()
        wait_for("the manager applying the map", self.mds_caught_up, 60)
        self.clients = {name: self.rack.node(name) for name in CLIENTS}
        return self

    def _start_etcd(self) -> None:
        nodes = [self.rack.node(f"etcd{i}") for i in range(1, ETCD_MEMBERS + 1)]
        self.etcd = [EtcdMember(n.pod, self.workdir / "etcd", f"etcd{i}", n.addr,
                                CLIENT_PORT_BASE, PEER_PORT_BASE)
                     for i, n in enumerate(nodes, 1)]
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.etcd)
        for m in self.etcd:
            m.initial_cluster = initial
            m.start(wait=False)
        for m in self.etcd:
            m.pod.wait_port(m.host, m.client_port, alive=m.alive)
        self.etcd_client().wait_healthy()

    @property
    def endpoints(self) -> str:
        return ",".join(m.client_url for m in self.etcd)

    def _start_osds(self) -> None:
        for i in range(1, self.osd_count + 1):
            node = self.rack.node(f"osd{i}")
            osd = OsdProcess(node.pod, self.workdir / "osds", self.key, osd_id=i, host=node.addr,
                             extra_args=["--etcd", self.endpoints, "--log-level", "info"])
            m = OsdMachine(node, osd, self.disk_mib)
            m.mount_disk()
            osd.format()
            osd.start()
            self.osds.append(m)

    def _mds(self) -> PandoMds:
        node = self.rack.node("mds")
        etcd = "\n".join([f'Etcd = "{self.endpoints}";', f'Etcd_Prefix = "{PREFIX}";',
                          f'Mds_Name = "{MDS_NAME}";'])
        return PandoMds(node.pod, self.workdir / "mds", osds=[m.osd for m in self.osds],
                        key=self.key, host=node.addr, protocols=None, pnfs=True, mirrors=2,
                        pseudo=EXPORT, graceless=False, extra_fsal=etcd)

    def _start_mgrs(self) -> None:
        for i in range(MGRS):
            node = self.rack.node(f"mgr{i + 1}")
            mgr = MgrProcess(node.pod, self.workdir / "mgr", self.endpoints, name=f"mgr-{i + 1}",
                             index=i, seed=self.mds.cluster_conf, host=node.addr, lease=LEASE,
                             extra_args=["--log-level", "info"])
            mgr.start()
            self.mgrs.append(mgr)

    # -- looking at it
    def etcd_client(self) -> EtcdClient:
        return EtcdClient(self.admin.pod, [m.client_url for m in self.etcd])

    def cluster(self) -> PnfsCluster:
        """The manager's dbus and NFSv3 from the manager's own machine."""
        return PnfsCluster(self.mds.pod, self.mds, [m.osd for m in self.osds])

    def the_map(self) -> dict[str, Any]:
        m = self.etcd_client().get_json(PREFIX + "map")
        return m if isinstance(m, dict) else {}

    def _all_in(self) -> bool:
        osds = self.the_map().get("osds", [])
        return len(osds) == self.osd_count and all(o["up"] and o["in"] for o in osds)

    def mds_presence(self) -> dict[str, Any] | None:
        p = self.etcd_client().get_json(PREFIX + f"mds/{MDS_NAME}")
        return p if isinstance(p, dict) else None

    def mds_caught_up(self) -> bool:
        p = self.mds_presence()
        return p is not None and p.get("epoch") == self.the_map().get("epoch")

    def leader(self) -> MgrProcess | None:
        v = self.etcd_client().get_json(PREFIX + "mgr/leader")
        name = v.get("name") if isinstance(v, dict) else None
        return next((m for m in self.mgrs if m.name == name), None)

    def mgr_api(self) -> MgrApi:
        """A running mgr's API (a follower sends writes on to the leader)."""
        mgr = next(m for m in self.mgrs if m.alive())
        return MgrApi(self.admin.pod, mgr.url, token=mgr.token)

    def unhealthy(self) -> str:
        """Why the cluster cannot take one more OSD fault now ("" when it
        can): an OSD down or out, a manager behind the map or gone, files
        with a stale component, rebuild work queued."""
        c = self.etcd_client()
        m = self.the_map()
        bad = [f"osd.{o['id']} {'down' if not o['up'] else 'out'}"
               for o in m.get("osds", []) if not (o["up"] and o["in"])]
        if bad:
            return ", ".join(bad)
        p = self.mds_presence()
        if p is None:
            return "the manager is not present"
        if p.get("epoch") != m.get("epoch"):
            return f"the manager applied epoch {p.get('epoch')}, the map is {m.get('epoch')}"
        if p.get("degraded"):
            return f"{p['degraded']} files degraded"
        tasks = len(c.get_prefix(PREFIX + "rebuild/tasks/"))
        jobs = len(c.get_prefix(PREFIX + "rebuild/jobs/"))
        if tasks or jobs:
            return f"rebuild: {jobs} jobs, {tasks} tasks"
        return ""

    def daemons(self) -> dict[str, Daemon]:
        """Every daemon of the cluster by the name faults give it."""
        out: dict[str, Daemon] = {"ganesha.nfsd": self.mds}
        out |= {f"osd.{m.osd.osd_id}": m.osd for m in self.osds}
        out |= {m.name: m for m in self.mgrs}
        out |= {m.name: m for m in self.etcd}
        return out

    def osd_machine(self, osd_id: int) -> OsdMachine:
        return next(m for m in self.osds if m.osd.osd_id == osd_id)

    # -- the namespace
    def make_dirs(self, rs: dict[str, Any]) -> None:
        """/mirror and /shared (the export's two mirrors) and /rs with the
        storage policy `rs`."""
        with self.cluster().nfs3() as c:
            root = self.mds.root_handle()
            for name in ("mirror", "shared", "rs"):
                res = c.mkdir(root, name)
                assert res.status == NFS3_OK, f"MKDIR {name}: {res.status}"
        ok, msg = layout_set(self.mds, "/rs", rs)
        assert ok, f"layout_set /rs: {msg}"

    # -- links
    def cut(self, node: RackNode) -> None:
        self.rack.hub.run(["ip", "link", "set", node.port, "down"])

    def mend(self, node: RackNode) -> None:
        self.rack.hub.run(["ip", "link", "set", node.port, "up"])

    # -- the end
    def stop(self) -> dict[str, int | None]:
        """Stops everything by pid (SIGTERM); the exit statuses that were
        not a clean stop.  The rack goes last, with what is left in it."""
        codes: dict[str, int | None] = {}
        if hasattr(self, "mds"):
            codes["ganesha"] = self.mds.stop()
        for mgr in self.mgrs:
            if mgr.alive():
                codes[mgr.name] = mgr.stop()
        for m in self.osds:
            if m.osd.alive():
                m.osd.resume()      # a stop fault may have it frozen
                codes[f"osd.{m.osd.osd_id}"] = m.osd.stop()
        for e in self.etcd:
            if e.alive():
                codes[e.name] = e.stop()
        if hasattr(self, "rack"):
            self.rack.stop()
        return {k: v for k, v in codes.items() if v not in (0, None)}

    def remove_disks(self) -> None:
        """The OSDs' disks went with their machines' mount namespaces; their
        empty mount points stay in the work directory."""
        for m in self.osds:
            shutil.rmtree(m.disk, ignore_errors=True)
