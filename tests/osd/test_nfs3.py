"""Object I/O through pando-osd's NFSv3 data server: what a flexfiles client
does with a layout's handle.  Objects are made over the control protocol
(pando-osd-tool); every reply is decoded strictly (pando_testing.nfs3)."""
from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from typing import Callable, Iterator

import pytest

from pando_testing import nfs3
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import NFS3_OK, Nfs3Client
from pando_testing.threads import RaisingThread, join_all

MIB = 1 << 20


@pytest.fixture
def client(osd: OsdProcess) -> Iterator[Nfs3Client]:
    with osd.nfs3() as c:
        yield c


def write_all(c: Nfs3Client, fh: bytes, offset: int, data: bytes, chunk: int,
              stable: int = nfs3.UNSTABLE) -> bytes:
    """Writes data in chunk-sized WRITEs; returns the verifier they all gave."""
    verfs = set()
    for at in range(0, len(data), chunk):
        res = c.write(fh, offset + at, data[at:at + chunk], stable)
        assert res.status == NFS3_OK, f"WRITE at {offset + at}: {res.status}"
        assert res.count == len(data[at:at + chunk])
        verfs.add(res.verf)
    assert len(verfs) == 1, "the write verifier changed while the target ran"
    return verfs.pop()


def test_null_fsinfo_fsstat_pathconf(client: Nfs3Client, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(1)
    client.null()

    info = client.fsinfo(fh)
    assert info.status == NFS3_OK
    assert (info.rtmax, info.wtmax) == (MIB, MIB)
    assert (info.rtpref, info.wtpref, info.dtpref) == (MIB, MIB, 4096)
    assert info.maxfilesize == 2**63 - 1
    assert info.time_delta_ns == 1
    assert info.properties == nfs3.FSF3_HOMOGENEOUS | nfs3.FSF3_CANSETTIME
    assert info.attrs is not None and info.attrs.type == nfs3.NF3REG

    st = client.fsstat(fh)
    assert st.status == NFS3_OK
    assert st.tbytes > 0 and 0 < st.fbytes <= st.tbytes and st.abytes == st.fbytes
    assert st.tfiles >= st.ffiles + 1 and st.afiles == st.ffiles

    pc = client.pathconf(fh)
    assert pc.status == NFS3_OK
    assert (pc.linkmax, pc.name_max) == (1, 255)
    assert pc.no_trunc and pc.chown_restricted and pc.case_preserving
    assert not pc.case_insensitive


def test_write_read_round_trip_and_attributes(client: Nfs3Client,
                                              make_object: Callable[[int], bytes]) -> None:
    fh = make_object(7)
    empty = client.getattr(fh)
    assert empty.status == NFS3_OK and empty.attrs is not None
    assert empty.attrs.size == 0 and empty.attrs.type == nfs3.NF3REG
    assert empty.attrs.nlink == 1 and empty.attrs.mode == 0o644
    assert empty.attrs.fileid != 0

    before = time.time_ns()
    w = client.write(fh, 0, b"hello, pando")
    assert w.status == NFS3_OK
    assert (w.count, w.committed, len(w.verf)) == (12, nfs3.UNSTABLE, 8)
    assert w.wcc is not None and w.wcc.after is not None and w.wcc.after.size == 12

    r = client.read(fh, 0, 100)
    assert r.status == NFS3_OK
    assert (r.data, r.count, r.eof) == (b"hello, pando", 12, True)
    assert r.attrs is not None and r.attrs.size == 12

    a = client.getattr(fh)
    assert a.status == NFS3_OK and a.attrs is not None
    assert a.attrs.size == 12
    assert a.attrs.fileid == empty.attrs.fileid and a.attrs.fsid == empty.attrs.fsid
    # the data mtime is the write's, to the clock's resolution
    assert before - 10**9 <= a.attrs.mtime_ns <= time.time_ns() + 10**9
    assert a.attrs.mtime_ns >= empty.attrs.mtime_ns
    assert a.attrs.ctime_ns >= a.attrs.mtime_ns

    time.sleep(0.01)
    assert client.write(fh, 6, b"PANDO!", nfs3.FILE_SYNC).committed == nfs3.FILE_SYNC
    b = client.getattr(fh).attrs
    assert b is not None and b.size == 12 and b.mtime_ns > a.attrs.mtime_ns
    assert client.read(fh, 0, 12).data == b"hello,PANDO!"

    other = make_object(8)
    oa = client.getattr(other).attrs
    assert oa is not None and oa.fileid != a.attrs.fileid and oa.size == 0


def test_stable_modes_and_verifier(client: Nfs3Client, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(2)
    got = {how: client.write(fh, 4096 * how, b"x" * 4096, how) for how in
           (nfs3.UNSTABLE, nfs3.DATA_SYNC, nfs3.FILE_SYNC)}
    assert got[nfs3.UNSTABLE].committed == nfs3.UNSTABLE
    assert got[nfs3.DATA_SYNC].committed == nfs3.FILE_SYNC
    assert got[nfs3.FILE_SYNC].committed == nfs3.FILE_SYNC
    c = client.commit(fh)
    assert c.status == NFS3_OK and c.wcc is not None and c.wcc.after is not None
    assert c.wcc.after.size == 3 * 4096
    assert {r.verf for r in got.values()} == {c.verf}


def test_eof(client: Nfs3Client, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(3)
    data = os.urandom(10000)
    write_all(client, fh, 0, data, 4096)
    cases = [  # offset, count -> bytes back, eof
        (0, 10000, 10000, True),
        (0, 9999, 9999, False),
        (9999, 1, 1, True),
        (5000, 10000, 5000, True),
        (10000, 10, 0, True),
        (1 << 40, 4096, 0, True),
        (0, 0, 0, False),
    ]
    for offset, count, n, eof in cases:
        r = client.read(fh, offset, count)
        assert r.status == NFS3_OK
        assert (len(r.data), r.count, r.eof) == (n, n, eof), (offset, count)
        assert r.data == data[offset:offset + n]


def test_large_object_in_1mib_requests(client: Nfs3Client,
                                       make_object: Callable[[int], bytes]) -> None:
    fh = make_object(4)
    size = 64 * MIB
    data = random.Random(4).randbytes(size)
    write_all(client, fh, 0, data, MIB)
    assert client.commit(fh).status == NFS3_OK
    assert client.getattr(fh).attrs.size == size  # type: ignore[union-attr]

    digest = hashlib.sha256()
    offset = 0
    while True:
        r = client.read(fh, offset, MIB)
        assert r.status == NFS3_OK and r.count == len(r.data)
        digest.update(r.data)
        offset += r.count
        if r.eof:
            break
        assert r.count == MIB
    assert offset == size
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_sparse_object_reads_zeros_in_holes(client: Nfs3Client,
                                            make_object: Callable[[int], bytes]) -> None:
    fh = make_object(5)
    client.write(fh, 3 * MIB + 17, b"tail")
    client.write(fh, MIB, b"middle")
    attrs = client.getattr(fh).attrs
    assert attrs is not None and attrs.size == 3 * MIB + 21
    assert attrs.used < attrs.size  # the holes take no space
    back = client.read_all(fh, 0, attrs.size)
    expect = bytearray(attrs.size)
    expect[MIB:MIB + 6] = b"middle"
    expect[3 * MIB + 17:] = b"tail"
    assert back == bytes(expect)
    hole = client.read(fh, 2 * MIB, 4096)
    assert hole.data == bytes(4096) and not hole.eof


def test_4k_requests(client: Nfs3Client, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(6)
    data = os.urandom(256 * 1024)
    write_all(client, fh, 0, data, 4096, nfs3.FILE_SYNC)
    assert client.read_all(fh, 0, len(data), chunk=4096) == data


def test_concurrent_writers(osd: OsdProcess, make_object: Callable[[int], bytes]) -> None:
    """Four connections at once: two write disjoint halves of one object, two
    write their own objects; every byte lands where it was sent."""
    shared, own1, own2 = make_object(10), make_object(11), make_object(12)
    size = 4 * MIB
    blobs = {k: random.Random(k).randbytes(size) for k in range(3)}
    plan = [  # handle, offset in object, bytes
        (shared, 0, blobs[0][:size // 2]),
        (shared, size // 2, blobs[0][size // 2:]),
        (own1, 0, blobs[1]),
        (own2, 0, blobs[2]),
    ]
    start = threading.Barrier(len(plan))

    def writer(fh: bytes, offset: int, data: bytes) -> None:
        with osd.nfs3() as c:
            start.wait()
            write_all(c, fh, offset, data, 64 * 1024)
            assert c.commit(fh).status == NFS3_OK

    threads = [RaisingThread(target=writer, args=p) for p in plan]
    for t in threads:
        t.start()
    join_all(threads, 60)
    with osd.nfs3() as c:
        for fh, blob in ((shared, blobs[0]), (own1, blobs[1]), (own2, blobs[2])):
            assert c.getattr(fh).attrs.size == size  # type: ignore[union-attr]
            assert c.read_all(fh, 0, size) == blob


def test_access_follows_rights(client: Nfs3Client, make_object: Callable[[int], bytes]) -> None:
    fh = make_object(20)
    res = client.access(fh, nfs3.ACCESS3_ALL)
    assert res.status == NFS3_OK and res.attrs is not None
    assert res.access == nfs3.ACCESS3_READ | nfs3.ACCESS3_MODIFY | nfs3.ACCESS3_EXTEND
    assert client.access(fh, nfs3.ACCESS3_READ).access == nfs3.ACCESS3_READ
    assert client.access(fh, nfs3.ACCESS3_DELETE).access == 0


def test_other_procedures_are_not_supported(client: Nfs3Client,
                                            make_object: Callable[[int], bytes]) -> None:
    """Each answers NFS3ERR_NOTSUPP with its own failure arm: attributes
    absent, nothing more."""
    fh = make_object(21)
    for proc, words in nfs3.NOTSUPP_FAIL_WORDS.items():
        u = client.call_raw(proc, nfs3.fh_args(fh) + b"\0" * 64)
        assert u.u32() == nfs3.NFS3ERR_NOTSUPP, proc
        assert [u.u32() for _ in range(words)] == [0] * words, proc
        u.done()
