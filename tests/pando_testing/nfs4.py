"""A small NFSv4.1 client (RFC 8881) for protocol tests: one session, one
slot, AUTH_SYS; COMPOUNDs built op by op.  No back channel unless asked
for (`back_channel=True`), and then one it never answers: a test uses it
to be a client the server calls back in vain (RpcClient.ignored_calls).

It speaks only what the tests of the layout state machine and of
reclaim need (OPEN, LOCK, LAYOUTGET, LAYOUTRETURN, LAYOUTCOMMIT, CLOSE and
what leads to them) and returns every op's status, so that a test can
assert an exact error.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Callable

from pando_testing.oncrpc import RpcClient, auth_sys
from pando_testing.xdr import Packer, Unpacker

NFS_PROGRAM = 100003
NFS_V4 = 4
COMPOUND = 1

OP_CLOSE = 4
OP_GETATTR = 9
OP_GETFH = 10
OP_LOCK = 12
OP_LOOKUP = 15
OP_OPEN = 18
OP_PUTFH = 22
OP_PUTROOTFH = 24
OP_EXCHANGE_ID = 42
OP_CREATE_SESSION = 43
OP_LAYOUTCOMMIT = 49
OP_LAYOUTGET = 50
OP_LAYOUTRETURN = 51
OP_SEQUENCE = 53
OP_RECLAIM_COMPLETE = 58

NFS4_OK = 0
NFS4ERR_ACCESS = 13
NFS4ERR_INVAL = 22
NFS4ERR_ROFS = 30
NFS4ERR_BAD_STATEID = 10025
NFS4ERR_BADIOMODE = 10049
NFS4ERR_OLD_STATEID = 10024
NFS4ERR_BADLAYOUT = 10050
NFS4ERR_GRACE = 10013
NFS4ERR_DENIED = 10010
NFS4ERR_NO_GRACE = 10033
NFS4ERR_RECLAIM_BAD = 10034
NFS4ERR_LAYOUTTRYLATER = 10058
NFS4ERR_LAYOUTUNAVAILABLE = 10059

LAYOUT4_FLEX_FILES = 4
IOMODE_READ = 1
IOMODE_RW = 2
IOMODE_ANY = 3
EOF = 0xFFFFFFFFFFFFFFFF

CREATE_SESSION4_FLAG_CONN_BACK_CHAN = 0x2

OPEN4_SHARE_ACCESS_READ = 1
OPEN4_SHARE_ACCESS_BOTH = 3
OPEN4_SHARE_ACCESS_WANT_NO_DELEG = 0x0400
CLAIM_PREVIOUS = 1
OPEN_DELEGATE_NONE = 0
WRITE_LT = 2
FATTR4_SIZE = 4
FATTR4_MODE = 33
FATTR4_MDSTHRESHOLD = 68


@dataclass(frozen=True)
class Stateid:
    seqid: int
    other: bytes

    def pack(self, p: Packer) -> None:
        p.u32(self.seqid).fixed(self.other)

    @staticmethod
    def unpack(u: Unpacker) -> "Stateid":
        return Stateid(u.u32(), u.fixed(12))

    def with_seqid(self, seqid: int) -> "Stateid":
        return Stateid(seqid, self.other)


class Nfs4Error(Exception):
    def __init__(self, op: int, status: int) -> None:
        super().__init__(f"op {op}: NFS4 status {status}")
        self.op, self.status = op, status


@dataclass
class Op:
    """One op of a COMPOUND: its number, its encoded arguments and how to
    read its result body when its status is NFS4_OK."""
    num: int
    args: bytes
    result: Callable[[Unpacker], object] = lambda u: None


@dataclass
class Reply:
    status: int
    results: list[tuple[int, int, object]] = field(default_factory=list)   # (op, status, body)

    def last(self) -> tuple[int, object]:
        _, status, body = self.results[-1]
        return status, body


@dataclass
class Layout:
    return_on_close: bool
    stateid: Stateid
    segments: list[tuple[int, int, int]]     # (offset, length, iomode)
    bodies: list[bytes] = field(default_factory=list)   # each segment's ff_layout4


def _layoutget_result(u: Unpacker) -> Layout:
    lo = Layout(u.boolean(), Stateid.unpack(u), [])
    for _ in range(u.u32()):
        off, length, mode = u.u64(), u.u64(), u.u32()
        u.u32()                 # layout type
        lo.segments.append((off, length, mode))
        lo.bodies.append(u.opaque())
    return lo


@dataclass
class FfDataServer:
    device_id: bytes
    handles: list[bytes]        # ffds_fh_vers: Pando's capabilities
    user: str                   # ffds_user: the uid the handles answer (their holder)
    group: str


def ff_data_servers(body: bytes) -> list[FfDataServer]:
    """The data servers of a flexfiles layout body (RFC 8435 5.1), every
    one of every mirror in order."""
    u = Unpacker(body)
    u.u64()                     # ffl_stripe_unit
    out = []
    for _ in range(u.u32()):    # ffl_mirrors
        for _ in range(u.u32()):    # ffm_data_servers
            devid = u.fixed(16)
            u.u32()             # ffds_efficiency
            Stateid.unpack(u)
            handles = [u.opaque() for _ in range(u.u32())]
            user, group = u.opaque().decode(), u.opaque().decode()
            out.append(FfDataServer(devid, handles, user, group))
    return out


def ff_device_ids(body: bytes) -> list[bytes]:
    """The device ids of a flexfiles layout body, in order."""
    return [ds.device_id for ds in ff_data_servers(body)]


def ff_ioerr_body(offset: int, length: int, stateid: Stateid,
                  errors: list[tuple[bytes, int, int]]) -> bytes:
    """A flexfiles LAYOUTRETURN body (ff_layoutreturn4, RFC 8435 9.3) with
    one ff_ioerr4 of (device id, nfsstat4, nfs_opnum4) errors and no
    stats."""
    p = Packer().u32(1).u64(offset).u64(length)
    stateid.pack(p)
    p.u32(len(errors))
    for devid, status, opnum in errors:
        p.fixed(devid).u32(status).u32(opnum)
    return p.u32(0).bytes()


def _layoutreturn_result(u: Unpacker) -> Stateid | None:
    return Stateid.unpack(u) if u.boolean() else None


def _open_result(u: Unpacker) -> Stateid:
    sid = Stateid.unpack(u)
    u.boolean()
    u.u64()
    u.u64()                     # change_info4
    u.u32()                     # rflags
    for _ in range(u.u32()):
        u.u32()                 # attrset
    deleg = u.u32()
    if deleg == 3:              # OPEN_DELEGATE_NONE_EXT: why, and for two whys a bool
        if u.u32() in (1, 2):
            u.boolean()
    elif deleg != 0:
        raise AssertionError(f"OPEN granted a delegation ({deleg}); the tests ask for none")
    return sid


class Nfs4Client:
    """One NFSv4.1 client id and session over one TCP connection."""

    def __init__(self, sock: socket.socket, uid: int = 0, gid: int = 0,
                 name: str | None = None, verifier: bytes | None = None,
                 back_channel: bool = False, rpc: RpcClient | None = None) -> None:
        """`name` and `verifier` (8 bytes) make the client id: the same
        pair is the same client come back, one allowed to reclaim.
        `back_channel`: the session's connection carries its back channel
        too (CREATE_SESSION4_FLAG_CONN_BACK_CHAN), so the server sends its
        callbacks (CB_LAYOUTRECALL) there.  `rpc`: calls go through it, an
        RPC client over sock with other credentials (rpcsec_gss), instead
        of AUTH_SYS as uid and gid."""
        self.rpc = rpc or RpcClient(sock, NFS_PROGRAM, NFS_V4, auth_sys(uid, gid))
        self.back_channel = back_channel
        self.owner = (name or f"pando-test-{os.getpid()}-{id(self)}").encode()
        self.verifier = verifier or os.urandom(8)
        self.clientid = 0
        self.session = b""
        self.slot_seq = 0
        self._exchange_id()
        self._create_session()

    def close(self) -> None:
        self.rpc.close()

    def __enter__(self) -> "Nfs4Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- COMPOUND ----------------------------------------------------------------

    def compound(self, ops: list[Op], sequence: bool = True) -> Reply:
        if sequence:
            self.slot_seq += 1
            seq = Packer().fixed(self.session).u32(self.slot_seq).u32(0).u32(0).boolean(False)
            ops = [Op(OP_SEQUENCE, seq.bytes(), lambda u: u.fixed(16 + 4 * 5)), *ops]
        p = Packer().string("").u32(1).u32(len(ops))
        for op in ops:
            p.u32(op.num).raw(op.args)
        u = self.rpc.call(COMPOUND, p.bytes())
        reply = Reply(u.u32())
        u.opaque()              # tag
        for i in range(u.u32()):
            num, status = u.u32(), u.u32()
            assert num == ops[i].num, f"result {i} is op {num}, sent {ops[i].num}"
            body = ops[i].result(u) if status == NFS4_OK else None
            if num == OP_LAYOUTGET and status == NFS4ERR_LAYOUTTRYLATER:
                u.boolean()     # logr_will_signal_layout_avail
            reply.results.append((num, status, body))
        if sequence:
            reply.results.pop(0)
        return reply

    def _exchange_id(self) -> None:
        args = (Packer().fixed(self.verifier).opaque(self.owner).u32(0).u32(0).u32(0))

        def result(u: Unpacker) -> int:
            clientid = u.u64()
            self.slot_seq = u.u32()
            return clientid
        r = self.compound([Op(OP_EXCHANGE_ID, args.bytes(), result)], sequence=False)
        status, body = r.last()
        if status != NFS4_OK:
            raise Nfs4Error(OP_EXCHANGE_ID, status)
        assert isinstance(body, int)
        self.clientid = body

    def _create_session(self) -> None:
        attrs = Packer().u32(0).u32(1 << 20).u32(1 << 20).u32(8192).u32(16).u32(1).u32(0)
        flags = CREATE_SESSION4_FLAG_CONN_BACK_CHAN if self.back_channel else 0
        args = (Packer().u64(self.clientid).u32(self.slot_seq).u32(flags)
                .raw(attrs.bytes()).raw(attrs.bytes()).u32(0x40000000).u32(1).u32(0))

        def result(u: Unpacker) -> tuple[bytes, int]:
            session = u.fixed(16)
            u.u32()             # csr_sequence
            return session, u.u32()
        r = self.compound([Op(OP_CREATE_SESSION, args.bytes(), result)], sequence=False)
        status, body = r.last()
        if status != NFS4_OK:
            raise Nfs4Error(OP_CREATE_SESSION, status)
        assert isinstance(body, tuple)
        self.session, granted = body
        if self.back_channel and not granted & CREATE_SESSION4_FLAG_CONN_BACK_CHAN:
            raise AssertionError("the server did not put the back channel on the connection")
        self.slot_seq = 0

    def reclaim_complete(self) -> int:
        return self.compound([Op(OP_RECLAIM_COMPLETE, Packer().boolean(False).bytes())]).last()[0]

    # ---- ops ---------------------------------------------------------------------

    @staticmethod
    def putfh(fh: bytes) -> Op:
        return Op(OP_PUTFH, Packer().opaque(fh).bytes())

    @staticmethod
    def putrootfh() -> Op:
        return Op(OP_PUTROOTFH, b"")

    @staticmethod
    def lookup(name: str) -> Op:
        return Op(OP_LOOKUP, Packer().string(name).bytes())

    @staticmethod
    def getfh() -> Op:
        return Op(OP_GETFH, b"", lambda u: u.opaque())

    def open_create(self, name: str, mode: int = 0o644,
                    access: int = OPEN4_SHARE_ACCESS_BOTH) -> Op:
        p = (Packer().u32(0).u32(access | OPEN4_SHARE_ACCESS_WANT_NO_DELEG).u32(0)
             .u64(self.clientid).opaque(self.owner)
             .u32(1).u32(0).u32(2).u32(0).u32(1 << (FATTR4_MODE - 32))
             .opaque(Packer().u32(mode).bytes())
             .u32(0).string(name))
        return Op(OP_OPEN, p.bytes(), _open_result)

    def open_existing(self, name: str, access: int = OPEN4_SHARE_ACCESS_READ) -> Op:
        """OPEN (NOCREATE, CLAIM_NULL) of `name` in the current directory."""
        p = (Packer().u32(0).u32(access | OPEN4_SHARE_ACCESS_WANT_NO_DELEG).u32(0)
             .u64(self.clientid).opaque(self.owner).u32(0).u32(0).string(name))
        return Op(OP_OPEN, p.bytes(), _open_result)

    def open_previous(self, access: int = OPEN4_SHARE_ACCESS_BOTH) -> Op:
        """OPEN (CLAIM_PREVIOUS) of the current file: the reclaim of an
        open this client held before the server restarted."""
        p = (Packer().u32(0).u32(access).u32(0).u64(self.clientid).opaque(self.owner)
             .u32(0).u32(CLAIM_PREVIOUS).u32(OPEN_DELEGATE_NONE))
        return Op(OP_OPEN, p.bytes(), _open_result)

    def lock_op(self, open_sid: Stateid, offset: int, length: int,
                reclaim: bool = False) -> Op:
        """LOCK (a write lock, a new lock owner) of the current file under
        its open stateid; its result is the lock stateid."""
        p = (Packer().u32(WRITE_LT).boolean(reclaim).u64(offset).u64(length)
             .boolean(True).u32(0))
        open_sid.pack(p)
        p.u32(0).u64(self.clientid).opaque(self.owner + b"-lock")
        return Op(OP_LOCK, p.bytes(), Stateid.unpack)

    @staticmethod
    def getattr(*attrs: int) -> Op:
        """GETATTR of the attribute numbers given; its result is the raw
        attribute values (fattr4's attrlist)."""
        words = [0] * (max(attrs) // 32 + 1)
        for a in attrs:
            words[a // 32] |= 1 << (a % 32)
        p = Packer().u32(len(words))
        for w in words:
            p.u32(w)

        def result(u: Unpacker) -> bytes:
            for _ in range(u.u32()):
                u.u32()
            return u.opaque()
        return Op(OP_GETATTR, p.bytes(), result)

    @staticmethod
    def layoutget(stateid: Stateid, iomode: int = IOMODE_RW, offset: int = 0,
                  length: int = EOF, minlength: int = 0) -> Op:
        p = Packer().boolean(False).u32(LAYOUT4_FLEX_FILES).u32(iomode).u64(offset).u64(length)
        p.u64(minlength)
        stateid.pack(p)
        p.u32(65536)
        return Op(OP_LAYOUTGET, p.bytes(), _layoutget_result)

    @staticmethod
    def layoutreturn(stateid: Stateid, iomode: int = IOMODE_ANY, offset: int = 0,
                     length: int = EOF, body: bytes = b"") -> Op:
        p = Packer().boolean(False).u32(LAYOUT4_FLEX_FILES).u32(iomode).u32(1)
        p.u64(offset).u64(length)
        stateid.pack(p)
        p.opaque(body)
        return Op(OP_LAYOUTRETURN, p.bytes(), _layoutreturn_result)

    @staticmethod
    def layoutcommit(stateid: Stateid, last_write: int, offset: int = 0,
                     length: int = EOF) -> Op:
        p = Packer().u64(offset).u64(length).boolean(False)
        stateid.pack(p)
        p.boolean(True).u64(last_write).boolean(False).u32(LAYOUT4_FLEX_FILES).opaque(b"")

        def result(u: Unpacker) -> int | None:
            return u.u64() if u.boolean() else None
        return Op(OP_LAYOUTCOMMIT, p.bytes(), result)

    @staticmethod
    def close_op(stateid: Stateid) -> Op:
        p = Packer().u32(0)
        stateid.pack(p)
        return Op(OP_CLOSE, p.bytes(), Stateid.unpack)

    # ---- conveniences --------------------------------------------------------------

    def lookup_path(self, path: str) -> list[Op]:
        return [self.putrootfh(), *(self.lookup(c) for c in path.strip("/").split("/") if c)]

    def create(self, dir_path: str, name: str, mode: int = 0o644) -> tuple[bytes, Stateid]:
        """OPEN(CREATE) `name` in `dir_path`: its file handle and open stateid."""
        r = self.compound([*self.lookup_path(dir_path), self.open_create(name, mode),
                           self.getfh()])
        for num, status, _ in r.results:
            if status != NFS4_OK:
                raise Nfs4Error(num, status)
        sid, fh = r.results[-2][2], r.results[-1][2]
        assert isinstance(sid, Stateid) and isinstance(fh, bytes)
        return fh, sid

    def create_status(self, dir_path: str, name: str) -> int:
        """OPEN(CREATE) of a new file: NFS4_OK or the error (GRACE while
        the server is in its grace period)."""
        try:
            self.create(dir_path, name)
        except Nfs4Error as e:
            return e.status
        return NFS4_OK

    def open(self, dir_path: str, name: str,
             access: int = OPEN4_SHARE_ACCESS_READ) -> tuple[bytes, Stateid]:
        """OPEN of the existing `name` in `dir_path`: its handle and open stateid."""
        r = self.compound([*self.lookup_path(dir_path), self.open_existing(name, access),
                           self.getfh()])
        for num, status, _ in r.results:
            if status != NFS4_OK:
                raise Nfs4Error(num, status)
        sid, fh = r.results[-2][2], r.results[-1][2]
        assert isinstance(sid, Stateid) and isinstance(fh, bytes)
        return fh, sid

    def reclaim_open(self, fh: bytes) -> Stateid:
        """The open of fh this client held before the restart, reclaimed."""
        status, sid = self.on(fh, self.open_previous())
        if status != NFS4_OK:
            raise Nfs4Error(OP_OPEN, status)
        assert isinstance(sid, Stateid)
        return sid

    def lock(self, fh: bytes, open_sid: Stateid, offset: int, length: int,
             reclaim: bool = False) -> int:
        """LOCK of fh: NFS4_OK or the error (NFS4ERR_DENIED: someone holds it)."""
        return self.on(fh, self.lock_op(open_sid, offset, length, reclaim))[0]

    def size_and_mode(self, fh: bytes) -> tuple[int, int]:
        """The file's size and mode (GETATTR)."""
        status, raw = self.on(fh, self.getattr(FATTR4_SIZE, FATTR4_MODE))
        if status != NFS4_OK:
            raise Nfs4Error(OP_GETATTR, status)
        assert isinstance(raw, bytes)
        u = Unpacker(raw)
        return u.u64(), u.u32()

    def on(self, fh: bytes, op: Op) -> tuple[int, object]:
        """One op on the file `fh`: its status and result."""
        return self.compound([self.putfh(fh), op]).last()
