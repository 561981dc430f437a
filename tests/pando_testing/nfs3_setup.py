"""Minimal MOUNT v3 and NFSv3 calls that set up a load test: get an export's
root handle, create or look up files, and read their handles.

Not a full client (that is nfs3.py): only what a benchmark or a harness needs
before a load generator takes over.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass

from .oncrpc import RpcClient, auth_sys
from .xdr import Packer, Unpacker

MOUNT_PROGRAM = 100005
MOUNT_V3 = 3
MOUNTPROC3_MNT = 1
MOUNTPROC3_UMNT = 3

NFS_PROGRAM = 100003
NFS_V3 = 3
NFSPROC3_GETATTR = 1
NFSPROC3_SETATTR = 2
NFSPROC3_LOOKUP = 3
NFSPROC3_CREATE = 8

UNCHECKED = 0
GUARDED = 1

NFS3_FHSIZE = 64


class Nfs3Error(Exception):
    """An NFSv3 or MOUNT procedure answered with a non-zero status."""

    def __init__(self, what: str, status: int) -> None:
        super().__init__(f"{what}: status {status}")
        self.what = what
        self.status = status


def _skip_post_op_attr(u: Unpacker) -> None:
    if u.boolean():
        u.fixed(84)


def _skip_wcc_data(u: Unpacker) -> None:
    if u.boolean():
        u.fixed(24)
    _skip_post_op_attr(u)


def mount_root(sock: socket.socket, path: str, uid: int = 0, gid: int = 0) -> bytes:
    """MOUNTPROC3_MNT over an open TCP connection to the mount daemon;
    returns the export's root file handle."""
    c = RpcClient(sock, MOUNT_PROGRAM, MOUNT_V3, auth_sys(uid, gid))
    u = c.call(MOUNTPROC3_MNT, Packer().string(path).bytes())
    status = u.u32()
    if status != 0:
        raise Nfs3Error(f"MNT {path}", status)
    return u.opaque(NFS3_FHSIZE)


@dataclass
class Nfs3Setup:
    """A synchronous NFSv3 client for the few setup calls."""

    rpc: RpcClient

    @classmethod
    def over(cls, sock: socket.socket, uid: int = 0, gid: int = 0) -> "Nfs3Setup":
        return cls(RpcClient(sock, NFS_PROGRAM, NFS_V3, auth_sys(uid, gid)))

    def close(self) -> None:
        self.rpc.close()

    def lookup(self, dir_fh: bytes, name: str) -> bytes:
        u = self.rpc.call(NFSPROC3_LOOKUP, Packer().opaque(dir_fh).string(name).bytes())
        status = u.u32()
        if status != 0:
            raise Nfs3Error(f"LOOKUP {name}", status)
        return u.opaque(NFS3_FHSIZE)

    def create(self, dir_fh: bytes, name: str, mode: int = 0o644, truncate: bool = True,
               owner: int | None = None) -> bytes:
        """CREATE (UNCHECKED: an existing file is reused, truncated to 0 when
        `truncate`), owned by `owner` (uid and gid) or the caller; returns
        the file's handle."""
        p = Packer().opaque(dir_fh).string(name).u32(UNCHECKED)
        p.boolean(True).u32(mode)          # mode
        for _ in range(2):                 # uid, gid
            p.boolean(owner is not None)
            if owner is not None:
                p.u32(owner)
        if truncate:
            p.boolean(True).u64(0)         # size
        else:
            p.boolean(False)
        p.u32(0).u32(0)                    # atime, mtime: DONT_CHANGE
        u = self.rpc.call(NFSPROC3_CREATE, p.bytes())
        status = u.u32()
        if status != 0:
            raise Nfs3Error(f"CREATE {name}", status)
        if u.boolean():
            return u.opaque(NFS3_FHSIZE)
        return self.lookup(dir_fh, name)

    def chmod(self, fh: bytes, mode: int) -> None:
        """SETATTR of the mode alone, unguarded."""
        p = Packer().opaque(fh).boolean(True).u32(mode)
        p.boolean(False).boolean(False).boolean(False)   # uid, gid, size
        p.u32(0).u32(0).boolean(False)                   # atime, mtime, no guard
        status = self.rpc.call(NFSPROC3_SETATTR, p.bytes()).u32()
        if status != 0:
            raise Nfs3Error("SETATTR", status)

    def getattr_size(self, fh: bytes) -> int:
        """GETATTR; returns the file's size."""
        u = self.rpc.call(NFSPROC3_GETATTR, Packer().opaque(fh).bytes())
        status = u.u32()
        if status != 0:
            raise Nfs3Error("GETATTR", status)
        u.fixed(4 * 5)  # type, mode, nlink, uid, gid
        return u.u64()
