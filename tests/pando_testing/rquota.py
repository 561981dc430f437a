"""A minimal rquota client (Sun's rquota.x, as Linux's quota tools and
Ganesha's RQUOTA service speak it): GETQUOTA and SETQUOTA of version 2
(EXT_RQUOTAVERS, with a quota type), over TCP, so tests can read and set
users' and groups' quotas from chosen hosts and credentials without a
kernel client."""
from __future__ import annotations

import socket
from dataclasses import dataclass

from .nfs3 import auth_sys_groups
from .nlm import getport
from .oncrpc import Auth, RpcClient
from .pod import Pod
from .xdr import Packer, Unpacker

RQUOTA_PROG, EXT_RQUOTA_VERS = 100011, 2
RQUOTAPROC_GETQUOTA, RQUOTAPROC_SETQUOTA = 1, 3
USRQUOTA, GRPQUOTA = 0, 1
Q_OK, Q_NOQUOTA, Q_EPERM = 1, 2, 3
Q_SETQLIM = 0x800007   # Linux's sqa_qcmd for setting limits (quota-tools' QCMD(Q_SETQLIM, type))


@dataclass(frozen=True)
class Rquota:
    """A quota as rquota carries it: block counts in bsize units."""
    bsize: int
    active: bool
    bhardlimit: int
    bsoftlimit: int
    curblocks: int
    fhardlimit: int
    fsoftlimit: int
    curfiles: int
    btimeleft: int
    ftimeleft: int

    @classmethod
    def unpack(cls, u: Unpacker) -> "Rquota":
        return cls(u.i32(), u.boolean(), *(u.u32() for _ in range(8)))

    @property
    def limit_bytes(self) -> int:
        return self.bhardlimit * self.bsize

    @property
    def used_bytes(self) -> int:
        return self.curblocks * self.bsize


def _result(u: Unpacker) -> tuple[int, Rquota | None]:
    status = u.u32()
    q = Rquota.unpack(u) if status == Q_OK else None
    u.done()
    return status, q


class RquotaClient:
    """One connection to a server's RQUOTA, calling as `auth`."""

    def __init__(self, sock: socket.socket, auth: Auth) -> None:
        self.rpc = RpcClient(sock, RQUOTA_PROG, EXT_RQUOTA_VERS, auth)

    def close(self) -> None:
        self.rpc.close()

    def __enter__(self) -> "RquotaClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, qtype: int, qid: int) -> tuple[int, Rquota | None]:
        """GETQUOTA: (qr_status, the quota when Q_OK)."""
        return _result(self.rpc.call(RQUOTAPROC_GETQUOTA,
                                     Packer().string(path).i32(qtype).i32(qid).bytes()))

    def set(self, path: str, qtype: int, qid: int, *, kib: int = 0, files: int = 0,
            soft_kib: int = 0, soft_files: int = 0) -> tuple[int, Rquota | None]:
        """SETQUOTA of the limits (blocks in KiB, as quota tools send them)."""
        p = Packer().i32(Q_SETQLIM | qtype).string(path).i32(qid).i32(qtype)
        for v in (kib, soft_kib, 0, files, soft_files, 0, 0, 0):
            p.u32(v)
        return _result(self.rpc.call(RQUOTAPROC_SETQUOTA, p.bytes()))


def rquota_port(pod: Pod) -> int:
    """The RQUOTA port the pod's rpcbind names (0: none registered)."""
    s = pod.connect("127.0.0.1", 111)
    try:
        return getport(s, RQUOTA_PROG, EXT_RQUOTA_VERS)
    finally:
        s.close()


def rquota_client(pod: Pod, uid: int = 0, gid: int = 0, groups: tuple[int, ...] = (),
                  source: str | None = None) -> RquotaClient:
    """A client of the RQUOTA in `pod` as uid:gid (and `groups`), calling
    from `source` (one of the pod's loopback addresses)."""
    port = rquota_port(pod)
    assert port, "no RQUOTA registered with the pod's rpcbind"
    return RquotaClient(pod.connect("127.0.0.1", port, source=source),
                        auth_sys_groups(uid, gid, groups))
