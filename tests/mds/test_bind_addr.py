"""Bind_Addr (patches/0153): a manager given one IPv4 address listens on
that address alone, in a network namespace with no IPv6 address besides
loopback (as a host on an IPv4-only network), so two servers share a port
on two addresses."""
from __future__ import annotations

import socket
from collections.abc import Callable

from pando_testing.ganesha import GaneshaVfs
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect


def refused(m: PandoMds, host: str, port: int) -> bool:
    def attempt() -> bool:
        with socket.socket() as s:
            s.settimeout(5)
            try:
                s.connect((host, port))
            except ConnectionRefusedError:
                return True
            return False
    return m.pod.call_inside(attempt)


def test_a_manager_bound_to_one_address_answers_there_alone(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = mds_factory(2, host="127.0.0.2", bind="127.0.0.2")
    with connect(m) as c:
        assert c.getattr(m.root_handle()).attrs is not None
    assert refused(m, "127.0.0.1", m.nfs_port), "it answers on another address"
    assert refused(m, "127.0.0.1", m.mnt_port)


def test_two_servers_share_a_port_on_two_addresses(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = mds_factory(2, host="127.0.0.2", bind="127.0.0.2")
    other = GaneshaVfs(m.pod, m.workdir.parent / "other", host="127.0.0.3", bind="127.0.0.3",
                       nfs_port=m.nfs_port, mnt_port=m.mnt_port, nsm=False)
    other.rpcbind = m.rpcbind       # the pod's one rpcbind, which m stops
    try:
        other.start()
        with connect(m) as c:
            assert c.getattr(m.root_handle()).attrs is not None
        with connect(other) as c:
            assert c.getattr(other.root_handle()).attrs is not None
    finally:
        other.rpcbind = None
        assert other.stop() == 0
