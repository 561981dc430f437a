"""A manager group in the rack model (rack.py): an etcd member, four OSDs,
the active "a" and the standby "b" each on a machine of its own, and
whatever client machines a test names.  The active holds the group's
service address (Service_Address_Command: pando-service-address), which
clients mount and which moves to b when b leads.

    with rack_group(tmp_path, clients=("client",)) as g:
        g.cut("mds-a")      # the active's host off the switch
        ...
    # every daemon still running exited 0 on SIGTERM
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .daemons import OsdProcess
from .etcd import CLIENT_PORT_BASE, PEER_PORT_BASE, EtcdMember
from .keys import write_cluster_key
from .mds import PandoMds
from .mds_group import GROUP, wait_log
from .rack import Rack, RackNode

SERVICE = "10.77.200.1"
OSDS = 4


def member_fsal(etcd: EtcdMember, name: str) -> str:
    """The FSAL lines of group member `name`, which takes and releases
    SERVICE on its machine's eth0 as it leads and stops leading, and
    tells NFSv3 hosts to reclaim from there (what Bind_Addr does in
    production, where Ganesha listens on the service address alone)."""
    command = (f"{sys.executable} -m pando_cluster.service_address"
               f" --address {SERVICE}/16 --dev eth0")
    return "\n".join([f'Etcd = "{etcd.client_url}";', f'Mds_Name = "{name}";',
                      f'Service_Address_Command = "{command}";', f'Nsm_Source = "{SERVICE}";'])


@dataclass
class RackGroup:
    rack: Rack
    etcd: EtcdMember
    osds: list[OsdProcess]
    a: PandoMds
    b: PandoMds
    nodes: dict[str, RackNode] = field(default_factory=dict)

    def cut(self, name: str) -> None:
        """The machine's cable pulled: its port on the switch goes down."""
        self.rack.hub.run(["ip", "link", "set", self.nodes[name].port, "down"])

    def mend(self, name: str) -> None:
        self.rack.hub.run(["ip", "link", "set", self.nodes[name].port, "up"])


@contextmanager
def rack_group(tmp_path: Path, clients: tuple[str, ...] = ("client",),
               **mds: object) -> Iterator[RackGroup]:
    """Active "a" (founding the group, holding SERVICE), standby "b"
    following its journal from a snapshot of its store; `mds`: more
    PandoMds fields, the same for both.  On the way out every daemon
    still alive is stopped and must exit 0."""
    rack = Rack().start()
    stopped: dict[str, int | None] = {}
    started: list[OsdProcess | EtcdMember | PandoMds] = []
    try:
        names = ("etcd", *(f"osd{i}" for i in range(1, OSDS + 1)), "mds-a", "mds-b", *clients)
        nodes = {n: rack.node(n) for n in names}
        etcd = EtcdMember(nodes["etcd"].pod, tmp_path / "etcd", "etcd1", nodes["etcd"].addr,
                          CLIENT_PORT_BASE, PEER_PORT_BASE)
        started.append(etcd.start())
        key = write_cluster_key(tmp_path / "cluster.key")
        osds = []
        for i in range(1, OSDS + 1):
            o = OsdProcess(nodes[f"osd{i}"].pod, tmp_path / "osds", key, osd_id=i,
                           host=nodes[f"osd{i}"].addr)
            o.format()
            started.append(o.start())
            osds.append(o)
        options: dict[str, object] = {"object_pool": 0, "protocols": (3,), "nsm": False, **mds}
        a = PandoMds(nodes["mds-a"].pod, tmp_path / "mdsa", osds=osds, key=key, host=SERVICE,
                     mds_group=GROUP, extra_fsal=member_fsal(etcd, "a"),
                     **options)  # type: ignore[arg-type]
        started.append(a.start())
        wait_log(a, "a is the active, term", 10)
        a.store_snapshot(tmp_path / "b-store")
        b = dataclasses.replace(a, pod=nodes["mds-b"].pod, workdir=tmp_path / "mdsb",
                                db_path=tmp_path / "b-store", extra_fsal=member_fsal(etcd, "b"))
        started.append(b.start(wait=False))
        wait_log(b, "b follows the journal until it leads", 30)
        yield RackGroup(rack, etcd, osds, a, b, nodes)
    finally:
        for d in reversed(started):
            if d.alive():
                stopped[str(getattr(d, "workdir", d))] = d.stop()
        rack.stop()
    assert all(code == 0 for code in stopped.values()), stopped
