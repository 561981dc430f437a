"""An NFSv3 client (RFC 1813): the procedures a pNFS data server serves
(NULL, GETATTR, ACCESS, READ, WRITE, COMMIT, FSSTAT, FSINFO, PATHCONF) and
the namespace procedures a metadata server serves (SETATTR, LOOKUP,
READLINK, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK,
READDIR, READDIRPLUS).  Names (filename3) may be str or bytes: any bytes go
on the wire, so tests can send names a server must refuse.

Every result is decoded strictly: a reply with trailing bytes, or a failure
arm that is not the one RFC 1813 gives the procedure, raises XdrError.  NFS
error statuses are returned, never raised; RPC-level errors raise what
oncrpc raises (RpcAccepted, RpcDenied, ConnectionClosed).

The *_args helpers build argument bytes, so tests can mutate them and send
them with Nfs3Client.call_raw().
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .oncrpc import AUTH_SYS, Auth, RpcClient, auth_sys, decode_reply, encode_call
from .pod import Pod
from .xdr import Packer, Unpacker, XdrError

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
NFS3ERR_NXIO = 6
NFS3ERR_ACCES = 13
NFS3ERR_EXIST = 17
NFS3ERR_XDEV = 18
NFS3ERR_NODEV = 19
NFS3ERR_NOTDIR = 20
NFS3ERR_ISDIR = 21
NFS3ERR_INVAL = 22
NFS3ERR_FBIG = 27
NFS3ERR_NOSPC = 28
NFS3ERR_ROFS = 30
NFS3ERR_MLINK = 31
NFS3ERR_NAMETOOLONG = 63
NFS3ERR_NOTEMPTY = 66
NFS3ERR_DQUOT = 69
NFS3ERR_STALE = 70
NFS3ERR_REMOTE = 71
NFS3ERR_BADHANDLE = 10001
NFS3ERR_NOT_SYNC = 10002
NFS3ERR_BAD_COOKIE = 10003
NFS3ERR_NOTSUPP = 10004
NFS3ERR_TOOSMALL = 10005
NFS3ERR_SERVERFAULT = 10006
NFS3ERR_BADTYPE = 10007
NFS3ERR_JUKEBOX = 10008

STATUS_NAMES = {v: k for k, v in list(globals().items())
                if k == "NFS3_OK" or k.startswith("NFS3ERR_")}


def status_name(status: int) -> str:
    """"NFS3ERR_NOENT" for 2; the number for a status RFC 1813 does not list."""
    return STATUS_NAMES.get(status, str(status))

UNSTABLE = 0
DATA_SYNC = 1
FILE_SYNC = 2

# ftype3
NF3REG = 1
NF3DIR = 2
NF3BLK = 3
NF3CHR = 4
NF3LNK = 5
NF3SOCK = 6
NF3FIFO = 7

# createmode3
UNCHECKED = 0
GUARDED = 1
EXCLUSIVE = 2

# time_how
DONT_CHANGE = 0
SET_TO_SERVER_TIME = 1
SET_TO_CLIENT_TIME = 2
# Sattr3.atime / .mtime: this value asks for SET_TO_SERVER_TIME.
SERVER_TIME = -1

NFS3_COOKIEVERFSIZE = 8
NFS3_CREATEVERFSIZE = 8
NFS3_MAXNAMLEN = 255
NFS3_MAXPATHLEN = 4096

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

Name = str | bytes


def auth_sys_groups(uid: int, gid: int, gids: Sequence[int] = (), machine: str = "pando-test",
                    stamp: int = 0) -> Auth:
    """AUTH_SYS (RFC 5531 appendix A) with supplementary groups (at most 16)."""
    assert len(gids) <= 16, "AUTH_SYS carries at most 16 supplementary groups"
    p = Packer().u32(stamp).string(machine).u32(uid).u32(gid).u32(len(gids))
    for g in gids:
        p.u32(g)
    return Auth(AUTH_SYS, p.bytes())

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
class Sattr3:
    """sattr3: None leaves a field alone.  atime/mtime are nanoseconds since
    the epoch (SET_TO_CLIENT_TIME), or SERVER_TIME (SET_TO_SERVER_TIME)."""
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    size: int | None = None
    atime: int | None = None
    mtime: int | None = None


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


@dataclass
class SetattrRes:
    status: int
    wcc: WccData | None = None


@dataclass
class LookupRes:
    status: int
    fh: bytes = b""
    attrs: Fattr3 | None = None
    dir_attrs: Fattr3 | None = None


@dataclass
class ReadlinkRes:
    status: int
    attrs: Fattr3 | None = None
    target: bytes = b""


@dataclass
class CreateRes:
    """CREATE, MKDIR, SYMLINK and MKNOD: the new object's handle (None
    when the server left it out) and attributes, and the directory's wcc."""
    status: int
    fh: bytes | None = None
    attrs: Fattr3 | None = None
    dir_wcc: WccData | None = None


@dataclass
class RemoveRes:
    """REMOVE and RMDIR."""
    status: int
    dir_wcc: WccData | None = None


@dataclass
class RenameRes:
    status: int
    fromdir_wcc: WccData | None = None
    todir_wcc: WccData | None = None


@dataclass
class LinkRes:
    status: int
    attrs: Fattr3 | None = None
    linkdir_wcc: WccData | None = None


@dataclass
class Entry3:
    """A READDIR entry; READDIRPLUS adds attrs and fh (None when left out)."""
    fileid: int
    name: bytes
    cookie: int
    attrs: Fattr3 | None = None
    fh: bytes | None = None

    @property
    def text(self) -> str:
        return self.name.decode(errors="surrogateescape")


@dataclass
class ReaddirRes:
    """READDIR and READDIRPLUS."""
    status: int
    dir_attrs: Fattr3 | None = None
    cookieverf: bytes = b""
    entries: list[Entry3] = field(default_factory=list)
    eof: bool = False


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


def _name(name: Name) -> bytes:
    return name.encode(errors="surrogateescape") if isinstance(name, str) else bytes(name)


def pack_nfstime(p: Packer, ns: int) -> Packer:
    return p.u32(ns // 1_000_000_000).u32(ns % 1_000_000_000)


def _pack_set_time(p: Packer, t: int | None) -> None:
    if t is None:
        p.u32(DONT_CHANGE)
    elif t == SERVER_TIME:
        p.u32(SET_TO_SERVER_TIME)
    else:
        pack_nfstime(p.u32(SET_TO_CLIENT_TIME), t)


def pack_sattr3(p: Packer, a: Sattr3 | None) -> Packer:
    a = a or Sattr3()
    for v in (a.mode, a.uid, a.gid):
        if v is None:
            p.boolean(False)
        else:
            p.boolean(True).u32(v)
    if a.size is None:
        p.boolean(False)
    else:
        p.boolean(True).u64(a.size)
    _pack_set_time(p, a.atime)
    _pack_set_time(p, a.mtime)
    return p


def pack_diropargs(p: Packer, dir_fh: bytes, name: Name) -> Packer:
    return p.opaque(dir_fh).opaque(_name(name))


def setattr_args(fh: bytes, attrs: Sattr3, guard_ctime_ns: int | None = None) -> bytes:
    """guard_ctime_ns: the sattrguard3 (NFS3ERR_NOT_SYNC unless the ctime matches)."""
    p = pack_sattr3(Packer().opaque(fh), attrs)
    if guard_ctime_ns is None:
        p.boolean(False)
    else:
        pack_nfstime(p.boolean(True), guard_ctime_ns)
    return p.bytes()


def lookup_args(dir_fh: bytes, name: Name) -> bytes:
    return pack_diropargs(Packer(), dir_fh, name).bytes()


def readlink_args(fh: bytes) -> bytes:
    return fh_args(fh)


def create_args(dir_fh: bytes, name: Name, how: int = UNCHECKED, attrs: Sattr3 | None = None,
                verf: bytes = b"") -> bytes:
    """UNCHECKED and GUARDED carry attrs; EXCLUSIVE carries the 8-byte verf."""
    p = pack_diropargs(Packer(), dir_fh, name).u32(how)
    if how == EXCLUSIVE:
        assert len(verf) == NFS3_CREATEVERFSIZE, "createverf3 is 8 bytes"
        p.fixed(verf)
    else:
        pack_sattr3(p, attrs)
    return p.bytes()


def mkdir_args(dir_fh: bytes, name: Name, attrs: Sattr3 | None = None) -> bytes:
    return pack_sattr3(pack_diropargs(Packer(), dir_fh, name), attrs).bytes()


def symlink_args(dir_fh: bytes, name: Name, target: Name, attrs: Sattr3 | None = None) -> bytes:
    p = pack_sattr3(pack_diropargs(Packer(), dir_fh, name), attrs)
    return p.opaque(_name(target)).bytes()


def mknod_args(dir_fh: bytes, name: Name, ftype: int, attrs: Sattr3 | None = None,
               rdev: tuple[int, int] = (0, 0)) -> bytes:
    """mknoddata3: CHR and BLK carry attributes and (major, minor); SOCK and
    FIFO attributes; any other type nothing."""
    p = pack_diropargs(Packer(), dir_fh, name).u32(ftype)
    if ftype in (NF3CHR, NF3BLK):
        pack_sattr3(p, attrs).u32(rdev[0]).u32(rdev[1])
    elif ftype in (NF3SOCK, NF3FIFO):
        pack_sattr3(p, attrs)
    return p.bytes()


def remove_args(dir_fh: bytes, name: Name) -> bytes:
    return pack_diropargs(Packer(), dir_fh, name).bytes()


rmdir_args = remove_args


def rename_args(from_dir: bytes, from_name: Name, to_dir: bytes, to_name: Name) -> bytes:
    p = pack_diropargs(Packer(), from_dir, from_name)
    return pack_diropargs(p, to_dir, to_name).bytes()


def link_args(fh: bytes, dir_fh: bytes, name: Name) -> bytes:
    return pack_diropargs(Packer().opaque(fh), dir_fh, name).bytes()


def readdir_args(dir_fh: bytes, cookie: int = 0, cookieverf: bytes = bytes(8),
                 count: int = 8192) -> bytes:
    assert len(cookieverf) == NFS3_COOKIEVERFSIZE
    return Packer().opaque(dir_fh).u64(cookie).fixed(cookieverf).u32(count).bytes()


def readdirplus_args(dir_fh: bytes, cookie: int = 0, cookieverf: bytes = bytes(8),
                     dircount: int = 8192, maxcount: int = 32768) -> bytes:
    assert len(cookieverf) == NFS3_COOKIEVERFSIZE
    p = Packer().opaque(dir_fh).u64(cookie).fixed(cookieverf)
    return p.u32(dircount).u32(maxcount).bytes()


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


def decode_post_op_fh(u: Unpacker) -> bytes | None:
    return u.opaque(NFS3_FHSIZE) if u.boolean() else None


def decode_setattr(u: Unpacker) -> SetattrRes:
    res = SetattrRes(u.u32(), decode_wcc_data(u))
    u.done()
    return res


def decode_lookup(u: Unpacker) -> LookupRes:
    res = LookupRes(u.u32())
    if res.status == NFS3_OK:
        res.fh = u.opaque(NFS3_FHSIZE)
        res.attrs = decode_post_op_attr(u)
    res.dir_attrs = decode_post_op_attr(u)
    u.done()
    return res


def decode_readlink(u: Unpacker) -> ReadlinkRes:
    res = ReadlinkRes(u.u32(), decode_post_op_attr(u))
    if res.status == NFS3_OK:
        res.target = u.opaque(NFS3_MAXPATHLEN)
    u.done()
    return res


def decode_create(u: Unpacker) -> CreateRes:
    """CREATE3res, MKDIR3res, SYMLINK3res and MKNOD3res share one layout."""
    res = CreateRes(u.u32())
    if res.status == NFS3_OK:
        res.fh = decode_post_op_fh(u)
        res.attrs = decode_post_op_attr(u)
    res.dir_wcc = decode_wcc_data(u)
    u.done()
    return res


def decode_remove(u: Unpacker) -> RemoveRes:
    res = RemoveRes(u.u32(), decode_wcc_data(u))
    u.done()
    return res


def decode_rename(u: Unpacker) -> RenameRes:
    res = RenameRes(u.u32(), decode_wcc_data(u), decode_wcc_data(u))
    u.done()
    return res


def decode_link(u: Unpacker) -> LinkRes:
    res = LinkRes(u.u32(), decode_post_op_attr(u), decode_wcc_data(u))
    u.done()
    return res


def _decode_dirlist(u: Unpacker, res: ReaddirRes, plus: bool) -> ReaddirRes:
    res.dir_attrs = decode_post_op_attr(u)
    if res.status == NFS3_OK:
        res.cookieverf = u.fixed(NFS3_COOKIEVERFSIZE)
        while u.boolean():
            e = Entry3(fileid=u.u64(), name=u.opaque(NFS3_MAXNAMLEN), cookie=u.u64())
            if plus:
                e.attrs = decode_post_op_attr(u)
                e.fh = decode_post_op_fh(u)
            res.entries.append(e)
        res.eof = u.boolean()
    u.done()
    return res


def decode_readdir(u: Unpacker) -> ReaddirRes:
    return _decode_dirlist(u, ReaddirRes(u.u32()), plus=False)


def decode_readdirplus(u: Unpacker) -> ReaddirRes:
    return _decode_dirlist(u, ReaddirRes(u.u32()), plus=True)


# Each procedure's arguments and decoder, for pipelined calls.
DECODERS: dict[int, Callable[[Unpacker], object]] = {
    PROC_GETATTR: decode_getattr, PROC_SETATTR: decode_setattr, PROC_LOOKUP: decode_lookup,
    PROC_ACCESS: decode_access, PROC_READLINK: decode_readlink, PROC_READ: decode_read,
    PROC_WRITE: decode_write, PROC_CREATE: decode_create, PROC_MKDIR: decode_create,
    PROC_SYMLINK: decode_create, PROC_MKNOD: decode_create, PROC_REMOVE: decode_remove,
    PROC_RMDIR: decode_remove, PROC_RENAME: decode_rename, PROC_LINK: decode_link,
    PROC_READDIR: decode_readdir, PROC_READDIRPLUS: decode_readdirplus,
    PROC_FSSTAT: decode_fsstat, PROC_FSINFO: decode_fsinfo, PROC_PATHCONF: decode_pathconf,
    PROC_COMMIT: decode_commit,
}


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

    # --- namespace procedures ----------------------------------------------

    def setattr(self, fh: bytes, attrs: Sattr3, guard_ctime_ns: int | None = None) -> SetattrRes:
        return decode_setattr(self.rpc.call(PROC_SETATTR, setattr_args(fh, attrs,
                                                                      guard_ctime_ns)))

    def lookup(self, dir_fh: bytes, name: Name) -> LookupRes:
        return decode_lookup(self.rpc.call(PROC_LOOKUP, lookup_args(dir_fh, name)))

    def readlink(self, fh: bytes) -> ReadlinkRes:
        return decode_readlink(self.rpc.call(PROC_READLINK, readlink_args(fh)))

    def create(self, dir_fh: bytes, name: Name, how: int = UNCHECKED,
               attrs: Sattr3 | None = None, verf: bytes = b"") -> CreateRes:
        return decode_create(self.rpc.call(PROC_CREATE,
                                           create_args(dir_fh, name, how, attrs, verf)))

    def mkdir(self, dir_fh: bytes, name: Name, attrs: Sattr3 | None = None) -> CreateRes:
        return decode_create(self.rpc.call(PROC_MKDIR, mkdir_args(dir_fh, name, attrs)))

    def symlink(self, dir_fh: bytes, name: Name, target: Name,
                attrs: Sattr3 | None = None) -> CreateRes:
        return decode_create(self.rpc.call(PROC_SYMLINK,
                                           symlink_args(dir_fh, name, target, attrs)))

    def mknod(self, dir_fh: bytes, name: Name, ftype: int, attrs: Sattr3 | None = None,
              rdev: tuple[int, int] = (0, 0)) -> CreateRes:
        return decode_create(self.rpc.call(PROC_MKNOD,
                                           mknod_args(dir_fh, name, ftype, attrs, rdev)))

    def remove(self, dir_fh: bytes, name: Name) -> RemoveRes:
        return decode_remove(self.rpc.call(PROC_REMOVE, remove_args(dir_fh, name)))

    def rmdir(self, dir_fh: bytes, name: Name) -> RemoveRes:
        return decode_remove(self.rpc.call(PROC_RMDIR, rmdir_args(dir_fh, name)))

    def rename(self, from_dir: bytes, from_name: Name, to_dir: bytes, to_name: Name) -> RenameRes:
        return decode_rename(self.rpc.call(PROC_RENAME,
                                           rename_args(from_dir, from_name, to_dir, to_name)))

    def link(self, fh: bytes, dir_fh: bytes, name: Name) -> LinkRes:
        return decode_link(self.rpc.call(PROC_LINK, link_args(fh, dir_fh, name)))

    def readdir(self, dir_fh: bytes, cookie: int = 0, cookieverf: bytes = bytes(8),
                count: int = 8192) -> ReaddirRes:
        return decode_readdir(self.rpc.call(PROC_READDIR,
                                            readdir_args(dir_fh, cookie, cookieverf, count)))

    def readdirplus(self, dir_fh: bytes, cookie: int = 0, cookieverf: bytes = bytes(8),
                    dircount: int = 8192, maxcount: int = 32768) -> ReaddirRes:
        args = readdirplus_args(dir_fh, cookie, cookieverf, dircount, maxcount)
        return decode_readdirplus(self.rpc.call(PROC_READDIRPLUS, args))

    # --- pipelining ----------------------------------------------------------

    def pipeline(self, calls: Iterable[tuple[int, bytes]], depth: int = 32) -> list[object]:
        """Sends calls (procedure, argument bytes) keeping up to `depth` in
        flight on this connection; returns their decoded results in call
        order (replies may come in any order: matched by xid).  An RPC-level
        error raises, as for a single call."""
        pending: dict[int, tuple[int, int]] = {}   # xid -> (index, proc)
        results: list[object] = []
        it = iter(calls)
        exhausted = False
        while True:
            while not exhausted and len(pending) < depth:
                try:
                    proc, args = next(it)
                except StopIteration:
                    exhausted = True
                    break
                xid = self.rpc.next_xid()
                pending[xid] = (len(results), proc)
                results.append(None)
                self.rpc.send_record(encode_call(xid, self.rpc.prog, self.rpc.vers, proc, args,
                                                 self.rpc.cred))
            if not pending:
                return results
            record = self.rpc.recv_record()
            (xid,) = struct.unpack(">I", record[:4])
            if xid not in pending:
                raise XdrError(f"reply for xid {xid:#x}, which is not in flight")
            index, proc = pending.pop(xid)
            results[index] = DECODERS[proc](Unpacker(decode_reply(record).body))

    # --- multi-call helpers (these raise Nfs3StatusError) --------------------

    def readdir_all(self, dir_fh: bytes, count: int = 8192, plus: bool = False,
                    max_calls: int = 1 << 20) -> list[Entry3]:
        """Every entry (with "." and ".."), page by page, each call sending
        the cookie of the last entry and the verifier of the last reply."""
        entries: list[Entry3] = []
        cookie, verf = 0, bytes(8)
        for _ in range(max_calls):
            res = (self.readdirplus(dir_fh, cookie, verf, count, count * 4) if plus
                   else self.readdir(dir_fh, cookie, verf, count))
            if res.status != NFS3_OK:
                raise Nfs3StatusError(f"READDIR{'PLUS' if plus else ''} after cookie {cookie}",
                                      res.status)
            entries.extend(res.entries)
            verf = res.cookieverf
            if res.eof:
                return entries
            if not res.entries:
                raise Nfs3StatusError(f"READDIR after cookie {cookie}: no entries and no eof",
                                      res.status)
            cookie = res.entries[-1].cookie
        raise Nfs3StatusError(f"READDIR: no eof after {max_calls} calls", NFS3_OK)

    def lookup_fh(self, dir_fh: bytes, name: Name) -> bytes:
        res = self.lookup(dir_fh, name)
        if res.status != NFS3_OK:
            raise Nfs3StatusError(f"LOOKUP {name!r}", res.status)
        return res.fh

    def write_all(self, fh: bytes, offset: int, data: bytes, stable: int = FILE_SYNC,
                  chunk: int = 65536) -> bytes:
        """Writes data in chunk-sized WRITEs, resending what a short write
        left; returns the last write verifier."""
        verf = b""
        done = 0
        while done < len(data):
            part = data[done:done + chunk]
            res = self.write(fh, offset + done, part, stable)
            if res.status != NFS3_OK:
                raise Nfs3StatusError(f"WRITE at {offset + done}", res.status)
            if res.count == 0 or res.count > len(part):
                raise Nfs3StatusError(f"WRITE at {offset + done}: count {res.count} "
                                      f"for {len(part)} bytes", res.status)
            done += res.count
            verf = res.verf
        return verf

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
