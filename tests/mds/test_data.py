"""File data through the Pando metadata manager over NFSv3: small files
inline in the namespace store, the move to mirrored OSD objects past
Inline_Max (64 KiB), holes, truncation, UNSTABLE writes with COMMIT and
FILE_SYNC, concurrent writers crossing the threshold, and the objects of
removed or truncated files disappearing from the OSDs (the reaper).
Objects are counted and read on the OSDs themselves with pando-osd-tool
(partition 1)."""
from __future__ import annotations

import os
import random
import threading
import time

import pytest

from pando_testing import nfs3
from pando_testing.cluster_map import wait_for
from pando_testing.mds import PandoMds
from pando_testing.mds_files import (connect, fileid_of, new_file, object_attrs, object_bytes,
                                     objects, objects_of, ok)
from pando_testing.nfs3 import (NFS3_OK, DATA_SYNC, FILE_SYNC, UNSTABLE, Nfs3Client, Sattr3,
                                status_name)
from pando_testing.threads import RaisingThread, join_all

KIB = 1024
MIB = 1 << 20
INLINE_MAX = 64 * KIB


def size_of(c: Nfs3Client, fh: bytes) -> int:
    a = ok(c.getattr(fh)).attrs
    assert a is not None
    return a.size


def total_objects(mds: PandoMds) -> int:
    return sum(len(v) for v in objects(mds).values())


def check_mirrors(mds: PandoMds, fileid: int, want: bytes) -> None:
    """Two objects on two OSDs, each holding the file's bytes (objects are
    sparse: a short object reads as zeros to the size)."""
    objs = objects_of(mds, fileid)
    assert len(objs) == mds.mirrors, f"objects of file {fileid}: {objs}"
    assert len({osd for osd, _ in objs}) == mds.mirrors, f"mirrors share an OSD: {objs}"
    for osd, oid in objs:
        data = object_bytes(mds, osd, oid)
        assert len(data) <= len(want) or not any(data[len(want):]), \
            f"object {oid} on OSD {osd} holds bytes past the file's end"
        data = data[:len(want)].ljust(len(want), b"\0")
        assert data == want, f"object {oid} on OSD {osd} differs from the file"


# --- inline data and the move to objects ---------------------------------------------------

def test_small_files_stay_inline(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    rng = random.Random(1)
    sizes = [1, 100, 4095, 4096, 4097, 30_000, INLINE_MAX - 1, INLINE_MAX]
    files = {}
    for n in sizes:
        data = rng.randbytes(n)
        fh = new_file(c, root, f"s{n}")
        chunk = rng.choice([512, 4096, 65536])
        c.write_all(fh, 0, data, rng.choice([UNSTABLE, FILE_SYNC]), chunk)
        files[n] = (fh, data)
    ok(c.commit(files[1][0]))
    for n, (fh, data) in files.items():
        assert size_of(c, fh) == n
        assert c.read_all(fh, 0, n + 100) == data, f"{n}-byte file"
        # Reads at odd places and sizes.
        for off, cnt in ((n // 3, 1000), (n - 1, 10), (0, 1)):
            assert ok(c.read(fh, off, cnt)).data == data[off:off + cnt]
    assert total_objects(mds) == 0, "a file within Inline_Max got objects"


def test_growing_past_inline_max_moves_to_objects(mds: PandoMds, c: Nfs3Client,
                                                  root: bytes) -> None:
    data = os.urandom(INLINE_MAX + 50_000)
    fh = new_file(c, root, "grows")
    c.write_all(fh, 0, data[:INLINE_MAX], FILE_SYNC, 16 * KIB)
    assert total_objects(mds) == 0
    # One byte more: the file moves to two mirrored objects.
    c.write_all(fh, INLINE_MAX, data[INLINE_MAX:INLINE_MAX + 1], FILE_SYNC)
    fileid = fileid_of(c, fh)
    assert len(objects_of(mds, fileid)) == 2
    c.write_all(fh, INLINE_MAX + 1, data[INLINE_MAX + 1:], FILE_SYNC, 20_000)
    assert size_of(c, fh) == len(data)
    assert c.read_all(fh, 0, len(data) + 1) == data
    for off, cnt in ((0, 100), (INLINE_MAX - 10, 20), (INLINE_MAX, 1), (70_000, 40_000)):
        assert ok(c.read(fh, off, cnt)).data == data[off:off + cnt], (off, cnt)
    check_mirrors(mds, fileid, data)
    for osd, oid in objects_of(mds, fileid):
        a = object_attrs(mds, osd, oid)
        assert a["length"] <= len(data)


def test_single_write_straddling_the_threshold(mds: PandoMds, c: Nfs3Client,
                                               root: bytes) -> None:
    fh = new_file(c, root, "straddle")
    head = os.urandom(60 * KIB)
    c.write_all(fh, 0, head, FILE_SYNC)
    body = os.urandom(20 * KIB)         # 60 KiB .. 80 KiB in one WRITE
    res = ok(c.write(fh, len(head), body, FILE_SYNC))
    done = res.count
    if done < len(body):                # a short write: the client sends the rest
        c.write_all(fh, len(head) + done, body[done:], FILE_SYNC)
    want = head + body
    assert c.read_all(fh, 0, len(want) + 10) == want
    check_mirrors(mds, fileid_of(c, fh), want)


def test_big_file_in_many_writes(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    rng = random.Random(2)
    data = rng.randbytes(3 * MIB + 123)
    fh = new_file(c, root, "big")
    off = 0
    while off < len(data):                   # irregular chunks, some past a stripe unit
        n = rng.choice([1000, 4096, 65536, 300_000, MIB])
        c.write_all(fh, off, data[off:off + n], UNSTABLE, MIB)
        off += n
    ok(c.commit(fh))
    assert size_of(c, fh) == len(data)
    assert c.read_all(fh, 0, len(data)) == data
    for _ in range(20):
        o = rng.randrange(len(data))
        n = rng.choice([1, 4095, 70_000, MIB])
        assert ok(c.read(fh, o, n)).data == data[o:o + n], (o, n)
    res = ok(c.read(fh, len(data) - 5, 100))
    assert (res.data, res.eof) == (data[-5:], True)
    res = ok(c.read(fh, len(data), 100))
    assert (res.data, res.eof) == (b"", True)
    check_mirrors(mds, fileid_of(c, fh), data)


def test_holes_read_as_zeros(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    # Inline: a write past the end leaves zeros before it.
    small = new_file(c, root, "inline-hole")
    ok(c.write(small, 10_000, b"end", FILE_SYNC))
    assert size_of(c, small) == 10_003
    assert c.read_all(small, 0, 20_000) == bytes(10_000) + b"end"
    # Objects: scattered writes over 5 MiB.
    want = bytearray(5 * MIB + 7)
    fh = new_file(c, root, "sparse")
    for off, n in ((0, 10), (200 * KIB, 5000), (3 * MIB - 3, 6), (5 * MIB, 7),
                   (MIB - 100, 200)):
        chunk = os.urandom(n)
        ok(c.write(fh, off, chunk, FILE_SYNC))
        want[off:off + n] = chunk
    assert size_of(c, fh) == len(want)
    assert c.read_all(fh, 0, len(want)) == bytes(want)
    assert ok(c.read(fh, 4 * MIB, 4096)).data == bytes(4096)
    # A file made big by SETATTR alone is all hole.
    h = new_file(c, root, "all-hole")
    ok(c.setattr(h, Sattr3(size=2 * MIB)))
    assert size_of(c, h) == 2 * MIB
    assert c.read_all(h, 0, 2 * MIB) == bytes(2 * MIB)
    ok(c.write(h, MIB, b"mid", FILE_SYNC))
    assert c.read_all(h, 0, 2 * MIB) == bytes(MIB) + b"mid" + bytes(MIB - 3)


@pytest.mark.parametrize("size", [300 * KIB, 40 * KIB], ids=["objects", "inline"])
def test_truncate_down_then_up_reads_zeros(mds: PandoMds, c: Nfs3Client, root: bytes,
                                           size: int) -> None:
    data = os.urandom(size)
    fh = new_file(c, root, "t")
    c.write_all(fh, 0, data, FILE_SYNC)
    cut = size // 3 + 7
    ok(c.setattr(fh, Sattr3(size=cut)))
    assert size_of(c, fh) == cut
    assert c.read_all(fh, 0, size) == data[:cut]
    ok(c.setattr(fh, Sattr3(size=size)))
    back = c.read_all(fh, 0, size + 10)
    assert back[:cut] == data[:cut]
    assert back[cut:] == bytes(size - cut), "the tail after truncate-then-extend is not zeros"
    # Extending by a write past the end leaves a hole of zeros too.
    ok(c.setattr(fh, Sattr3(size=cut)))
    ok(c.write(fh, size + 1000, b"after", FILE_SYNC))
    back = c.read_all(fh, 0, size + 2000)
    assert back == data[:cut] + bytes(size + 1000 - cut) + b"after"
    if size > INLINE_MAX:
        check_mirrors(mds, fileid_of(c, fh), back)


def test_truncate_to_zero_drops_the_objects(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    fh = new_file(c, root, "t0")
    c.write_all(fh, 0, os.urandom(200 * KIB), FILE_SYNC)
    fileid = fileid_of(c, fh)
    assert len(objects_of(mds, fileid)) == 2
    ok(c.setattr(fh, Sattr3(size=0)))
    assert size_of(c, fh) == 0
    assert ok(c.read(fh, 0, 100)).data == b""
    wait_for("objects of a file truncated to 0 removed", lambda: total_objects(mds) == 0)
    # It starts over inline, and can move again.
    ok(c.write(fh, 0, b"small again", FILE_SYNC))
    assert c.read_all(fh, 0, 100) == b"small again"
    assert total_objects(mds) == 0
    more = os.urandom(100 * KIB)
    c.write_all(fh, 0, more, FILE_SYNC)
    assert c.read_all(fh, 0, len(more)) == more
    check_mirrors(mds, fileid, more)


# --- stability --------------------------------------------------------------------------

@pytest.mark.parametrize("size", [10 * KIB, 500 * KIB], ids=["inline", "objects"])
def test_unstable_writes_commit_and_file_sync(mds: PandoMds, c: Nfs3Client, root: bytes,
                                              size: int) -> None:
    data = os.urandom(size)
    fh = new_file(c, root, "u")
    verfs = set()
    for off in range(0, size, 32 * KIB):
        res = ok(c.write(fh, off, data[off:off + 32 * KIB], UNSTABLE))
        assert res.count == len(data[off:off + 32 * KIB])
        assert res.committed in (UNSTABLE, DATA_SYNC, FILE_SYNC)
        assert len(res.verf) == 8
        verfs.add(res.verf)
    assert len(verfs) == 1, "the write verifier changed while nothing restarted"
    verf = verfs.pop()
    cm = ok(c.commit(fh))
    assert cm.verf == verf, "COMMIT's verifier differs from the writes'"
    assert cm.wcc is not None and cm.wcc.after is not None and cm.wcc.after.size == size
    assert c.read_all(fh, 0, size + 1) == data
    # Stable writes say so.
    res = ok(c.write(fh, 5, b"FILESYNC", FILE_SYNC))
    assert res.committed == FILE_SYNC and res.verf == verf
    res = ok(c.write(fh, 20, b"DATASYNC", DATA_SYNC))
    assert res.committed in (DATA_SYNC, FILE_SYNC)
    # Everything committed survives a restart of Ganesha (the verifier's
    # change is test_failures' test_restart_of_ganesha_changes_the_write_verifier).
    mds.restart()
    with connect(mds) as c2:
        want = bytearray(data)
        want[5:13] = b"FILESYNC"
        want[20:28] = b"DATASYNC"
        assert c2.read_all(fh, 0, size + 1) == bytes(want)
        res = ok(c2.write(fh, 0, b"x", UNSTABLE))
        assert ok(c2.commit(fh)).verf == res.verf
        want[0:1] = b"x"
        assert c2.read_all(fh, 0, size + 1) == bytes(want)


# --- concurrency ------------------------------------------------------------------------

def test_concurrent_writers_across_the_threshold(mds: PandoMds, root: bytes) -> None:
    """Eight files written by four connections at once, each crossing
    Inline_Max; and one file written by two connections in disjoint ranges
    while it moves to objects."""
    rng = random.Random(3)
    with connect(mds) as c:
        fhs = [new_file(c, root, f"w{i}") for i in range(8)]
        shared = new_file(c, root, "shared")
    datas = [rng.randbytes(rng.randrange(70 * KIB, 400 * KIB)) for _ in fhs]
    shared_data = rng.randbytes(256 * KIB)

    def worker(k: int) -> None:
        with connect(mds) as w:
            for i in range(k, len(fhs), 4):
                w.write_all(fhs[i], 0, datas[i], UNSTABLE, 16 * KIB)
                ok(w.commit(fhs[i]))
            # Interleaved 8 KiB pieces of the shared file: k even/odd halves.
            for off in range((k % 2) * 8 * KIB, len(shared_data), 16 * KIB):
                w.write_all(shared, off,
                            shared_data[off:off + 8 * KIB], FILE_SYNC)

    threads = [RaisingThread(target=worker, args=(k,), name=f"worker {k}") for k in range(4)]
    for t in threads:
        t.start()
    join_all(threads)
    with connect(mds) as c:
        for i, fh in enumerate(fhs):
            assert c.read_all(fh, 0, len(datas[i]) + 1) == datas[i], f"file w{i}"
        assert c.read_all(shared, 0, len(shared_data) + 1) == shared_data
        for i, fh in enumerate(fhs):
            check_mirrors(mds, fileid_of(c, fh), datas[i])
        check_mirrors(mds, fileid_of(c, shared), shared_data)
    assert total_objects(mds) == 2 * (len(fhs) + 1), "objects leaked by the moves"


# --- removal ------------------------------------------------------------------------------

def test_unlink_removes_the_objects(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    a, b = new_file(c, root, "a"), new_file(c, root, "b")
    c.write_all(a, 0, os.urandom(300 * KIB), FILE_SYNC)
    keep = os.urandom(100 * KIB)
    c.write_all(b, 0, keep, FILE_SYNC)
    ida, idb = fileid_of(c, a), fileid_of(c, b)
    assert len(objects_of(mds, ida)) == 2 and len(objects_of(mds, idb)) == 2
    t0 = time.monotonic()
    ok(c.remove(root, "a"))
    wait_for("objects of the removed file gone", lambda: not objects_of(mds, ida))
    print(f"objects removed {time.monotonic() - t0:.2f} s after REMOVE")
    assert len(objects_of(mds, idb)) == 2, "another file's objects went too"
    # A second link keeps the objects; the last one removes them.
    ok(c.link(b, root, "b2"))
    ok(c.remove(root, "b"))
    time.sleep(1.0)
    assert len(objects_of(mds, idb)) == 2
    assert c.read_all(b, 0, len(keep)) == keep
    # Renaming another file over the last name removes them too.
    cfh = new_file(c, root, "c")
    ok(c.write(cfh, 0, b"small", FILE_SYNC))
    ok(c.rename(root, "c", root, "b2"))
    wait_for("objects of a file renamed over gone", lambda: total_objects(mds) == 0)
    assert c.getattr(b).status == nfs3.NFS3ERR_STALE
    assert c.read_all(cfh, 0, 10) == b"small"


def test_moves_to_objects_while_the_reaper_removes_other_files(mds: PandoMds, c: Nfs3Client,
                                                               root: bytes) -> None:
    """Files moving to objects while the reaper works through a batch of
    removals: every acknowledged byte must stay readable (the reaper may
    only remove objects no file owns)."""
    for i in range(60):
        fh = new_file(c, root, f"victim{i}")
        ok(c.write(fh, 0, b"v" * (INLINE_MAX + 1000), FILE_SYNC))
    stop = threading.Event()
    written: list[tuple[str, bytes, bytes]] = []

    def mover(k: int) -> None:
        rng = random.Random(k)
        with connect(mds) as w:
            i = 0
            while not stop.is_set():
                i += 1
                name = f"mover{k}-{i}"
                fh = new_file(w, root, name)
                data = rng.randbytes(INLINE_MAX + rng.randrange(1, 20_000))
                w.write_all(fh, 0, data, FILE_SYNC, 128 * KIB)
                written.append((name, fh, data))

    threads = [RaisingThread(target=mover, args=(k,), name=f"mover {k}") for k in range(2)]
    for t in threads:
        t.start()
    try:
        for batch in range(3):      # 20 removals at once: the reaper has a batch to chew
            calls = [(nfs3.PROC_REMOVE, nfs3.remove_args(root, f"victim{i}"))
                     for i in range(batch * 20, batch * 20 + 20)]
            assert all(r.status == NFS3_OK for r in c.pipeline(calls, 32))  # type: ignore[attr-defined]
            time.sleep(0.3)
        deadline = time.monotonic() + 10          # a loaded machine: let the movers run
        while len(written) < 40 and time.monotonic() < deadline and all(t.is_alive() for t in threads):
            time.sleep(0.1)
    finally:
        stop.set()
        join_all(threads)
    assert len(written) > 40, "the movers hardly ran"
    time.sleep(1.0)                 # let the reaper finish its passes
    lost = []
    for name, fh, data in written:
        res = c.read(fh, 0, len(data) + 1)
        if res.status != NFS3_OK or res.data != data:
            lost.append((name, fileid_of(c, fh), status_name(res.status)))
    if lost:
        owners: dict[int, int] = {}
        for osd, oids in objects(mds).items():
            for oid in oids:
                owner = object_attrs(mds, osd, oid).get("owner_file", 0)
                owners[owner] = owners.get(owner, 0) + 1
        pytest.fail(f"{len(lost)} of {len(written)} acknowledged files lost their data: " +
                    ", ".join(f"{n} (file {i}): READ {s_}, {owners.get(i, 0)} objects left"
                              for n, i, s_ in lost[:5]))
    wait_for("the victims' objects removed",
             lambda: total_objects(mds) == 2 * len(written))
