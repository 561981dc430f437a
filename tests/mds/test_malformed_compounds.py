"""Malformed and mutated NFSv4.1 COMPOUNDs against a running metadata
manager: truncated bodies, lengths past the end, huge counts, unknown and
reserved operations, then seeded random mutations of valid compounds.
Each goes on a connection of its own as one whole record, and the server
must answer it (any RPC reply) or close the connection, never hang, and
afterwards still be up and serve valid requests (NULL, an EXCHANGE_ID,
an NFSv3 GETATTR).  Bounded: about 530 compounds, ten seconds each at
most."""
from __future__ import annotations

import random
import socket
import struct

import pytest

from pando_testing import oncrpc
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect
from pando_testing.oncrpc import ConnectionClosed, RpcAccepted, RpcClient, RpcDenied
from pando_testing.xdr import Packer, Unpacker

NFS4_PROGRAM = 100003
NFS4_VERSION = 4
PROC_NULL = 0
PROC_COMPOUND = 1

OP_GETATTR = 9
OP_PUTROOTFH = 24
OP_EXCHANGE_ID = 42
OP_CREATE_SESSION = 43
OP_SEQUENCE = 53
OP_RECLAIM_COMPLETE = 58
OP_ILLEGAL = 10044
NFS4_OK = 0

REPLY_TIMEOUT = 10.0
MUTATIONS = 500
SEED = 0x5EED41


def compound(ops: list[tuple[int, bytes]], minor: int = 1, tag: bytes = b"fuzz") -> bytes:
    p = Packer().opaque(tag).u32(minor).u32(len(ops))
    for opnum, args in ops:
        p.u32(opnum).raw(args)
    return p.bytes()


def exchange_id(owner: bytes = b"pando-malformed") -> bytes:
    return (Packer().fixed(b"verifier").opaque(owner)  # client_owner4
            .u32(0)                                    # eia_flags
            .u32(0)                                    # state_protect4_a: SP4_NONE
            .u32(0)                                    # eia_client_impl_id<1>: none
            .bytes())


def create_session() -> bytes:
    attrs = Packer().u32(0).u32(1 << 20).u32(1 << 20).u32(8192).u32(16).u32(8).u32(0).bytes()
    return (Packer().u64(0x1234).u32(1).u32(0)  # clientid, sequence, flags
            .raw(attrs).raw(attrs)              # fore and back channel attrs
            .u32(0x40000000)                    # cb_program
            .u32(1).u32(oncrpc.AUTH_NONE)       # csa_sec_parms<>: AUTH_NONE
            .bytes())


def sequence() -> bytes:
    return Packer().fixed(b"S" * 16).u32(1).u32(0).u32(0).boolean(False).bytes()


def getattr_args() -> bytes:
    return Packer().u32(2).u32(0x0010011a).u32(0x00b0a23a).bytes()  # bitmap4<2>


VALID = [
    compound([(OP_EXCHANGE_ID, exchange_id())]),
    compound([(OP_CREATE_SESSION, create_session())]),
    compound([(OP_SEQUENCE, sequence()), (OP_PUTROOTFH, b""), (OP_GETATTR, getattr_args())]),
    compound([(OP_PUTROOTFH, b""), (OP_GETATTR, getattr_args())], minor=0),
    compound([(OP_SEQUENCE, sequence()), (OP_RECLAIM_COMPLETE, Packer().boolean(False).bytes())]),
    compound([]),
]


def structured_cases() -> list[tuple[str, bytes]]:
    """Each kind of damage the brief names, by hand."""
    xid = compound([(OP_EXCHANGE_ID, exchange_id())])
    cases: list[tuple[str, bytes]] = [
        ("empty body", b""),
        ("tag only", Packer().opaque(b"t").bytes()),
        ("tag length past the end", struct.pack(">I", 0x7FFFFFF0) + b"abc"),
        ("tag length 2^32-1", struct.pack(">I", 0xFFFFFFFF) + b"\0" * 8),
        ("op count 2^32-1", Packer().opaque(b"").u32(1).u32(0xFFFFFFFF).bytes()),
        ("op count 1e6, no ops", Packer().opaque(b"").u32(1).u32(1000000).bytes()),
        ("op count past the ops", compound([(OP_PUTROOTFH, b"")])[:-4]
         + struct.pack(">I", 50) + struct.pack(">I", OP_PUTROOTFH)),
        ("unknown op 9999", compound([(9999, b"")])),
        ("unknown op 2^32-1", compound([(0xFFFFFFFF, b"\0" * 16)])),
        ("reserved op 0", compound([(0, b"")])),
        ("reserved op 2", compound([(2, b"")])),
        ("OP_ILLEGAL", compound([(OP_ILLEGAL, b"")])),
        ("minor version 99", compound([(OP_PUTROOTFH, b"")], minor=99)),
        ("GETATTR bitmap count 2^32-1",
         compound([(OP_PUTROOTFH, b""), (OP_GETATTR, struct.pack(">I", 0xFFFFFFFF))], minor=0)),
        ("EXCHANGE_ID owner length past the end",
         compound([(OP_EXCHANGE_ID, b"verifier" + struct.pack(">I", 0x10000000))])),
        ("CREATE_SESSION sec_parms count huge",
         compound([(OP_CREATE_SESSION, create_session()[:-8] + struct.pack(">II", 0xFFFFFFFF, 1))])),
        ("trailing garbage", xid + b"\xde\xad\xbe\xef" * 4),
        ("1000 PUTROOTFH", compound([(OP_PUTROOTFH, b"")] * 1000)),
    ]
    for cut in (1, 5, 9, 17, len(xid) // 2, len(xid) - 1):
        cases.append((f"EXCHANGE_ID cut at {cut}", xid[:cut]))
    return cases


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to four byte-level mutations, libFuzzer style."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        at = rng.randrange(len(b) + 1)
        if kind == 0 and b:                      # flip a bit
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and b:                    # a random byte
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 2 and len(b) >= 4:          # an interesting 32-bit word
            i = rng.randrange(len(b) - 3) & ~3
            word = rng.choice([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF, len(b)])
            b[i:i + 4] = struct.pack(">I", word)
        elif kind == 3:                          # cut
            del b[at:]
        elif kind == 4:                          # insert random bytes
            b[at:at] = rng.randbytes(rng.randint(1, 16))
        elif b:                                  # erase a run
            del b[at:at + rng.randint(1, 8)]
    return bytes(b)


def send_one(mds: PandoMds, body: bytes, proc: int = PROC_COMPOUND) -> str:
    """Sends one call; what became of it: 'reply' or 'closed'."""
    sock = mds.pod.connect(mds.host, mds.nfs_port)
    sock.settimeout(REPLY_TIMEOUT)
    c = RpcClient(sock, NFS4_PROGRAM, NFS4_VERSION, oncrpc.auth_sys())
    try:
        c.call_raw(proc, body)
        return "reply"
    except (RpcAccepted, RpcDenied):
        return "reply"
    except ConnectionClosed:
        return "closed"
    except socket.timeout:
        pytest.fail(f"no answer within {REPLY_TIMEOUT} s and the connection still open: "
                    f"{body[:64].hex()}")
    finally:
        c.close()


def compound_status(mds: PandoMds, body: bytes) -> int:
    """The status of a COMPOUND that must come back as an RPC success."""
    sock = mds.pod.connect(mds.host, mds.nfs_port)
    sock.settimeout(REPLY_TIMEOUT)
    c = RpcClient(sock, NFS4_PROGRAM, NFS4_VERSION, oncrpc.auth_sys())
    try:
        return Unpacker(c.call_raw(PROC_COMPOUND, body).body).u32()
    finally:
        c.close()


def assert_serving(mds: PandoMds, root: bytes) -> None:
    assert mds.alive(), "ganesha.nfsd died"
    assert send_one(mds, b"", proc=PROC_NULL) == "reply"
    assert compound_status(mds, compound([(OP_EXCHANGE_ID, exchange_id(b"after"))])) == NFS4_OK
    with connect(mds) as c:
        assert c.getattr(root).status == 0


def test_malformed_compounds(mds: PandoMds) -> None:
    for body in VALID:
        assert send_one(mds, body) == "reply"
    assert compound_status(mds, VALID[0]) == NFS4_OK
    for name, body in structured_cases():
        assert send_one(mds, body) in ("reply", "closed"), name
        assert mds.alive(), f"ganesha.nfsd died on: {name}"
    assert_serving(mds, mds.root_handle())


def test_mutated_compounds(mds: PandoMds) -> None:
    rng = random.Random(SEED)
    outcomes = {"reply": 0, "closed": 0}
    for _ in range(MUTATIONS):
        body = mutate(rng, rng.choice(VALID))
        outcomes[send_one(mds, body)] += 1
        assert mds.alive(), f"ganesha.nfsd died on the mutated compound {body.hex()}"
    assert outcomes["reply"] > 0
    assert_serving(mds, mds.root_handle())
