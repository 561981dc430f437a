"""pando-service-address: the address clients mount, on the host of a
manager group's active.  The manager runs it (its Service_Address_Command)
with `take` before it serves and with `release` when it starts and when
it stops being the active.

take puts the address on the device (`ip addr replace`, so taking it
twice is fine) and announces it with gratuitous ARP requests (RFC 5227's
ARP Announcement), so that clients and switches send the address's
packets to this host at once instead of when their ARP entries expire.
release removes it; an address already gone is not an error."""
from __future__ import annotations

import argparse
import ipaddress
import socket
import struct
import subprocess
import sys
import time

ETH_P_ARP = 0x0806
ARP_REQUEST = 1


def arp_announcement(mac: bytes, ip: ipaddress.IPv4Address) -> bytes:
    """An Ethernet broadcast of an ARP request whose sender and target are
    both `ip` (RFC 5227 §2.3): every host that has the address cached
    takes the sender's MAC for it."""
    eth = b"\xff" * 6 + mac + struct.pack(">H", ETH_P_ARP)
    arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, ARP_REQUEST)
    return eth + arp + mac + ip.packed + b"\x00" * 6 + ip.packed


def announce(dev: str, ip: ipaddress.IPv4Address, count: int, interval: float) -> None:
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP)) as s:
        s.bind((dev, ETH_P_ARP))
        mac = s.getsockname()[4]
        frame = arp_announcement(mac, ip)
        for i in range(count):
            if i:
                time.sleep(interval)
            s.send(frame)


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def take(iface: ipaddress.IPv4Interface, dev: str, count: int, interval: float) -> None:
    cp = _ip("addr", "replace", str(iface), "dev", dev)
    if cp.returncode:
        raise RuntimeError(f"ip addr replace {iface} dev {dev}: {cp.stderr.strip()}")
    announce(dev, iface.ip, count, interval)


def release(iface: ipaddress.IPv4Interface, dev: str) -> None:
    cp = _ip("addr", "del", str(iface), "dev", dev)
    # iproute2 says "Address not found" (older: "Cannot assign requested
    # address") when it was not there.
    if cp.returncode and not any(w in cp.stderr for w in ("not found", "Cannot assign")):
        raise RuntimeError(f"ip addr del {iface} dev {dev}: {cp.stderr.strip()}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pando-service-address", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--address", type=ipaddress.IPv4Interface,
                   help="the service address with its prefix, e.g. 10.0.0.50/24 (none: a "
                        "manager in no group, which has none to take or release)")
    p.add_argument("--dev", default="eth0", help="the device it goes on (default eth0)")
    p.add_argument("--count", type=int, default=2, help="ARP announcements sent (take)")
    p.add_argument("--interval", type=float, default=0.1,
                   help="seconds between announcements")
    p.add_argument("verb", choices=("take", "release"))
    a = p.parse_args(argv)
    if a.address is None:
        if a.verb == "take":
            p.error("take needs --address")
        print("pando-service-address: no service address (no manager group): nothing to do")
        return 0
    try:
        if a.verb == "take":
            take(a.address, a.dev, a.count, a.interval)
        else:
            release(a.address, a.dev)
    except (OSError, RuntimeError) as e:
        print(f"pando-service-address: {a.verb} {a.address} on {a.dev}: {e}", file=sys.stderr)
        return 1
    print(f"pando-service-address: {a.verb} {a.address} on {a.dev}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
