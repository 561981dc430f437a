"""pando-service-address (Service_Address_Command): take puts the
address on the device and announces it with ARP requests whose sender
and target are the address (RFC 5227's ARP Announcement), known bytes
included; taking twice is fine; release removes it, and releasing an
address that is not there is not an error.  In a pod, on one end of a
veth pair, with the other end listening."""
from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator

import pytest
from pando_cluster.service_address import ETH_P_ARP, arp_announcement
from pando_testing.pod import Pod

ADDRESS = "10.99.0.50/24"
MAC = bytes.fromhex("020000000001")


def test_the_announcement_is_an_arp_request_from_and_for_the_address() -> None:
    frame = arp_announcement(MAC, ipaddress.IPv4Address("10.99.0.50"))
    assert frame.hex() == (
        "ffffffffffff" "020000000001" "0806"     # broadcast, from MAC, ARP
        "0001" "0800" "06" "04" "0001"           # Ethernet, IPv4, request
        "020000000001" "0a630032"                # sender: MAC, 10.99.0.50
        "000000000000" "0a630032")               # target: none, 10.99.0.50
    assert len(frame) == 42


@pytest.fixture
def wired(pod: Pod) -> Iterator[Pod]:
    pod.run(["ip", "link", "add", "svc0", "type", "veth", "peer", "name", "watch0"])
    for dev in ("svc0", "watch0"):
        pod.run(["ip", "link", "set", dev, "up"])
    yield pod


def _tool(pod: Pod, verb: str) -> str:
    cp = pod.run([sys.executable, "-m", "pando_cluster.service_address", "--address", ADDRESS,
                  "--dev", "svc0", "--interval", "0", verb])
    return cp.stdout


def _addresses(pod: Pod) -> str:
    return pod.run(["ip", "-o", "-4", "addr", "show", "dev", "svc0"]).stdout


def test_take_puts_the_address_on_and_announces_it_and_release_takes_it_off(
        wired: Pod) -> None:
    def listen() -> socket.socket:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP))
        s.bind(("watch0", ETH_P_ARP))
        s.settimeout(5)
        return s
    watch = wired.call_inside(listen)
    with watch:
        assert "done" in _tool(wired, "take")
        assert "10.99.0.50/24" in _addresses(wired)
        frames = [watch.recv(100) for _ in range(2)]
    mac = bytes.fromhex(_mac(wired))
    assert frames == [arp_announcement(mac, ipaddress.IPv4Address("10.99.0.50"))] * 2
    _tool(wired, "take")
    assert _addresses(wired).count("10.99.0.50/24") == 1
    _tool(wired, "release")
    assert "10.99.0.50" not in _addresses(wired)
    assert "done" in _tool(wired, "release")


def _mac(pod: Pod) -> str:
    out = pod.run(["ip", "-o", "link", "show", "dev", "svc0"]).stdout
    return out.split("link/ether ")[1].split()[0].replace(":", "")
