"""A minimal NLM version 4 client (the NFSv3 lock protocol, XNFS chapter 10
and RFC 1813's NLM4 types) and a portmapper GETPORT, so tests can take and
test locks on a server from this machine, as different hosts (caller
names), without a kernel client.  Only the synchronous procedures: TEST,
LOCK (non-blocking), UNLOCK."""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from .oncrpc import RpcClient, auth_sys
from .pod import Pod
from .xdr import Packer

PMAP_PROG, PMAP_VERS, PMAPPROC_GETPORT = 100000, 2, 3
IPPROTO_TCP = 6
NLM_PROG, NLM4_VERS = 100021, 4
NLMPROC4_TEST, NLMPROC4_LOCK, NLMPROC4_UNLOCK = 1, 2, 4
SM_PROG, SM_VERS = 100024, 1

# nlm4_stats the tests look for (DENIED_NOLOCKS 2 is what a server without
# a statd answers; BLOCKED 3 comes only to blocking requests)
NLM4_GRANTED, NLM4_DENIED, NLM4_DENIED_GRACE_PERIOD = 0, 1, 4


def getport(sock: socket.socket, prog: int, vers: int) -> int:
    """PMAPPROC_GETPORT (TCP) on a connection to rpcbind; 0: not registered."""
    c = RpcClient(sock, PMAP_PROG, PMAP_VERS)
    return c.call(PMAPPROC_GETPORT, Packer().u32(prog).u32(vers).u32(IPPROTO_TCP).u32(0)
                  .bytes()).u32()


@dataclass(frozen=True)
class Holder:
    """Who holds a conflicting lock (TEST's answer)."""
    exclusive: bool
    svid: int
    offset: int
    length: int


class NlmHost:
    """One NFSv3 host's lock manager talking to the server's NLM over one
    TCP connection: `caller` is its name (what Linux sends: its nodename);
    `svid` is the locking process (Linux: the pid)."""

    def __init__(self, sock: socket.socket, caller: str) -> None:
        self.caller = caller
        self.rpc = RpcClient(sock, NLM_PROG, NLM4_VERS, auth_sys(machine=caller))

    def close(self) -> None:
        self.rpc.close()

    def _lock(self, p: Packer, fh: bytes, svid: int, offset: int, length: int) -> Packer:
        owner = f"{svid}@{self.caller}".encode()   # Linux's owner handle
        return p.string(self.caller).opaque(fh).opaque(owner).i32(svid).u64(offset).u64(length)

    @staticmethod
    def _cookie(p: Packer) -> Packer:
        return p.opaque(os.urandom(8))

    def _status(self, proc: int, p: Packer) -> int:
        u = self.rpc.call(proc, p.bytes())
        u.opaque(1024)  # the cookie back
        return u.u32()

    def lock(self, fh: bytes, offset: int, length: int, exclusive: bool = True,
             svid: int = 1, reclaim: bool = False) -> int:
        """NLM4_LOCK without blocking (`reclaim`: one held before the
        server restarted); the nlm4_stats."""
        p = self._cookie(Packer()).boolean(False).boolean(exclusive)
        return self._status(NLMPROC4_LOCK, self._lock(p, fh, svid, offset, length)
                            .boolean(reclaim).i32(0))

    def unlock(self, fh: bytes, offset: int, length: int, svid: int = 1) -> int:
        return self._status(NLMPROC4_UNLOCK, self._lock(self._cookie(Packer()), fh, svid,
                                                         offset, length))

    def test(self, fh: bytes, offset: int, length: int, exclusive: bool = True,
             svid: int = 1) -> tuple[int, Holder | None]:
        """NLM4_TEST: (nlm4_stats, the conflicting holder when DENIED)."""
        p = self._cookie(Packer()).boolean(exclusive)
        u = self.rpc.call(NLMPROC4_TEST, self._lock(p, fh, svid, offset, length).bytes())
        u.opaque(1024)
        stat = u.u32()
        if stat != NLM4_DENIED:
            return stat, None
        excl, hsvid = u.boolean(), u.i32()
        u.opaque(1024)
        return stat, Holder(excl, hsvid, u.u64(), u.u64())


def nlm_host(pod: Pod, source: str, caller: str | None = None) -> NlmHost:
    """An NFSv3 host in `pod` calling from `source` (one of its loopback
    addresses) the NLM the pod's rpcbind names; `caller` its name (default
    host-SOURCE).  Servers that tell hosts apart by address (NSM_Use_
    Caller_Name = false, production's) see one host per source."""
    s = pod.connect("127.0.0.1", 111)
    try:
        port = getport(s, NLM_PROG, NLM4_VERS)
    finally:
        s.close()

    def dial() -> socket.socket:
        sock = socket.socket()
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        return sock
    return NlmHost(pod.call_inside(dial), caller or f"host-{source}")
