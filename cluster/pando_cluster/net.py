"""Addresses, port probes, and how Ganesha 4.3 will resolve its Bind_Addr."""
from __future__ import annotations

import ipaddress
import socket

WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def client_host(bind: str) -> str:
    """The address a local client connects to for a listener on `bind`."""
    return WILDCARDS.get(bind, bind)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True
    except OSError:
        return False


def ganesha_listen_addr(bind: str) -> str | None:
    """The address ganesha.nfsd 4.3 really listens on for `Bind_Addr = bind`,
    or None when it refuses the value (and exits).

    Ganesha resolves it with getaddrinfo(AF_INET6, AI_ADDRCONFIG|AI_V4MAPPED)
    and falls back to AF_INET; glibc's AI_ADDRCONFIG ignores 127.0.0.1 and
    ::1, so a host whose only addresses are those two fails both. When only
    the AF_INET lookup succeeds (no non-loopback IPv6 address), Ganesha still
    reads the result as a sockaddr_in6 and binds its IPv6 socket to `::`,
    every address (config_parsing.c, nfs_rpc_dispatcher_thread.c)."""
    flags = socket.AI_ADDRCONFIG | socket.AI_V4MAPPED
    try:
        socket.getaddrinfo(bind, None, socket.AF_INET6, 0, 0, flags)
        return bind
    except socket.gaierror:
        pass
    try:
        ipaddress.IPv4Address(bind)
        socket.getaddrinfo(bind, None, socket.AF_INET, 0, 0, flags)
    except (ValueError, socket.gaierror):
        return None
    return "::"
