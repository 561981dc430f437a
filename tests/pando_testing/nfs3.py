"""An NFSv3 client (RFC 1813) for the procedures a pNFS data server serves.

Every result is decoded strictly: a reply with trailing bytes, or a failure
arm that is not the one RFC 1813 gives the procedure, raises XdrError.  NFS
error statuses are returned, never raised; RPC-level errors raise what
oncrpc raises (RpcAccepted, RpcDenied, ConnectionClosed).

The *_args helpers build argument bytes, so tests can mutate them and send
them with Nfs3Client.call_raw().
"""
from __future__ import annotations

import socket
from dataclasses import dataclass

from .oncrpc import Auth, RpcClient, auth_sys
from .pod import Pod
from .xdr import Packer, Unpacker

NFS3_PROGRAM = 100003
NFS3_VERSION = 3
NFS3_FHSIZE = 64
MAX_IO = 1 << 20

PROC_NULL = 0
PROC_GETATTR = 1
PROC_SETATTR = 2
PROC_LOOKUP = 3
PROC_ACCESS = 4
PROC_READLINK = 5
PROC_READ = 6
PROC_WRITE = 7
PROC_CREATE = 8
PROC_MKDIR = 9
PROC_SYMLINK = 10
PROC_MKNOD = 11
PROC_REMOVE = 12
PROC_RMDIR = 13
PROC_RENAME = 14
PROC_LINK = 15
PROC_READDIR = 16
PROC_READDIRPLUS = 17
PROC_FSSTAT = 18
PROC_FSINFO = 19
PROC_PATHCONF = 20
PROC_COMMIT = 21

NFS3_OK = 0
NFS3ERR_PERM = 1
NFS3ERR_NOENT = 2
NFS3ERR_IO = 5
NFS3ERR_ACCES = 13
NFS3ERR_INVAL = 22
NFS3ERR_FBIG = 27
NFS3ERR_NOSPC = 28
NFS3ERR_STALE = 70
NFS3ERR_BADHANDLE = 10001
NFS3ERR_NOTSUPP = 10004
NFS3ERR_SERVERFAULT = 10006

UNSTABLE = 0
DATA_SYNC = 1
FILE_SYNC = 2

NF3REG = 1

ACCESS3_READ = 0x01
ACCESS3_LOOKUP = 0x02
ACCESS3_MODIFY = 0x04
ACCESS3_EXTEND = 0x08
ACCESS3_DELETE = 0x10
ACCESS3_EXECUTE = 0x20
ACCESS3_ALL = 0x3F

FSF3_LINK = 0x01
FSF3_SYMLINK = 0x02
FSF3_HOMOGENEOUS = 0x08
FSF3_CANSETTIME = 0x10

FATTR3_SIZE = 84
WCC_ATTR_SIZE = 24

class Nfs3StatusError(Exception):
    """Raised only by the multi-call helpers (read_all), never by a procedure."""

    def __init__(self, what: str, status: int) -> None:
        super().__init__(f"{what}: NFS status {status}")
        self.status = status


# The words of each unsupported procedure's failure arm: post_op_attr is
# one, wcc_data two (RFC 1813, section 3.3).
NOTSUPP_FAIL_WORDS = {
    PROC_SETATTR: 2, PROC_LOOKUP: 1, PROC_READLINK: 1, PROC_CREATE: 2, PROC_MKDIR: 2,
    PROC_SYMLINK: 2, PROC_MKNOD: 2, PROC_REMOVE: 2, PROC_RMDIR: 2, PROC_RENAME: 4,
    PROC_LINK: 3, PROC_READDIR: 1, PROC_READDIRPLUS: 1,
}


@dataclass
class Fattr3:
    type: int
    mode: int
    nlink: int
    uid: int
    gid: int
    size: int
    used: int
    rdev: tuple[int, int]
    fsid: int
    fileid: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int


@dataclass
class WccAttr:
    size: int
    mtime_ns: int
    ctime_ns: int


@dataclass
class WccData:
    before: WccAttr | None
    after: Fattr3 | None


@dataclass
class GetattrRes:
    status: int
    attrs: Fattr3 | None = None


@dataclass
class AccessRes:
    status: int
    attrs: Fattr3 | None = None
    access: int = 0


@dataclass
class ReadRes:
    status: int
    attrs: Fattr3 | None = None
    count: int = 0
    eof: bool = False
    data: bytes = b""


@dataclass
class WriteRes:
    status: int
    wcc: WccData | None = None
    count: int = 0
    committed: int = 0
    verf: bytes = b""


@dataclass
class CommitRes:
    status: int
    wcc: WccData | None = None
    verf: bytes = b""


@dataclass
class FsstatRes:
    status: int
    attrs: Fattr3 | None = None
    tbytes: int = 0
    fbytes: int = 0
    abytes: int = 0
    tfiles: int = 0
    ffiles: int = 0
    afiles: int = 0
    invarsec: int = 0


@dataclass
class FsinfoRes:
    status: int
    attrs: Fattr3 | None = None
    rtmax: int = 0
    rtpref: int = 0
    rtmult: int = 0
    wtmax: int = 0
    wtpref: int = 0
    wtmult: int = 0
    dtpref: int = 0
    maxfilesize: int = 0
    time_delta_ns: int = 0
    properties: int = 0


@dataclass
class PathconfRes:
    status: int
    attrs: Fattr3 | None = None
    linkmax: int = 0
    name_max: int = 0
    no_trunc: bool = False
    chown_restricted: bool = False
    case_insensitive: bool = False
    case_preserving: bool = False


# --- argument encoders ------------------------------------------------------

def fh_args(fh: bytes) -> bytes:
    return Packer().opaque(fh).bytes()


def access_args(fh: bytes, access: int) -> bytes:
    return Packer().opaque(fh).u32(access).bytes()


def read_args(fh: bytes, offset: int, count: int) -> bytes:
    return Packer().opaque(fh).u64(offset).u32(count).bytes()


def write_args(fh: bytes, offset: int, data: bytes, stable: int = UNSTABLE,
               count: int | None = None) -> bytes:
    """count defaults to len(data); pass another to send a mismatch."""
    count = len(data) if count is None else count
    return Packer().opaque(fh).u64(offset).u32(count).u32(stable).opaque(data).bytes()


def commit_args(fh: bytes, offset: int = 0, count: int = 0) -> bytes:
    return Packer().opaque(fh).u64(offset).u32(count).bytes()


# --- result decoders --------------------------------------------------------

def _nfstime(u: Unpacker) -> int:
    seconds = u.u32()
    nseconds = u.u32()
    return seconds * 1_000_000_000 + nseconds


def decode_fattr3(u: Unpacker) -> Fattr3:
    return Fattr3(type=u.u32(), mode=u.u32(), nlink=u.u32(), uid=u.u32(), gid=u.u32(),
                  size=u.u64(), used=u.u64(), rdev=(u.u32(), u.u32()), fsid=u.u64(),
                  fileid=u.u64(), atime_ns=_nfstime(u), mtime_ns=_nfstime(u),
                  ctime_ns=_nfstime(u))


def decode_post_op_attr(u: Unpacker) -> Fattr3 | None:
    return decode_fattr3(u) if u.boolean() else None


def decode_wcc_data(u: Unpacker) -> WccData:
    before = WccAttr(u.u64(), _nfstime(u), _nfstime(u)) if u.boolean() else None
    return WccData(before, decode_post_op_attr(u))


def decode_getattr(u: Unpacker) -> GetattrRes:
    status = u.u32()
    res = GetattrRes(status, decode_fattr3(u) if status == NFS3_OK else None)
    u.done()
    return res


def decode_access(u: Unpacker) -> AccessRes:
    res = AccessRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.access = u.u32()
    u.done()
    return res


def decode_read(u: Unpacker) -> ReadRes:
    res = ReadRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.count = u.u32()
        res.eof = u.boolean()
        res.data = u.opaque(MAX_IO)
    u.done()
    return res


def decode_write(u: Unpacker) -> WriteRes:
    res = WriteRes(u.u32(), decode_wcc_data(u))
    if res.status == NFS3_OK:
        res.count = u.u32()
        res.committed = u.u32()
        res.verf = u.fixed(8)
    u.done()
    return res


def decode_commit(u: Unpacker) -> CommitRes:
    res = CommitRes(u.u32(), decode_wcc_data(u))
    if res.status == NFS3_OK:
        res.verf = u.fixed(8)
    u.done()
    return res


def decode_fsstat(u: Unpacker) -> FsstatRes:
    res = FsstatRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.tbytes, res.fbytes, res.abytes = u.u64(), u.u64(), u.u64()
        res.tfiles, res.ffiles, res.afiles = u.u64(), u.u64(), u.u64()
        res.invarsec = u.u32()
    u.done()
    return res


def decode_fsinfo(u: Unpacker) -> FsinfoRes:
    res = FsinfoRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.rtmax, res.rtpref, res.rtmult = u.u32(), u.u32(), u.u32()
        res.wtmax, res.wtpref, res.wtmult = u.u32(), u.u32(), u.u32()
        res.dtpref = u.u32()
        res.maxfilesize = u.u64()
        res.time_delta_ns = _nfstime(u)
        res.properties = u.u32()
    u.done()
    return res


def decode_pathconf(u: Unpacker) -> PathconfRes:
    res = PathconfRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.linkmax, res.name_max = u.u32(), u.u32()
        res.no_trunc, res.chown_restricted = u.boolean(), u.boolean()
        res.case_insensitive, res.case_preserving = u.boolean(), u.boolean()
    u.done()
    return res


class Nfs3Client:
    """Synchronous NFSv3 calls over one TCP connection."""

    def __init__(self, rpc: RpcClient) -> None:
        self.rpc = rpc

    @classmethod
    def over(cls, sock: socket.socket, cred: Auth | None = None) -> "Nfs3Client":
        return cls(RpcClient(sock, NFS3_PROGRAM, NFS3_VERSION, cred or auth_sys()))

    @classmethod
    def connect(cls, pod: Pod, host: str, port: int, cred: Auth | None = None) -> "Nfs3Client":
        return cls.over(pod.connect(host, port), cred)

    def close(self) -> None:
        self.rpc.close()

    def __enter__(self) -> "Nfs3Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call_raw(self, proc: int, args: bytes) -> Unpacker:
        return self.rpc.call(proc, args)

    def null(self) -> None:
        self.rpc.call(PROC_NULL).done()

    def getattr(self, fh: bytes) -> GetattrRes:
        return decode_getattr(self.rpc.call(PROC_GETATTR, fh_args(fh)))

    def access(self, fh: bytes, access: int = ACCESS3_ALL) -> AccessRes:
        return decode_access(self.rpc.call(PROC_ACCESS, access_args(fh, access)))

    def read(self, fh: bytes, offset: int, count: int) -> ReadRes:
        return decode_read(self.rpc.call(PROC_READ, read_args(fh, offset, count)))

    def write(self, fh: bytes, offset: int, data: bytes, stable: int = UNSTABLE,
              count: int | None = None) -> WriteRes:
        args = write_args(fh, offset, data, stable, count)
        return decode_write(self.rpc.call(PROC_WRITE, args))

    def commit(self, fh: bytes, offset: int = 0, count: int = 0) -> CommitRes:
        return decode_commit(self.rpc.call(PROC_COMMIT, commit_args(fh, offset, count)))

    def fsstat(self, fh: bytes) -> FsstatRes:
        return decode_fsstat(self.rpc.call(PROC_FSSTAT, fh_args(fh)))

    def fsinfo(self, fh: bytes) -> FsinfoRes:
        return decode_fsinfo(self.rpc.call(PROC_FSINFO, fh_args(fh)))

    def pathconf(self, fh: bytes) -> PathconfRes:
        return decode_pathconf(self.rpc.call(PROC_PATHCONF, fh_args(fh)))

    def read_all(self, fh: bytes, offset: int, length: int, chunk: int = MAX_IO) -> bytes:
        """Reads [offset, offset + length) in chunk-sized READs; stops at eof."""
        parts: list[bytes] = []
        end = offset + length
        while offset < end:
            res = self.read(fh, offset, min(chunk, end - offset))
            if res.status != NFS3_OK:
                raise Nfs3StatusError(f"READ at {offset}", res.status)
            parts.append(res.data)
            offset += len(res.data)
            if res.eof or not res.data:
                break
        return b"".join(parts)
