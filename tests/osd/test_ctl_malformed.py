"""Hostile input on the control port: every malformed call gets a clear
answer (GARBAGE_ARGS, or a status), nothing crashes, and the target keeps
serving.  All calls are properly signed, so they reach the decoders."""
from __future__ import annotations

import random
import socket
import struct
from typing import Callable, Iterator

import pytest

from pando_testing import oncrpc
from pando_testing.daemons import OsdProcess
from pando_testing.oncrpc import ConnectionClosed, RpcAccepted, RpcError
from pando_testing.osdctl import (MAX_ATTR_LEN, MAX_ATTRS, MAX_BATCH, MAX_DATA, CreateItem,
                                  Info, OsdCtl, Proc, Signer, Stable, Status, args_create,
                                  args_flush, args_format, args_getattr, args_list,
                                  args_partition, args_read, args_remove, args_setattr,
                                  args_setcap, args_write, open_ctl)
from pando_testing.pod import Pod
from pando_testing.xdr import Packer

MAX_OFFSET = (1 << 63) - 1


@pytest.fixture
def ctl(pod: Pod, osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(pod, osd) as c:
        assert c.create_partition(1) == Status.OK
        assert c.create(1, 1) == [1]
        assert c.write(1, 1, 0, b"0123456789").status == Status.OK
        yield c


def assert_serving(pod: Pod, osd: OsdProcess) -> None:
    assert osd.alive(), "pando-osd died"
    with open_ctl(pod, osd) as c:
        c.null()
        assert c.statfs().osd_id == osd.osd_id


def garbage(ctl: OsdCtl, proc: int, args: bytes) -> None:
    with pytest.raises(RpcAccepted) as e:
        ctl.call_signed(proc, args)
    assert e.value.stat == oncrpc.GARBAGE_ARGS, f"proc {proc}: {args[:32].hex()}"


def status_of(ctl: OsdCtl, proc: int, args: bytes) -> Status:
    return Status(struct.unpack(">I", ctl.call_signed(proc, args).body[:4])[0])


# Well-formed arguments of every procedure that takes some.
VALID_ARGS: dict[Proc, bytes] = {
    Proc.FORMAT: args_format(bytes(16)),
    Proc.CREATE_PARTITION: args_partition(9),
    Proc.REMOVE_PARTITION: args_partition(9),
    Proc.CREATE_OBJECTS: args_create(1, [CreateItem(0), CreateItem(50)]),
    Proc.REMOVE_OBJECTS: args_remove(1, [60, 61]),
    Proc.READ: args_read(1, 1, 0, 10),
    Proc.WRITE: args_write(1, 1, 0, b"abcde"),
    Proc.GETATTR: args_getattr(1, 1, [(1, 1), (0x10000, 1)]),
    Proc.SETATTR: args_setattr(1, 1, [(0x10000, 1, b"xyz")]),
    Proc.LIST: args_list(1, 0, 10),
    Proc.FLUSH: args_flush(1, 1),
    Proc.SET_CAP_VERSION: args_setcap(1, 1, 0),
    Proc.REVOKE_WRITERS: args_setcap(1, 1, 0),
}


def test_truncated_arguments(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    for proc, args in VALID_ARGS.items():
        for cut in sorted({0, 4, len(args) // 2, len(args) - 4, len(args) - 1}):
            garbage(ctl, proc, args[:cut])
    assert_serving(pod, osd)


def test_trailing_bytes(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    for proc, args in VALID_ARGS.items():
        garbage(ctl, proc, args + b"\0\0\0\0")
    garbage(ctl, Proc.STATFS, b"\0\0\0\0")
    garbage(ctl, Proc.NULL, b"\0\0\0\1")
    assert_serving(pod, osd)


def test_lists_over_their_bounds(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    garbage(ctl, Proc.CREATE_OBJECTS, args_create(1, [CreateItem(0)] * (MAX_BATCH + 1)))
    garbage(ctl, Proc.REMOVE_OBJECTS, args_remove(1, list(range(1, MAX_BATCH + 2))))
    garbage(ctl, Proc.GETATTR, args_getattr(1, 1, [(1, 1)] * (MAX_ATTRS + 1)))
    garbage(ctl, Proc.SETATTR, args_setattr(1, 1, [(0x10000, 1, b"")] * (MAX_ATTRS + 1)))
    garbage(ctl, Proc.SETATTR, args_setattr(1, 1, [(0x10000, 1, bytes(MAX_ATTR_LEN + 1))]))
    # a count that claims more items than the record holds
    garbage(ctl, Proc.CREATE_OBJECTS, Packer().u64(1).u32(MAX_BATCH).bytes())
    garbage(ctl, Proc.REMOVE_OBJECTS, Packer().u64(1).u32(0xFFFFFFFF).bytes())
    # exactly at the bounds is fine
    status, results = ctl.create_objects(1, [CreateItem(0)] * MAX_BATCH)
    assert status == Status.OK and len(results) == MAX_BATCH
    assert all(st == Status.OK for st, _ in results)
    assert ctl.statfs().objects == MAX_BATCH + 1
    assert_serving(pod, osd)


def test_opaque_lengths_lying_beyond_the_record(pod: Pod, osd: OsdProcess,
                                                ctl: OsdCtl) -> None:
    head = Packer().u64(1).u64(1).u64(0).u32(Stable.UNSTABLE)
    for claimed in (12, 4096, MAX_DATA, MAX_DATA + 1, 0x7FFFFFFF, 0xFFFFFFFF):
        garbage(ctl, Proc.WRITE, head.bytes() + struct.pack(">I", claimed) + b"short\0\0\0")
    # data over OSD_CTL_MAX_DATA, though the record carries it all
    garbage(ctl, Proc.WRITE, args_write(1, 1, 0, bytes(MAX_DATA + 4)))
    # an enum outside osd_stable
    garbage(ctl, Proc.WRITE, args_write(1, 1, 0, b"abcd", stable=3))
    attr = Packer().u64(1).u64(1).u32(1).u32(0x10000).u32(1)
    garbage(ctl, Proc.SETATTR, attr.u32(1000).raw(b"x" * 8).bytes())
    assert ctl.read_all(1, 1) == b"0123456789"             # no write got through
    assert_serving(pod, osd)


def test_huge_read_count_is_capped(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    r = ctl.read(1, 1, 0, 0xFFFFFFFF)
    assert (r.status, r.eof, r.data) == (Status.OK, True, b"0123456789")
    assert ctl.read(1, 999, 0, 0xFFFFFFFF).status == Status.NOENT
    page = ctl.list(1, 0, 0xFFFFFFFF)                       # capped to a full page
    assert (page.status, page.ids, page.eof) == (Status.OK, [1], True)
    assert_serving(pod, osd)


def test_offsets_near_2_pow_64(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    for off in ((1 << 64) - 1, (1 << 64) - 5, 1 << 63, MAX_OFFSET):
        assert ctl.write(1, 1, off, b"abcdefgh").status == Status.FBIG, hex(off)
    assert ctl.read(1, 1, (1 << 64) - 1, 100).status == Status.FBIG
    r = ctl.read(1, 1, MAX_OFFSET - 4, 100)                 # legal, far past the end
    assert (r.status, r.eof, r.data) == (Status.OK, True, b"")
    big = struct.pack(">Q", (1 << 64) - 1)
    assert ctl.setattr(1, 1, [(1, 1, big)])[0] in (Status.FBIG, Status.INVAL)
    assert ctl.info(1, 1)[Info.LENGTH] == 10                # the length is unchanged
    assert_serving(pod, osd)


def test_ids_zero_and_unknown(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    assert ctl.read(0, 1, 0, 1).status in (Status.INVAL, Status.NOENT)
    assert ctl.read(1, 0, 0, 1).status in (Status.INVAL, Status.NOENT)
    assert ctl.remove_partition(0) in (Status.INVAL, Status.NOENT)
    assert ctl.flush(0, 5) in (Status.INVAL, Status.NOENT)
    assert ctl.set_cap_version(1, 0, 1)[0] in (Status.INVAL, Status.NOENT)
    assert_serving(pod, osd)


def test_oversized_record_and_broken_mark_close_only_that_connection(
        pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    ctl.rpc.send_raw(struct.pack(">I", 0x80000000 | (8 << 20)))  # an 8 MiB record
    with pytest.raises(ConnectionClosed):
        ctl.rpc.recv_record()
    assert_serving(pod, osd)


# ---- seeded fuzzing --------------------------------------------------------------

def mutate(rng: random.Random, data: bytes) -> bytes:
    """One random corruption: flipped bytes, a cut, an insertion, or a
    length field replaced by something hostile."""
    b = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0 and b:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1:
        del b[rng.randrange(len(b) + 1):]
    elif kind == 2:
        at = rng.randrange(len(b) + 1)
        b[at:at] = rng.randbytes(rng.choice([1, 3, 4, 8, 64]))
    elif kind == 3 and len(b) >= 4:
        at = rng.randrange(0, len(b) - 3) & ~3
        b[at:at + 4] = struct.pack(">I", rng.choice(
            [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, MAX_BATCH + 1, MAX_DATA + 1]))
    else:
        b = bytearray(rng.randbytes(rng.randrange(64)))
    return bytes(b)


def ping(ctl: OsdCtl) -> None:
    """A NULL whose reply proves every earlier record was dealt with
    (a record that is not a call gets no reply at all)."""
    xid = 0x5A5A0000 | random.getrandbits(16)
    ctl.rpc.send_record(oncrpc.encode_call(xid, ctl.rpc.prog, 1, Proc.NULL, b""))
    while True:
        try:
            reply = oncrpc.decode_reply(ctl.rpc.recv_record())
        except RpcError:
            continue
        if reply.xid == xid:
            return


def fuzz_group(pod: Pod, osd: OsdProcess, rounds: int, seed: int,
               send: Callable[[OsdCtl, random.Random], None]) -> dict[str, int]:
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    ctl = open_ctl(pod, osd)
    try:
        for _ in range(rounds):
            try:
                send(ctl, rng)
                ping(ctl)
                outcome = "answered"
            except (ConnectionClosed, ConnectionResetError, BrokenPipeError, socket.timeout):
                outcome = "closed"
                ctl.close()
                ctl = open_ctl(pod, osd)
            seen[outcome] = seen.get(outcome, 0) + 1
    finally:
        ctl.close()
    assert_serving(pod, osd)
    return seen


def test_fuzz_arguments(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    """Signed headers with mutated arguments: the decoders' problem."""
    outcomes: dict[int, int] = {}
    procs = list(VALID_ARGS)
    procs.remove(Proc.FORMAT)          # a fuzzed uuid cannot match, but keep it out

    def send(c: OsdCtl, rng: random.Random) -> None:
        proc = rng.choice(procs)
        try:
            c.call_signed(proc, mutate(rng, VALID_ARGS[proc]))
            stat = oncrpc.SUCCESS
        except RpcAccepted as e:
            stat = e.stat
        outcomes[stat] = outcomes.get(stat, 0) + 1

    seen = fuzz_group(pod, osd, 300, seed=1234, send=send)
    assert seen == {"answered": 300}                        # no record was dropped
    assert set(outcomes) <= {oncrpc.SUCCESS, oncrpc.GARBAGE_ARGS}
    assert outcomes.get(oncrpc.GARBAGE_ARGS, 0) > 50
    assert outcomes.get(oncrpc.SUCCESS, 0) > 10


def test_fuzz_whole_records(pod: Pod, osd: OsdProcess, ctl: OsdCtl) -> None:
    """Mutated headers too: most never get past authentication, some are
    not calls at all; none may hurt the target."""
    signer = Signer.for_key(osd.key, osd.osd_id)

    def send(c: OsdCtl, rng: random.Random) -> None:
        proc = rng.choice(list(VALID_ARGS))
        xid = c.rpc.next_xid()
        cred, verf, _ = signer.sign(xid, proc, VALID_ARGS[proc])
        record = oncrpc.encode_call(xid, c.rpc.prog, 1, proc, VALID_ARGS[proc], cred, verf)
        c.rpc.send_record(mutate(rng, record))

    seen = fuzz_group(pod, osd, 300, seed=99, send=send)
    assert sum(seen.values()) == 300
    with open_ctl(pod, osd) as c:
        assert c.statfs().osd_id == 1
