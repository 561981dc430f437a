"""OSD control protocol client (osd-target/proto/osd_ctl.x) for the tests.

Every call is signed with AUTH_PANDO (version 2: the target's control key,
a MAC over the header, credential and arguments, a nonce of its own) and
every reply's verifier, a MAC over its results, is checked, as the C
client library does; the argument encoders are plain functions and
`call_raw` takes any credential, so tests can also send calls that are
deliberately wrong.
"""
from __future__ import annotations

import builtins
import enum
import hashlib
import hmac
import os
import socket
import struct
import time
from dataclasses import dataclass, field, fields

from .daemons import OsdProcess
from .keys import ClusterKey
from .oncrpc import SUCCESS, Auth, Reply, RpcAccepted, RpcClient, RpcError
from .pod import Pod
from .xdr import Packer, Unpacker

PROG = 0x20504E44
VERS = 1
# "PAND"; the decimal in osd_ctl.x's const does not match its own comment,
# ctl_auth.h (CTL_AUTH_FLAVOR) is what the daemon uses.
AUTH_PANDO = 0x50414E44
MAX_DATA = 1 << 20
MAX_BATCH = 4096
MAX_ATTRS = 256
MAX_ATTR_LEN = 1024
MAX_SKEW_S = 300
AUTH_VERSION = 2
USER_PAGE_MIN = 0x10000


class Proc(enum.IntEnum):
    NULL = 0
    FORMAT = 1
    STATFS = 2
    CREATE_PARTITION = 3
    REMOVE_PARTITION = 4
    CREATE_OBJECTS = 5
    REMOVE_OBJECTS = 6
    READ = 7
    WRITE = 8
    GETATTR = 9
    SETATTR = 10
    LIST = 11
    FLUSH = 12
    SET_CAP_VERSION = 13
    STATS = 14
    REVOKE_WRITERS = 16


class Status(enum.IntEnum):
    OK = 0
    NOENT = 2
    IO = 5
    ACCES = 13
    EXIST = 17
    INVAL = 22
    FBIG = 27
    NOSPC = 28
    NOTEMPTY = 39
    SERVERFAULT = 10006


class Stable(enum.IntEnum):
    UNSTABLE = 0
    DATA_SYNC = 1
    FILE_SYNC = 2


class Info(enum.IntEnum):
    """Attribute numbers of page 1 (osd-target/README.md)."""
    LENGTH = 1
    MTIME = 2
    CTIME = 3
    CREATED = 4
    OWNER = 5
    COMPONENT = 6
    CAP_VERSION = 7
    USED = 8
    READ_FLOOR = 9


INFO_WIDTH = {Info.COMPONENT: 4, Info.CAP_VERSION: 4, Info.READ_FLOOR: 4}


class BadReplyVerifier(RpcError):
    """The reply's verifier is not the MAC over its results that only the
    holder of the target's key can compute."""


# ---- AUTH_PANDO --------------------------------------------------------------

def _mac(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"".join(parts), hashlib.sha256).digest()


def ctl_key(secret: bytes, osd_id: int) -> bytes:
    """A target's control key: HMAC-SHA256(cluster secret, "pando-ctl osd N")."""
    return _mac(secret, b"pando-ctl osd %d" % osd_id)


@dataclass
class Signer:
    """Signs calls as the osd_ctl.x header comment specifies, for target
    `osd_id` (with its control key unless `ctl_key` is given, to forge)."""
    key_id: int
    secret: bytes                # the cluster secret
    osd_id: int
    skew_s: int = 0              # added to our clock, to test the skew check
    ctl_key: bytes = b""
    next_nonce: int = field(default_factory=lambda: struct.unpack(">Q", os.urandom(8))[0])

    def __post_init__(self) -> None:
        if not self.ctl_key:
            self.ctl_key = ctl_key(self.secret, self.osd_id)

    @classmethod
    def for_key(cls, key: ClusterKey, osd_id: int) -> "Signer":
        return cls(key.key_id, key.secret, osd_id)

    def nonce(self) -> int:
        """A nonce of its own for every call (a random start, counted up)."""
        n = self.next_nonce
        self.next_nonce = (n + 1) & 0xFFFFFFFFFFFFFFFF
        return n

    def cred_body(self, nonce: int) -> bytes:
        return struct.pack(">IIIQQ", AUTH_VERSION, self.key_id, self.osd_id,
                           int(time.time()) + self.skew_s, nonce)

    def verf_body(self, xid: int, prog: int, vers: int, proc: int, cred: bytes,
                  args: bytes) -> bytes:
        """The header's tag (16 bytes), then the MAC over the whole call."""
        head = struct.pack(">IIII", xid, prog, vers, proc) + cred
        return (_mac(self.ctl_key, b"pando-ctl-hdr", head)[:16] +
                _mac(self.ctl_key, b"pando-ctl-call", head, args))

    def sign(self, xid: int, proc: int, args: bytes = b"", prog: int = PROG,
             vers: int = VERS) -> tuple[Auth, Auth, int]:
        """(credential, verifier, nonce) for one call with these arguments."""
        nonce = self.nonce()
        cred = self.cred_body(nonce)
        verf = self.verf_body(xid, prog, vers, proc, cred, args)
        return Auth(AUTH_PANDO, cred), Auth(AUTH_PANDO, verf), nonce

    def reply_verf(self, xid: int, nonce: int, accept_stat: int, results: bytes) -> bytes:
        return _mac(self.ctl_key, b"pando-ctl-reply", struct.pack(">IQI", xid, nonce, accept_stat),
                    results)


# ---- argument encoders (one per procedure) ------------------------------------

def obj_id(p: Packer, partition: int, obj: int) -> Packer:
    return p.u64(partition).u64(obj)


def args_format(uuid: bytes) -> bytes:
    return Packer().fixed(uuid).bytes()


def args_partition(partition: int) -> bytes:
    return Packer().u64(partition).bytes()


@dataclass
class CreateItem:
    object: int = 0              # 0: the target picks
    owner_file: int = 0
    component: int = 0
    cap_version: int = 0


def args_create(partition: int, items: list[CreateItem]) -> bytes:
    p = Packer().u64(partition).u32(len(items))
    for it in items:
        p.u64(it.object).u64(it.owner_file).u32(it.component).u32(it.cap_version)
    return p.bytes()


def args_remove(partition: int, objects: list[int]) -> bytes:
    p = Packer().u64(partition).u32(len(objects))
    for o in objects:
        p.u64(o)
    return p.bytes()


def args_read(partition: int, obj: int, offset: int, count: int) -> bytes:
    return obj_id(Packer(), partition, obj).u64(offset).u32(count).bytes()


def args_write(partition: int, obj: int, offset: int, data: bytes,
               stable: int = Stable.UNSTABLE) -> bytes:
    return obj_id(Packer(), partition, obj).u64(offset).u32(stable).opaque(data).bytes()


def args_getattr(partition: int, obj: int, keys: list[tuple[int, int]]) -> bytes:
    p = obj_id(Packer(), partition, obj).u32(len(keys))
    for page, number in keys:
        p.u32(page).u32(number)
    return p.bytes()


def args_setattr(partition: int, obj: int, attrs: list[tuple[int, int, bytes]]) -> bytes:
    p = obj_id(Packer(), partition, obj).u32(len(attrs))
    for page, number, value in attrs:
        p.u32(page).u32(number).opaque(value)
    return p.bytes()


def args_list(partition: int, after: int = 0, max_ids: int = 0) -> bytes:
    return Packer().u64(partition).u64(after).u32(max_ids).bytes()


def args_flush(partition: int, obj: int) -> bytes:
    return obj_id(Packer(), partition, obj).bytes()


def args_setcap(partition: int, obj: int, version: int) -> bytes:
    return obj_id(Packer(), partition, obj).u32(version).bytes()


def info_value(number: int, value: int) -> bytes:
    """A page-1 attribute value: big-endian, of the attribute's width."""
    return value.to_bytes(INFO_WIDTH.get(Info(number), 8), "big")


# ---- results --------------------------------------------------------------------

@dataclass
class StatFs:
    uuid: bytes
    osd_id: int
    key_id: int
    total_bytes: int
    free_bytes: int
    partitions: int
    objects: int
    created_ns: int


@dataclass
class Stats:
    """STATS: the I/O counters since the target started, in osd_ctl.x's
    order (which is also the order `pando-osd-tool stat` prints them)."""
    started_ns: int
    nfs_read_ops: int
    nfs_read_bytes: int
    nfs_write_ops: int
    nfs_write_bytes: int
    nfs_write_unstable: int
    nfs_write_data_sync: int
    nfs_write_file_sync: int
    nfs_commit_ops: int
    nfs_err_rejected: int
    nfs_err_io: int
    nfs_err_other: int
    ctl_read_ops: int
    ctl_read_bytes: int
    ctl_write_ops: int
    ctl_write_bytes: int

    def counters(self) -> dict[str, int]:
        """Every counter by name (all but started_ns)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "started_ns"}


@dataclass
class ReadResult:
    status: Status
    eof: bool = False
    data: bytes = b""


@dataclass
class WriteResult:
    status: Status
    count: int = 0
    verifier: bytes = b""


@dataclass
class ListResult:
    status: Status
    ids: list[int] = field(default_factory=list)
    eof: bool = False


@dataclass
class Attr:
    page: int
    number: int
    value: bytes

    def as_int(self) -> int:
        return int.from_bytes(self.value, "big")


class OsdCtlError(Exception):
    def __init__(self, what: str, status: int) -> None:
        super().__init__(f"{what}: {Status(status).name}")
        self.status = Status(status)


def _ok(what: str, status: int) -> None:
    if status != Status.OK:
        raise OsdCtlError(what, status)


class OsdCtl:
    """One connection to a target's control port."""

    def __init__(self, sock: socket.socket, signer: Signer | None) -> None:
        self.rpc = RpcClient(sock, PROG, VERS)
        self.signer = signer

    @classmethod
    def open(cls, pod: Pod, host: str, port: int, signer: Signer | None) -> "OsdCtl":
        return cls(pod.connect(host, port), signer)

    def close(self) -> None:
        self.rpc.close()

    def __enter__(self) -> "OsdCtl":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- raw access

    def call_raw(self, proc: int, args: bytes = b"", cred: Auth | None = None,
                 verf: Auth | None = None, xid: int | None = None,
                 vers: int = VERS) -> Reply:
        """A call with exactly the credential given (AUTH_NONE by default)."""
        saved, self.rpc.vers = self.rpc.vers, vers
        try:
            return self.rpc.call_raw(proc, args, cred=cred or Auth(), verf=verf, xid=xid)
        finally:
            self.rpc.vers = saved

    def check_reply(self, xid: int, nonce: int, verf: Auth, accept_stat: int,
                    results: bytes) -> None:
        """Raises BadReplyVerifier unless verf is the target's MAC over the
        reply's accept_stat and results."""
        assert self.signer is not None, "no key to check with"
        want = self.signer.reply_verf(xid, nonce, accept_stat, results)
        if verf.flavor != AUTH_PANDO or not hmac.compare_digest(verf.body, want):
            raise BadReplyVerifier(f"reply verifier {verf} for xid {xid:#x}")

    def call_signed(self, proc: int, args: bytes = b"", vers: int = VERS) -> Reply:
        """A signed call whose reply verifier is checked (that of a reply
        other than SUCCESS too, before it is raised)."""
        assert self.signer is not None, "no key to sign with"
        xid = self.rpc.next_xid()
        cred, verf, nonce = self.signer.sign(xid, proc, args, vers=vers)
        try:
            reply = self.call_raw(proc, args, cred=cred, verf=verf, xid=xid, vers=vers)
        except RpcAccepted as e:
            self.check_reply(xid, nonce, e.verf, e.stat, e.body)
            raise
        self.check_reply(xid, nonce, reply.verf, SUCCESS, reply.body)
        return reply

    def call(self, proc: int, args: bytes = b"") -> Unpacker:
        return Unpacker(self.call_signed(proc, args).body)

    def _status_only(self, proc: Proc, args: bytes) -> Status:
        u = self.call(proc, args)
        status = Status(u.u32())
        u.done()
        return status

    # -- procedures

    def null(self) -> None:
        self.call(Proc.NULL).done()

    def statfs(self) -> StatFs:
        u = self.call(Proc.STATFS)
        _ok("STATFS", u.u32())
        st = StatFs(u.fixed(16), u.u32(), u.u32(), u.u64(), u.u64(), u.u64(), u.u64(), u.u64())
        u.done()
        return st

    def stats(self) -> Stats:
        u = self.call(Proc.STATS)
        _ok("STATS", u.u32())
        st = Stats(*(u.u64() for _ in fields(Stats)))
        u.done()
        return st

    def format(self, uuid: bytes) -> Status:
        return self._status_only(Proc.FORMAT, args_format(uuid))

    def create_partition(self, partition: int) -> Status:
        return self._status_only(Proc.CREATE_PARTITION, args_partition(partition))

    def remove_partition(self, partition: int) -> Status:
        return self._status_only(Proc.REMOVE_PARTITION, args_partition(partition))

    def create_objects(self, partition: int,
                       items: list[CreateItem]) -> tuple[Status, list[tuple[Status, int]]]:
        u = self.call(Proc.CREATE_OBJECTS, args_create(partition, items))
        status = Status(u.u32())
        results = []
        if status == Status.OK:
            results = [(Status(u.u32()), u.u64()) for _ in range(u.u32())]
        u.done()
        return status, results

    def create(self, partition: int, *objects: int) -> list[int]:
        """Creates objects (0: picked) that must all succeed; their ids."""
        status, results = self.create_objects(partition, [CreateItem(o) for o in objects])
        _ok("CREATE_OBJECTS", status)
        for st, oid in results:
            _ok(f"create {partition}.{oid}", st)
        return [oid for _, oid in results]

    def remove_objects(self, partition: int,
                       objects: list[int]) -> tuple[Status, list[Status]]:
        u = self.call(Proc.REMOVE_OBJECTS, args_remove(partition, objects))
        status = Status(u.u32())
        results = []
        if status == Status.OK:
            results = [Status(u.u32()) for _ in range(u.u32())]
        u.done()
        return status, results

    def read(self, partition: int, obj: int, offset: int, count: int) -> ReadResult:
        u = self.call(Proc.READ, args_read(partition, obj, offset, count))
        status = Status(u.u32())
        if status != Status.OK:
            u.done()
            return ReadResult(status)
        eof = u.boolean()
        data = u.opaque(MAX_DATA)
        u.done()
        return ReadResult(status, eof, data)

    def read_all(self, partition: int, obj: int, chunk: int = MAX_DATA) -> bytes:
        parts, off = [], 0
        while True:
            r = self.read(partition, obj, off, chunk)
            _ok("READ", r.status)
            parts.append(r.data)
            off += len(r.data)
            if r.eof:
                return b"".join(parts)
            assert r.data, "short read without eof"

    def write(self, partition: int, obj: int, offset: int, data: bytes,
              stable: int = Stable.UNSTABLE) -> WriteResult:
        u = self.call(Proc.WRITE, args_write(partition, obj, offset, data, stable))
        status = Status(u.u32())
        if status != Status.OK:
            u.done()
            return WriteResult(status)
        res = WriteResult(status, u.u32(), u.fixed(8))
        u.done()
        return res

    def getattr(self, partition: int, obj: int,
                keys: list[tuple[int, int]] | None = None) -> tuple[Status, list[Attr]]:
        u = self.call(Proc.GETATTR, args_getattr(partition, obj, keys or []))
        status = Status(u.u32())
        attrs = []
        if status == Status.OK:
            attrs = [Attr(u.u32(), u.u32(), u.opaque(MAX_ATTR_LEN)) for _ in range(u.u32())]
        u.done()
        return status, attrs

    def info(self, partition: int, obj: int) -> dict[Info, int]:
        """Page 1 as a dict."""
        status, attrs = self.getattr(partition, obj, [(1, int(n)) for n in Info])
        _ok("GETATTR", status)
        return {Info(a.number): a.as_int() for a in attrs}

    def setattr(self, partition: int, obj: int,
                attrs: list[tuple[int, int, bytes]]) -> tuple[Status, int]:
        u = self.call(Proc.SETATTR, args_setattr(partition, obj, attrs))
        res = Status(u.u32()), u.u32()
        u.done()
        return res

    def list(self, partition: int, after: int = 0, max_ids: int = 0) -> ListResult:
        u = self.call(Proc.LIST, args_list(partition, after, max_ids))
        status = Status(u.u32())
        if status != Status.OK:
            u.done()
            return ListResult(status)
        ids = [u.u64() for _ in range(u.u32())]
        res = ListResult(status, ids, u.boolean())
        u.done()
        return res

    # builtins.list: the method list() above hides the builtin in this class.
    def list_all(self, partition: int, page: int = 0) -> builtins.list[int]:
        ids: builtins.list[int] = []
        while True:
            r = self.list(partition, ids[-1] if ids else 0, page)
            _ok("LIST", r.status)
            ids += r.ids
            if r.eof:
                return ids
            assert r.ids, "empty page without eof"

    def flush(self, partition: int = 0, obj: int = 0) -> Status:
        return self._status_only(Proc.FLUSH, args_flush(partition, obj))

    def set_cap_version(self, partition: int, obj: int, version: int) -> tuple[Status, int]:
        """A fence: the version and the read floor to `version`; the old version."""
        u = self.call(Proc.SET_CAP_VERSION, args_setcap(partition, obj, version))
        res = Status(u.u32()), u.u32()
        u.done()
        return res

    def revoke_writers(self, partition: int, obj: int, version: int) -> tuple[Status, int]:
        """The version (not the read floor) up to `version`; the old version."""
        u = self.call(Proc.REVOKE_WRITERS, args_setcap(partition, obj, version))
        res = Status(u.u32()), u.u32()
        u.done()
        return res


def open_ctl(pod: Pod, osd: OsdProcess, key: ClusterKey | Signer | None = None) -> OsdCtl:
    """A control connection to a target, signed with its control key (under
    its cluster key unless another key or a signer is given)."""
    if isinstance(key, Signer):
        return OsdCtl.open(pod, osd.host, osd.ctl_port, key)
    return OsdCtl.open(pod, osd.host, osd.ctl_port,
                       Signer.for_key(key if key is not None else osd.key, osd.osd_id))
