"""Bad input on the NFSv3 port: every malformed call gets a clear RPC or NFS
error (or, for a broken record stream, a closed connection), nothing is
written, and the target keeps serving."""
from __future__ import annotations

import random
import socket
import struct
from typing import Callable, Iterator

import pytest

from pando_testing import nfs3, oncrpc
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK, Nfs3Client
from pando_testing.oncrpc import (Auth, ConnectionClosed, RpcAccepted, RpcClient, RpcDenied,
                                  auth_sys, decode_reply, encode_call)
from pando_testing.xdr import Packer, Unpacker

PART, OBJ = 1, 1
MIB = 1 << 20
MAX_RECORD = MIB + 64 * 1024
CONTENT = bytes(range(256)) * 16 * 512  # 2 MiB


@pytest.fixture
def fh(osd: OsdProcess) -> bytes:
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), str(OBJ))
    fh = handle_for(osd, PART, OBJ)
    with osd.nfs3() as c:
        for at in range(0, len(CONTENT), MIB):
            assert c.write(fh, at, CONTENT[at:at + MIB], nfs3.FILE_SYNC).status == NFS3_OK
    return fh


@pytest.fixture
def connect(osd: OsdProcess) -> Iterator[Callable[[], Nfs3Client]]:
    opened: list[Nfs3Client] = []

    def open_one() -> Nfs3Client:
        c = osd.nfs3()
        opened.append(c)
        return c
    yield open_one
    for c in opened:
        c.close()


def still_serving(osd: OsdProcess, fh: bytes) -> None:
    """The process is up, answers NULL on a new connection, and the object
    is exactly as the fixture wrote it."""
    assert osd.alive()
    with osd.nfs3() as c:
        c.null()
        assert c.read_all(fh, 0, len(CONTENT) + 1) == CONTENT


def closed_by_server(rpc: RpcClient) -> bool:
    """True when the server closes the connection (after any replies)."""
    try:
        while True:
            rpc.recv_record()
    except ConnectionClosed:
        return True
    except socket.timeout:
        return False


def send_until_closed(rpc: RpcClient, data: bytes) -> None:
    """Sends what the server may refuse to read to the end."""
    try:
        rpc.send_raw(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def raw_call(xid: int, proc: int = nfs3.PROC_NULL, args: bytes = b"", rpcvers: int = 2,
             prog: int = nfs3.NFS3_PROGRAM, vers: int = 3, cred: Auth | None = None,
             verf: Auth | None = None) -> bytes:
    cred, verf = cred or Auth(), verf or Auth()
    p = Packer().u32(xid).u32(oncrpc.MSG_CALL).u32(rpcvers).u32(prog).u32(vers).u32(proc)
    p.u32(cred.flavor).opaque(cred.body).u32(verf.flavor).opaque(verf.body)
    return p.bytes() + args


def test_truncated_arguments_are_garbage_args(osd: OsdProcess, fh: bytes,
                                              connect: Callable[[], Nfs3Client]) -> None:
    c = connect()
    full = {
        nfs3.PROC_GETATTR: nfs3.fh_args(fh),
        nfs3.PROC_ACCESS: nfs3.access_args(fh, 1),
        nfs3.PROC_READ: nfs3.read_args(fh, 0, 10),
        nfs3.PROC_WRITE: nfs3.write_args(fh, 0, b"clobber!"),
        nfs3.PROC_COMMIT: nfs3.commit_args(fh),
        nfs3.PROC_FSSTAT: nfs3.fh_args(fh),
        nfs3.PROC_FSINFO: nfs3.fh_args(fh),
        nfs3.PROC_PATHCONF: nfs3.fh_args(fh),
    }
    for proc, args in full.items():
        for cut in sorted({0, 3, 4, 30, len(args) - 4, len(args) - 1}):
            with pytest.raises(RpcAccepted) as e:
                c.call_raw(proc, args[:cut])
            assert e.value.stat == oncrpc.GARBAGE_ARGS and e.value.body == b"", (proc, cut)
    c.null()  # the connection is still good
    still_serving(osd, fh)


def test_undecodable_fields_are_garbage_args(osd: OsdProcess, fh: bytes,
                                             connect: Callable[[], Nfs3Client]) -> None:
    c = connect()
    bad = [
        (nfs3.PROC_GETATTR, nfs3.fh_args(bytes(65))),              # over NFS3_FHSIZE
        (nfs3.PROC_READ, Packer().u32(0xFFFFFFFF).bytes()),         # 4 GiB handle
        (nfs3.PROC_WRITE, nfs3.write_args(fh, 0, b"abc", stable=3)),  # no such stable_how
        (nfs3.PROC_WRITE, nfs3.write_args(fh, 0, b"abc")[:-4] + b"ab"),  # data cut short
        (nfs3.PROC_WRITE, nfs3.write_args(fh, 0, b"")[:-4] + struct.pack(">I", 1 << 30)),
        (nfs3.PROC_WRITE, nfs3.write_args(fh, 0, b"", count=0xFFFFFFFF)[:-4] +
         struct.pack(">I", 0xFFFFFFFF)),                          # padding would wrap
    ]
    for proc, args in bad:
        with pytest.raises(RpcAccepted) as e:
            c.call_raw(proc, args)
        assert e.value.stat == oncrpc.GARBAGE_ARGS
    # trailing bytes after well-formed arguments are ignored
    assert nfs3.decode_getattr(c.call_raw(nfs3.PROC_GETATTR, nfs3.fh_args(fh) + bytes(12))) \
        .status == NFS3_OK
    still_serving(osd, fh)


def test_rpc_level_refusals(osd: OsdProcess, fh: bytes) -> None:
    rpc = RpcClient(osd.pod.connect(osd.host, osd.nfs_port), nfs3.NFS3_PROGRAM, 3)

    def ask(record: bytes) -> bytes:
        rpc.send_record(record)
        return rpc.recv_record()

    with pytest.raises(RpcDenied) as denied:
        decode_reply(ask(raw_call(1, rpcvers=3)))
    assert (denied.value.reject_stat, denied.value.detail) == (oncrpc.RPC_MISMATCH, 2)

    with pytest.raises(RpcAccepted) as acc:
        decode_reply(ask(raw_call(2, prog=100005)))
    assert acc.value.stat == oncrpc.PROG_UNAVAIL

    for vers in (2, 4):
        with pytest.raises(RpcAccepted) as acc:
            decode_reply(ask(raw_call(3, vers=vers)))
        assert acc.value.stat == oncrpc.PROG_MISMATCH
        assert acc.value.body == struct.pack(">II", 3, 3)

    for proc in (22, 1000, 0xFFFFFFFF):
        with pytest.raises(RpcAccepted) as acc:
            decode_reply(ask(raw_call(4, proc=proc)))
        assert acc.value.stat == oncrpc.PROC_UNAVAIL

    good = auth_sys(1000, 1000)
    bad_creds = [
        Auth(oncrpc.AUTH_SYS, good.body[:-4]),                       # cut short
        Auth(oncrpc.AUTH_SYS, good.body + b"\0\0\0\0"),              # trailing bytes
        Auth(oncrpc.AUTH_SYS, Packer().u32(0).u32(300).bytes()),     # machine name > 255
        Auth(oncrpc.AUTH_SYS, Packer().u32(0).string("h").u32(0).u32(0).u32(17)
             .raw(bytes(68)).bytes()),                                # 17 gids
        Auth(oncrpc.AUTH_NONE, b"\0\0\0\0"),                          # AUTH_NONE with a body
    ]
    for cred in bad_creds:
        with pytest.raises(RpcDenied) as denied:
            decode_reply(ask(raw_call(5, proc=nfs3.PROC_GETATTR, args=nfs3.fh_args(fh),
                                      cred=cred)))
        assert (denied.value.reject_stat, denied.value.detail) == \
            (oncrpc.AUTH_ERROR, oncrpc.AUTH_BADCRED), cred
    with pytest.raises(RpcDenied) as denied:
        decode_reply(ask(raw_call(6, cred=Auth(6, b"\0" * 8))))      # RPCSEC_GSS
    assert (denied.value.reject_stat, denied.value.detail) == \
        (oncrpc.AUTH_ERROR, oncrpc.AUTH_TOOWEAK)
    with pytest.raises(RpcDenied) as denied:
        decode_reply(ask(raw_call(7, cred=good, verf=Auth(oncrpc.AUTH_SYS, good.body))))
    assert denied.value.detail == oncrpc.AUTH_BADVERF

    # both accepted flavors work, with a full 16-gid AUTH_SYS credential
    many = Auth(oncrpc.AUTH_SYS, Packer().u32(9).string("x" * 255).u32(1).u32(2).u32(16)
                .raw(bytes(64)).bytes())
    for cred in (Auth(), good, many):
        reply = decode_reply(ask(raw_call(8, proc=nfs3.PROC_GETATTR, args=nfs3.fh_args(fh),
                                          cred=cred)))
        assert reply.body[:4] == b"\0\0\0\0"
    rpc.close()
    still_serving(osd, fh)


def test_absurd_counts_and_offsets(osd: OsdProcess, fh: bytes,
                                   connect: Callable[[], Nfs3Client]) -> None:
    c = connect()
    r = c.read(fh, 0, 0xFFFFFFFF)  # cut to rtmax
    assert (r.status, r.count, r.eof) == (NFS3_OK, MIB, False) and r.data == CONTENT[:MIB]
    r = c.read(fh, MIB, 0xFFFFFFFF)
    assert (r.count, r.eof) == (MIB, True)

    for count, data in ((10, b"short"), (5, b"longer data"), (0, b"x"), (0xFFFFFFFF, b"x")):
        w = c.write(fh, 0, data, nfs3.FILE_SYNC, count=count)
        assert w.status == nfs3.NFS3ERR_INVAL, count
        assert w.count == 0 and w.verf == b""

    w = c.write(fh, 0, bytes(MIB + 4096), nfs3.FILE_SYNC)  # fits a record, over wtmax
    assert w.status == nfs3.NFS3ERR_INVAL

    for offset in (2**64 - 4096, 2**63):
        assert c.write(fh, offset, b"far", nfs3.FILE_SYNC).status == nfs3.NFS3ERR_FBIG
        r = c.read(fh, offset, 4096)
        assert r.status == nfs3.NFS3ERR_FBIG and r.data == b""
        assert r.attrs is not None and r.attrs.size == len(CONTENT)
    assert c.write(fh, 2**63 - 2, b"past the end", nfs3.FILE_SYNC).status == nfs3.NFS3ERR_FBIG

    for offset in (len(CONTENT), 1 << 50, 2**63 - 1):
        r = c.read(fh, offset, 4096)
        assert (r.status, r.count, r.data, r.eof) == (NFS3_OK, 0, b"", True), offset

    # a whole record over the maximum closes the connection
    big = connect()
    record = encode_call(9, nfs3.NFS3_PROGRAM, 3, nfs3.PROC_WRITE,
                         nfs3.write_args(fh, 0, bytes(2 * MIB)), auth_sys())
    send_until_closed(big.rpc, struct.pack(">I", oncrpc.LAST_FRAGMENT | len(record)) + record)
    assert closed_by_server(big.rpc)
    still_serving(osd, fh)


def test_broken_record_marks_close_the_connection(osd: OsdProcess, fh: bytes,
                                                  connect: Callable[[], Nfs3Client]) -> None:
    c = connect()
    send_until_closed(c.rpc, struct.pack(">I", oncrpc.LAST_FRAGMENT | (MAX_RECORD + 1)) + bytes(64))
    assert closed_by_server(c.rpc)

    c = connect()
    send_until_closed(c.rpc, struct.pack(">I", 0x7FFFFFFF) + bytes(64))  # 2 GiB fragment
    assert closed_by_server(c.rpc)

    c = connect()  # fragments that only together exceed the maximum
    piece = 600 * 1024
    send_until_closed(c.rpc, (struct.pack(">I", piece) + bytes(piece)) * 2)
    assert closed_by_server(c.rpc)

    c = connect()  # an empty record carries no call; the connection goes on
    c.rpc.send_record(b"")
    c.null()

    c = connect()  # a record split into fragments is one call
    call = encode_call(10, nfs3.NFS3_PROGRAM, 3, nfs3.PROC_READ, nfs3.read_args(fh, 0, 16))
    c.rpc.send_raw(struct.pack(">I", 8) + call[:8] +
                   struct.pack(">I", oncrpc.LAST_FRAGMENT | (len(call) - 8)) + call[8:])
    reply = decode_reply(c.rpc.recv_record())
    assert reply.xid == 10 and nfs3.decode_read(Unpacker(reply.body)).data == CONTENT[:16]
    still_serving(osd, fh)


def _mutate(rng: random.Random, record: bytes) -> bytes:
    b = bytearray(record)
    kind = rng.randrange(5)
    if kind == 0:  # flip bits
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # overwrite a word with an extreme value
        at = rng.randrange(0, len(b) - 3) & ~3
        b[at:at + 4] = struct.pack(">I", rng.choice([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                                     rng.getrandbits(32)]))
    elif kind == 2:  # truncate
        del b[rng.randrange(len(b)):]
    elif kind == 3:  # extend with junk
        b += rng.randbytes(rng.randint(1, 64))
    else:  # all random
        b = bytearray(rng.randbytes(rng.randint(0, 300)))
    return bytes(b)


def test_fuzzed_records(osd: OsdProcess, fh: bytes) -> None:
    """Seeded mutations of valid calls, and random records: each is answered
    with a well-formed reply or ignored (a record that is not a call) or the
    connection is closed; a NULL after each one keeps the stream in step."""
    rng = random.Random(1813)
    ro = handle_for(osd, PART, OBJ, rights=1)
    templates = [
        (nfs3.PROC_NULL, b""),
        (nfs3.PROC_GETATTR, nfs3.fh_args(fh)),
        (nfs3.PROC_ACCESS, nfs3.access_args(fh, nfs3.ACCESS3_ALL)),
        (nfs3.PROC_READ, nfs3.read_args(fh, 4096, 8192)),
        (nfs3.PROC_WRITE, nfs3.write_args(ro, 0, b"not allowed", nfs3.FILE_SYNC)),
        (nfs3.PROC_COMMIT, nfs3.commit_args(ro)),
        (nfs3.PROC_FSINFO, nfs3.fh_args(fh)),
        (nfs3.PROC_LOOKUP, nfs3.fh_args(fh) + Packer().string("x").bytes()),
    ]
    rpc = RpcClient(osd.pod.connect(osd.host, osd.nfs_port), nfs3.NFS3_PROGRAM, 3)
    replies = closes = 0
    for i in range(400):
        proc, args = rng.choice(templates)
        record = _mutate(rng, encode_call(rng.getrandbits(31), nfs3.NFS3_PROGRAM, 3, proc, args,
                                          auth_sys()))
        ping = 0x80000000 | i
        try:
            rpc.send_record(record)
            rpc.send_record(encode_call(ping, nfs3.NFS3_PROGRAM, 3, nfs3.PROC_NULL, b""))
            while True:
                reply = rpc.recv_record()
                try:
                    decoded = decode_reply(reply)
                except oncrpc.RpcError:
                    decoded = None  # an RPC-level error is a fine answer
                if decoded is not None and decoded.xid == ping:
                    break
                replies += 1
        except (ConnectionClosed, BrokenPipeError, ConnectionResetError):
            closes += 1
            rpc.close()
            rpc = RpcClient(osd.pod.connect(osd.host, osd.nfs_port), nfs3.NFS3_PROGRAM, 3)
    rpc.close()
    assert replies > 100  # most mutated calls are answered, not dropped
    still_serving(osd, fh)

    for _ in range(20):  # random streams, record marks and all, then EOF
        s = osd.pod.connect(osd.host, osd.nfs_port)
        rpc = RpcClient(s, nfs3.NFS3_PROGRAM, 3)
        send_until_closed(rpc, rng.randbytes(rng.randint(1, 2000)))
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # already closed by the server
        assert closed_by_server(rpc)
        s.close()
    still_serving(osd, fh)
