"""ONC RPC (RFC 5531) client over TCP, for tests and tools.

Besides well-formed calls it can send arbitrary bytes as a record, or a
broken record mark, so tests can check how servers treat malformed input.
"""
from __future__ import annotations

import itertools
import os
import socket
import struct
from dataclasses import dataclass

from .xdr import Packer, Unpacker

AUTH_NONE = 0
AUTH_SYS = 1

MSG_CALL = 0
MSG_REPLY = 1
MSG_ACCEPTED = 0
MSG_DENIED = 1

SUCCESS = 0
PROG_UNAVAIL = 1
PROG_MISMATCH = 2
PROC_UNAVAIL = 3
GARBAGE_ARGS = 4
SYSTEM_ERR = 5

RPC_MISMATCH = 0
AUTH_ERROR = 1
AUTH_BADCRED = 1
AUTH_REJECTEDCRED = 2
AUTH_BADVERF = 3
AUTH_REJECTEDVERF = 4
AUTH_TOOWEAK = 5

LAST_FRAGMENT = 0x80000000


class RpcError(Exception):
    """The server answered, but not with SUCCESS."""


class RpcAccepted(RpcError):
    def __init__(self, stat: int, body: bytes, verf: "Auth | None" = None) -> None:
        super().__init__(f"call accepted with status {stat}")
        self.stat = stat
        self.body = body
        self.verf = verf if verf is not None else Auth()


class RpcDenied(RpcError):
    def __init__(self, reject_stat: int, detail: int) -> None:
        super().__init__(f"call denied: reject_stat={reject_stat} detail={detail}")
        self.reject_stat = reject_stat
        self.detail = detail


class ConnectionClosed(Exception):
    """The peer closed the connection (or reset it)."""


@dataclass
class Auth:
    flavor: int = AUTH_NONE
    body: bytes = b""


def auth_sys(uid: int = 0, gid: int = 0, machine: str = "pando-test") -> Auth:
    p = Packer().u32(0).string(machine).u32(uid).u32(gid).u32(0)
    return Auth(AUTH_SYS, p.bytes())


@dataclass
class Reply:
    xid: int
    verf: Auth
    body: bytes


def encode_call(xid: int, prog: int, vers: int, proc: int, args: bytes,
                cred: Auth | None = None, verf: Auth | None = None) -> bytes:
    cred = cred or Auth()
    verf = verf or Auth()
    p = Packer().u32(xid).u32(MSG_CALL).u32(2).u32(prog).u32(vers).u32(proc)
    p.u32(cred.flavor).opaque(cred.body).u32(verf.flavor).opaque(verf.body)
    return p.bytes() + args


def decode_reply(record: bytes) -> Reply:
    """Decodes a reply record; raises RpcAccepted/RpcDenied unless SUCCESS."""
    u = Unpacker(record)
    xid = u.u32()
    if u.u32() != MSG_REPLY:
        raise RpcError("not a reply")
    if u.u32() == MSG_DENIED:
        reject = u.u32()
        raise RpcDenied(reject, u.u32())
    verf = Auth(u.u32(), u.opaque(400))
    stat = u.u32()
    rest = record[u.pos:]
    if stat != SUCCESS:
        raise RpcAccepted(stat, rest, verf)
    return Reply(xid, verf, rest)


class RpcClient:
    """One TCP connection; calls are synchronous, one at a time.  Calls
    the server makes on the connection (an NFSv4.1 back channel) are
    counted in `ignored_calls` and never answered."""

    def __init__(self, sock: socket.socket, prog: int, vers: int,
                 cred: Auth | None = None) -> None:
        self.sock = sock
        self.prog = prog
        self.vers = vers
        self.cred = cred or Auth()
        self._xids = itertools.count(struct.unpack(">I", os.urandom(4))[0] >> 1)
        self.ignored_calls = 0

    def close(self) -> None:
        self.sock.close()

    def next_xid(self) -> int:
        return next(self._xids) & 0xFFFFFFFF

    def send_record(self, data: bytes) -> None:
        self.sock.sendall(struct.pack(">I", LAST_FRAGMENT | len(data)) + data)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            try:
                b = self.sock.recv(min(n, 1 << 20))
            except (ConnectionResetError, BrokenPipeError) as e:
                raise ConnectionClosed(str(e)) from e
            if not b:
                raise ConnectionClosed("peer closed the connection")
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def recv_record(self) -> bytes:
        parts = []
        while True:
            (mark,) = struct.unpack(">I", self._recv_exact(4))
            parts.append(self._recv_exact(mark & ~LAST_FRAGMENT))
            if mark & LAST_FRAGMENT:
                return b"".join(parts)

    def call_raw(self, proc: int, args: bytes, cred: Auth | None = None,
                 verf: Auth | None = None, xid: int | None = None) -> Reply:
        xid = self.next_xid() if xid is None else xid
        self.send_record(encode_call(xid, self.prog, self.vers, proc, args,
                                     cred or self.cred, verf))
        return decode_reply(self.reply_record(xid))

    def reply_record(self, xid: int) -> bytes:
        """The reply to call xid, past the calls the server makes meanwhile."""
        record = self.recv_record()
        while struct.unpack_from(">I", record, 4)[0] == MSG_CALL:
            self.ignored_calls += 1
            record = self.recv_record()
        got = struct.unpack_from(">I", record)[0]
        if got != xid:
            raise RpcError(f"reply xid {got:#x} for call {xid:#x}")
        return record

    def call(self, proc: int, args: bytes = b"") -> Unpacker:
        return Unpacker(self.call_raw(proc, args).body)
