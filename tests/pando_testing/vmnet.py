"""A faster network for kernel-client VMs: a tap device inside the Pod.

qemu's user networking (slirp, `-netdev user`) copies every packet through
a user-space TCP/IP stack in qemu's main loop; a guest gets ~50-200 MB/s
through it, which caps throughput measurements.  A tap device instead
hands Ethernet frames to the pod's own kernel stack (with virtio-net
offloads: TSO/GSO segments of up to 64 KiB travel as one frame), so the
servers see an ordinary TCP peer on a real interface.

    tap = TapNet(pod)          # ip tuntap add ... inside the pod's netns
    tap.create()               # pod side: 10.0.3.1/24 on pandotap0, up
    vm.netdev = tap.netdev()   # qemu: -netdev tap,id=n0,ifname=pandotap0,...
    vm.params.update(tap.guest_params())   # PANDO_NET_ADDR / PANDO_NET_GW
    ... the guest script runs GUEST_NET_SH (re-addresses eth0) ...
    tap.remove()

Addresses: the pod side is `host_addr` (default 10.0.3.1), the guest
`guest_addr` (10.0.3.2), both /24.  Servers the guest reaches must listen
there (or on every address: Ganesha without Bind_Addr does), and the pNFS
MDS must advertise `host_addr` for its data servers; with user networking
the same guest reaches the pod's loopback as 10.0.2.2 instead.

Guest side: tests/e2e/guest/lib.sh's net_up always configures the slirp
addresses (10.0.2.15/24, gateway 10.0.2.2).  The guest parameters
PANDO_NET_ADDR and PANDO_NET_GW (kernel command-line words, which
lib.sh's parse_params turns into shell variables) carry the tap
addresses, and GUEST_NET_SH, run first thing by a scenario script,
re-addresses eth0 from them and checks the pod side answers.

On a bridge (`bridge`: rack.Rack.guest_tap) the device is a port of
that bridge instead, and the guest a machine on its network: `host_addr`
is then the bridge's own address, which the caller gives it.

One tap device per pod and per VM at a time (qemu opens it by name; the
device is persistent and outlives qemu, so a VM booted again reuses it).
Needs root (CAP_NET_ADMIN in the pod) and /dev/net/tun.
"""
from __future__ import annotations

import ipaddress
import os
import subprocess
from dataclasses import dataclass

from .pod import Pod

# The default tap network: both ends' addresses are in it.
TAP_NET = "10.0.3.0/24"

# The shell a guest scenario runs before its first mount (busybox ash; emit,
# say and fatal come from tests/e2e/guest/lib.sh).  A no-op without
# PANDO_NET_ADDR, so one script serves both network modes.
GUEST_NET_SH = r"""
if [ -n "$PANDO_NET_ADDR" ]; then
  ip addr flush dev eth0 &&
    ip addr add "$PANDO_NET_ADDR" dev eth0 &&
    ip link set eth0 up &&
    { [ -z "$PANDO_NET_GW" ] || ip route replace default via "$PANDO_NET_GW"; } ||
    fatal "tap network setup ($PANDO_NET_ADDR via $PANDO_NET_GW) failed"
  [ -z "$PANDO_NET_MTU" ] || ip link set eth0 mtu "$PANDO_NET_MTU" ||
    fatal "ip link set eth0 mtu $PANDO_NET_MTU failed"
  i=0
  until ping -c 1 -W 1 "${PANDO_NET_GW:-${PANDO_NET_ADDR%/*}}" > /dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 10 ] || fatal "tap network: $PANDO_NET_GW does not answer ping"
  done
  say "network: eth0 $PANDO_NET_ADDR (tap), pod side $PANDO_NET_GW, mtu $(cat /sys/class/net/eth0/mtu)"
fi
"""


class TapUnavailable(RuntimeError):
    """The tap device could not be made; the message says why."""


@dataclass
class TapNet:
    """A persistent tap device in `pod`'s network namespace, for one qemu."""

    pod: Pod
    ifname: str = "pandotap0"
    host_addr: str = "10.0.3.1"
    guest_addr: str = "10.0.3.2"
    prefix: int = 24
    # Both ends' MTU.  1500 is Ethernet's; with virtio-net's offloads the
    # guest sends 64 KiB TSO segments anyway, so a larger MTU gains little.
    mtu: int = 1500
    bridge: str | None = None
    created: bool = False

    def __post_init__(self) -> None:
        net = ipaddress.ip_network(f"{self.host_addr}/{self.prefix}", strict=False)
        if ipaddress.ip_address(self.guest_addr) not in net:
            raise ValueError(f"{self.guest_addr} is not in {net}")

    def _ip(self, *args: str) -> None:
        cp = self.pod.run(["ip", *args], check=False, timeout=30)
        if cp.returncode != 0:
            raise TapUnavailable(f"ip {' '.join(args)}: {(cp.stderr or cp.stdout).strip()}")

    def create(self) -> "TapNet":
        """Makes the device, gives the pod side its address (or joins the
        bridge), brings it up."""
        if not os.path.exists("/dev/net/tun"):
            raise TapUnavailable("/dev/net/tun does not exist")
        self._ip("tuntap", "add", "dev", self.ifname, "mode", "tap")
        self.created = True
        try:
            if self.bridge is None:
                self._ip("addr", "add", f"{self.host_addr}/{self.prefix}", "dev", self.ifname)
            else:
                self._ip("link", "set", self.ifname, "master", self.bridge)
            self._ip("link", "set", self.ifname, "mtu", str(self.mtu))
            self._ip("link", "set", self.ifname, "up")
        except BaseException:
            self.remove()
            raise
        return self

    def remove(self) -> None:
        """Deletes the device (the pod's end would take it along anyway)."""
        if self.created:
            self.pod.run(["ip", "link", "del", self.ifname], check=False, timeout=30)
            self.created = False

    def netdev(self, netdev_id: str = "n0") -> str:
        """qemu's -netdev value (vm.Vm.netdev).  vhost=off: vhost-net needs
        KVM's irqfds to pay off; under TCG qemu's own tap backend is it."""
        return f"tap,id={netdev_id},ifname={self.ifname},script=no,downscript=no,vhost=off"

    def guest_params(self) -> dict[str, str]:
        """Kernel command-line words for GUEST_NET_SH."""
        p = {"PANDO_NET_ADDR": f"{self.guest_addr}/{self.prefix}",
             "PANDO_NET_GW": self.host_addr}
        if self.mtu != 1500:
            p["PANDO_NET_MTU"] = str(self.mtu)
        return p

    def link_stats(self) -> dict[str, int]:
        """The pod side's byte and packet counters (/proc/net/dev read in
        the pod: /sys/class/net shows the machine's devices there).
        rx_* is what the guest sent, tx_* what it received."""
        cp = self.pod.run(["cat", "/proc/net/dev"], check=False, timeout=30)
        for line in cp.stdout.splitlines():
            name, sep, rest = line.partition(":")
            if sep and name.strip() == self.ifname:
                f = [int(x) for x in rest.split()]
                return {"rx_bytes": f[0], "rx_packets": f[1], "rx_dropped": f[3],
                        "tx_bytes": f[8], "tx_packets": f[9], "tx_dropped": f[11]}
        return {}


def tap_error(pod: Pod) -> str | None:
    """Why a TapNet cannot work here (None when it can): a throwaway device
    is made and deleted in `pod`."""
    probe = TapNet(pod, ifname="pandoprobe0", host_addr="10.0.99.1", guest_addr="10.0.99.2")
    try:
        probe.create()
    except (TapUnavailable, subprocess.SubprocessError) as e:
        return str(e)
    probe.remove()
    return None
