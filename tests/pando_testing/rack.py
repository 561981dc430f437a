"""A rack on one machine: every server and client in its own network
namespace, each with one NIC capped by tc, all joined by one switch.

The switch is a Linux bridge inside a hub namespace of its own (nothing is
added to the host's namespace).  A node is a `Pod` (network + mount
namespace with a private /run) with a veth pair: `eth0` inside the node,
its peer on the bridge.  A token-bucket filter on each end caps the link
at `nic_mbit` in each direction: on eth0 what the node sends, on the
bridge port what it receives, so a full-duplex NIC of that speed.  The
model and its caveats are in tests/bench/README.md ("The rack model").
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from .pod import Pod
from .vmnet import TapNet

SUBNET = "10.77"
BRIDGE = "br0"
# The hub's own address on the switch, for what a test serves its qemu
# guests (pnfs_tools.Rendezvous); nodes are numbered below 10.77.4.
HUB_ADDR = f"{SUBNET}.100.1"


def _tbf(dev: str, mbit: int) -> list[str]:
    # A burst of a few milliseconds at line rate, and never less than two
    # 64 KiB GSO super-packets (veth hands tbf whole GSO packets; a burst
    # smaller than one drops it every time).  A queue of a second: a NIC
    # pushes back on its own sockets rather than dropping, and the switch
    # is taken to be well buffered (with 50 ms, 16 readers of one OSD lost
    # packets there and at its port, and reads at 8 OSDs fell 10 %).
    burst = max(256 * 1024, mbit * 1_000_000 // 8 // 250)
    return ["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{mbit}mbit",
            "burst", str(burst), "latency", "1s"]


@dataclass
class RackNode:
    """One machine of the rack: its namespaces and its address on the switch."""

    name: str
    pod: Pod
    addr: str
    port: str   # its port on the bridge, in the hub namespace


@dataclass
class Rack:
    nic_mbit: int = 1000
    mtu: int = 9000
    hub: Pod = field(default_factory=lambda: Pod("rack-hub"))
    nodes: list[RackNode] = field(default_factory=list)

    def start(self) -> "Rack":
        self.hub.start()
        self.hub.run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        self.hub.run(["ip", "link", "set", BRIDGE, "mtu", str(self.mtu), "up"])
        return self

    def node(self, name: str) -> RackNode:
        """A new machine on the switch, addressed 10.77.x.y in a /16."""
        index = len(self.nodes) + 1
        addr = f"{SUBNET}.{index // 250}.{index % 250 + 1}"
        pod = Pod(name).start()
        port = f"p{index}"
        try:
            self.hub.run(["ip", "link", "add", port, "mtu", str(self.mtu), "type", "veth",
                          "peer", "name", "eth0", "mtu", str(self.mtu), "netns", str(pod.pid)])
            self.hub.run(["ip", "link", "set", port, "master", BRIDGE, "up"])
            self.hub.run(_tbf(port, self.nic_mbit))
            pod.run(["ip", "addr", "add", f"{addr}/16", "dev", "eth0"])
            pod.run(["ip", "link", "set", "eth0", "up"])
            pod.run(_tbf("eth0", self.nic_mbit))
        except subprocess.CalledProcessError as e:
            pod.stop()
            raise RuntimeError(f"rack: cannot wire {name}: {e.stderr}") from e
        node = RackNode(name, pod, addr, port)
        self.nodes.append(node)
        return node

    def guest_tap(self, n: int = 1) -> TapNet:
        """A tap device on the switch for the n-th qemu guest, which runs in
        the hub (qemu opens its tap by name there) at 10.77.100.<n + 1>;
        the hub answers at HUB_ADDR.  The guest's link is not capped: the
        tests that use it measure no bandwidth."""
        self.hub.run(["ip", "addr", "replace", f"{HUB_ADDR}/16", "dev", BRIDGE])
        return TapNet(self.hub, ifname=f"gtap{n}", host_addr=HUB_ADDR,
                      guest_addr=f"{SUBNET}.100.{n + 1}", prefix=16, bridge=BRIDGE).create()

    def link_bytes(self, node: RackNode) -> tuple[int, int]:
        """(bytes the node sent, bytes it received) on its NIC so far."""
        # /proc/net/dev, not /sys/class/net: /sys is the host's mount.
        for line in node.pod.run(["cat", "/proc/net/dev"]).stdout.splitlines():
            name, _, counters = line.partition(":")
            if name.strip() == "eth0":
                f = counters.split()
                return int(f[8]), int(f[0])
        raise RuntimeError(f"rack: {node.name} has no eth0")

    def stop(self) -> None:
        """Kills what is left in every node (as Pod.stop) and the hub; the
        veth pairs go with their namespaces."""
        for node in self.nodes:
            node.pod.stop()
        self.hub.stop()

    def __enter__(self) -> "Rack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
