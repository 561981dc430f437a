"""Failures around the Pando metadata manager: an OSD holding a mirror
killed (reads fall back to the other mirror, writes go on degraded and
the mirror that comes back never serves what it missed), the write verifier when an
OSD restarts, unlinks while an OSD is down (the reaper retries), kill -9 of
Ganesha during a storm of creates, renames and writes (nothing
acknowledged is lost, pando-fsck finds nothing), and the admin interfaces
on dbus: Pando's cluster_status, ganesha_mgr and ganesha_stats."""
from __future__ import annotations

import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from pando_testing import nfs3
from pando_testing.cluster_map import wait_for
from pando_testing.cluster_status import cluster_status
from pando_testing.mds import PandoMds
from pando_testing.mds_files import (PARTITION, connect, fileid_of, new_file, object_bytes, objects,
                                     objects_of, ok)
from pando_testing.nfs3 import (NFS3_OK, FILE_SYNC, UNSTABLE, Nfs3Client, Sattr3,
                                status_name)
from pando_testing.oncrpc import ConnectionClosed, RpcError
from pando_testing.threads import RaisingThread, join_all

KIB = 1024


def mirror_contents(mds: PandoMds, objs: list[tuple[int, int]], size: int) -> list[bytes]:
    out = []
    for osd, oid in objs:
        data = object_bytes(mds, osd, oid)
        out.append(data[:size].ljust(size, b"\0"))
    return out


def restart_first_osd_of(mds: PandoMds, c: Nfs3Client, fh: bytes) -> None:
    """kill -9 and restart the OSD of the file's first component, and wait
    until the manager sees it back (a COMMIT while it is still down would
    find it unreachable and mark its copy stale instead: also no loss)."""
    victim = mds.osds[objects_of(mds, fileid_of(c, fh))[0][0] - 1]
    victim.kill9()
    victim.start()
    wait_for(f"OSD {victim.osd_id} reachable again",
             lambda: cluster_status(mds).osds[victim.osd_id].reachable, timeout=15)


# --- dbus --------------------------------------------------------------------------

def test_cluster_status_on_dbus(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    fh = new_file(c, root, "f")
    c.write_all(fh, 0, os.urandom(100 * KIB), FILE_SYNC)
    st = cluster_status(mds)
    assert st.ok and st.message == "OK"
    assert sorted(st.osds) == [o.osd_id for o in mds.osds]
    for o in mds.osds:
        s = st.osds[o.osd_id]
        assert (s.ctl, s.data) == (o.ctl_addr, f"{o.host}:{o.nfs_port}")
        assert s.reachable and s.last_error == 0 and s.failures == 0
    assert sum(s.calls for s in st.osds.values()) >= 4     # creates and writes of 2 mirrors
    assert (st.removals_done, st.removals_retried) == (0, 0)
    log = mds.log_text()
    assert "could not register /org/ganesha/nfsd/pando" not in log, \
        "the FSAL logs that its dbus path failed to register, yet it answers"
    assert "org.ganesha.nfsd.pando is on dbus" in log


def test_ganesha_mgr_and_ganesha_stats(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    fh = new_file(c, root, "f")
    data = os.urandom(100 * KIB)
    c.write_all(fh, 0, data, FILE_SYNC, 50 * KIB)
    assert c.read_all(fh, 0, len(data)) == data
    env = {**os.environ, **mds.dbus_env()}

    def run(*argv: str) -> str:
        cp = mds.pod.run(list(argv), env=env, check=False, timeout=60)
        assert cp.returncode == 0, f"{' '.join(argv)}: {cp.stdout}{cp.stderr}"
        return cp.stdout

    exports = run("ganesha_mgr", "show", "exports")
    m = re.search(r"^\s*1,\s+/pando,\s+(\d+),", exports, re.M)
    assert m, exports
    assert m.group(1) == "1", "export 1 does not show NFSv3 activity"
    glob = run("ganesha_stats")
    ops = re.search(r"Total NFSv3 ops: (\d+)", glob)
    assert ops and int(ops.group(1)) >= 4, glob
    io = run("ganesha_stats", "iov3", "1")
    r = re.search(r"READv3:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", io)
    w = re.search(r"WRITEv3:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", io)
    assert r and w, io
    assert int(r.group(2)) == len(data) and int(r.group(4)) == 0, io
    assert int(w.group(2)) >= len(data) and int(w.group(4)) == 0, io
    exp = run("ganesha_stats", "export")
    assert re.search(r"Export id: 1\s+Path: /pando\s+NFSv3 stats available: 1", exp), exp
    run("ganesha_stats", "enable", "all")
    ok(c.getattr(fh))
    full = run("ganesha_stats", "v3_full")
    assert "GETATTR" in full, full
    run("ganesha_stats", "reset")
    assert "Total NFSv3 ops: 0" in run("ganesha_stats")


# --- an OSD down ------------------------------------------------------------------------

def component_of(mds: PandoMds, osd_id: int, oid: int) -> int:
    cp = mds.osds[osd_id - 1].tool("getattr", str(PARTITION), str(oid))
    m = re.search(r"^component\s+(\d+)$", cp.stdout, re.M)
    assert m, cp.stdout
    return int(m.group(1))


def test_mirror_down_reads_fall_back_writes_never_corrupt(mds: PandoMds, c: Nfs3Client,
                                                           root: bytes) -> None:
    """One mirror's OSD killed, for each mirror in turn: reads return the
    file from the other mirror; every write is acknowledged degraded
    (ganesha-fsal/README.md, "Degraded writes": the application sees no
    error); once the OSD is back, the file reads exactly what was
    acknowledged, and the mirror that came back never serves bytes it
    missed (checked by killing the other one)."""
    # A fresh file for each mirror: a degraded write leaves the other stale
    # until repair, and a file with one current copy reads EIO without it.
    # Mirror 1 down (a write reaches mirror 0 before it fails on 1); mirror
    # 0 down (reads must fall back to mirror 1).
    for component in (1, 0):
        data = bytearray(os.urandom(300 * KIB))
        fh = new_file(c, root, f"mirrored{component}")
        c.write_all(fh, 0, bytes(data), FILE_SYNC)
        objs = objects_of(mds, fileid_of(c, fh))
        assert len(objs) == 2, objs
        victim_id = next(osd for osd, oid in objs if component_of(mds, osd, oid) == component)
        other_id = next(osd for osd, _ in objs if osd != victim_id)
        victim, other = mds.osds[victim_id - 1], mds.osds[other_id - 1]
        victim.kill9()
        for _ in range(2):
            assert c.read_all(fh, 0, len(data) + 10) == bytes(data), \
                f"read with OSD {victim_id} (mirror {component}) down"
        off = 1000
        for stable, where, what in ((FILE_SYNC, off, b"W" * 5000),
                                    (UNSTABLE, off + 70 * KIB, b"U" * 100),
                                    (FILE_SYNC, len(data), b"grow")):
            res = ok(c.write(fh, where, what, stable), f"WRITE at {where} with OSD {victim_id} down")
            if stable == UNSTABLE:
                # Acknowledged by a COMMIT with the write's verifier.
                cm = c.commit(fh)
                assert cm.status == NFS3_OK and cm.verf == res.verf, \
                    f"COMMIT after an accepted UNSTABLE write: {status_name(cm.status)}"
            data[where:where + len(what)] = what
        st = cluster_status(mds)
        assert not st.osds[victim_id].reachable, f"OSD {victim_id} down but reported reachable"
        assert st.osds[victim_id].last_error != 0 and st.osds[victim_id].failures > 0
        assert all(s.reachable for i, s in st.osds.items() if i != victim_id)
        a = ok(c.getattr(fh)).attrs
        assert a is not None and a.size == len(data), "the size is not the acknowledged one"
        assert c.read_all(fh, 0, len(data) + 10) == bytes(data)
        small = new_file(c, root, f"small{component}")      # the namespace goes on
        ok(c.write(small, 0, b"inline", FILE_SYNC))
        victim.start()
        wait_for(f"OSD {victim_id} back", lambda: c.read(fh, 0, 10).status == NFS3_OK)
        assert c.read_all(fh, 0, len(data) + 10) == bytes(data), \
            f"with OSD {victim_id} back, the file does not read what was acknowledged"
        # The mirror that came back alone: the acknowledged bytes, or EIO
        # (it is stale), never the bytes it missed.
        other.kill9()
        rres = c.read(fh, 0, len(data))
        if rres.status == NFS3_OK:
            assert c.read_all(fh, 0, len(data) + 10) == bytes(data), \
                f"OSD {victim_id}, back after missing writes, serves old bytes"
        else:
            assert rres.status == nfs3.NFS3ERR_IO, status_name(rres.status)
        other.start()
        wait_for(f"OSD {other_id} back", lambda: c.read(fh, 0, 10).status == NFS3_OK)
        assert c.read_all(fh, 0, len(data) + 10) == bytes(data)
        # The manager pings every OSD each second: all are back before the
        # next round kills another.
        wait_for("every OSD reachable again",
                 lambda: all(s.reachable for s in cluster_status(mds).osds.values()),
                 timeout=15)


def test_restarted_osd_is_used_again_at_once(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    """An OSD that restarts (kill -9, start) is usable as soon as it
    answers: no write or COMMIT to its files fails once it is back."""
    fh = new_file(c, root, "f")
    data = bytearray(os.urandom(300 * KIB))
    c.write_all(fh, 0, bytes(data), FILE_SYNC, 64 * KIB)
    victim_id = objects_of(mds, fileid_of(c, fh))[0][0]
    victim = mds.osds[victim_id - 1]
    victim.kill9()
    victim.start()
    time.sleep(3.0)                 # past any back-off the manager may have begun
    failed = []
    for i in range(8):
        piece = os.urandom(1000)
        res = c.write(fh, i * 30 * KIB, piece, FILE_SYNC if i % 2 else UNSTABLE)
        if res.status != NFS3_OK:
            failed.append(f"WRITE {i}: {status_name(res.status)}")
        else:
            data[i * 30 * KIB:i * 30 * KIB + 1000] = piece
        cres = c.commit(fh)
        if cres.status != NFS3_OK:
            failed.append(f"COMMIT {i}: {status_name(cres.status)}")
    st = cluster_status(mds).osds[victim_id]
    assert not failed, f"with OSD {victim_id} back for 3 s: {failed}; its status: {st}"
    assert c.read_all(fh, 0, len(data)) == bytes(data)
    assert st.reachable, f"OSD {victim_id} back for 3 s, still unreachable: {st}"
    # Written on both mirrors, not degraded onto one.
    objs = objects_of(mds, fileid_of(c, fh))
    contents = mirror_contents(mds, objs, len(data))
    current = [osd for (osd, _), got in zip(objs, contents) if got == bytes(data)]
    assert len(objs) == 2 and len(current) == 2, \
        f"writes after OSD {victim_id} came back: objects {objs}, current on OSDs {current}"


def test_commit_fails_when_an_osd_restarted_under_unstable_writes(
        mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    """An OSD that restarts may have lost UNSTABLE data it acknowledged.
    NFSv3 WRITE and COMMIT carry Ganesha 4.3's own write verifier, which an
    FSAL cannot change, so the manager fails that COMMIT instead: the
    client's fsync reports the loss, never a silent one.  Later unstable
    writes commit normally."""
    fh = new_file(c, root, "f")
    c.write_all(fh, 0, os.urandom(200 * KIB), FILE_SYNC)
    first = ok(c.write(fh, 0, b"unstable", UNSTABLE))
    assert first.committed == UNSTABLE
    restart_first_osd_of(mds, c, fh)
    res = c.commit(fh)
    assert res.status == nfs3.NFS3ERR_IO, \
        f"COMMIT after an OSD restarted under UNSTABLE writes: {status_name(res.status)}"
    assert ok(c.write(fh, 100, b"again", UNSTABLE)).verf == first.verf
    assert ok(c.commit(fh)).status == NFS3_OK


def test_commit_fails_when_an_osd_restarted_under_unstable_writes_of_an_evicted_file(
        mds_factory: Callable[..., PandoMds]) -> None:
    """As above, with the file's handle evicted from Ganesha's cache
    between its WRITE and the restart: what the manager knows of the file's
    uncommitted writes must outlive the handle, or the new handle's COMMIT
    succeeds over the lost bytes."""
    mds = mds_factory(4, object_pool=0, mdcache_entries=8)
    c = connect(mds)
    root = mds.root_handle()
    fh = new_file(c, root, "f")
    c.write_all(fh, 0, os.urandom(200 * KIB), FILE_SYNC)
    assert ok(c.write(fh, 0, b"unstable", UNSTABLE)).committed == UNSTABLE
    for i in range(64):                           # a cache of 8 evicts f's handle
        new_file(c, root, f"other{i}")
    restart_first_osd_of(mds, c, fh)
    res = c.commit(fh)
    assert res.status == nfs3.NFS3ERR_IO, \
        f"COMMIT after an OSD restarted under UNSTABLE writes: {status_name(res.status)}"
    assert ok(c.commit(fh)).status == NFS3_OK


def test_restart_of_ganesha_changes_the_write_verifier(mds: PandoMds, c: Nfs3Client,
                                                       root: bytes) -> None:
    fh = new_file(c, root, "f")
    v1 = ok(c.write(fh, 0, b"one", UNSTABLE)).verf
    time.sleep(1.1)
    mds.restart()
    with connect(mds) as c2:
        v2 = ok(c2.write(fh, 0, b"two", UNSTABLE)).verf
        assert ok(c2.commit(fh)).verf == v2
        assert v2 != v1


def test_unlink_while_an_osd_is_down_reaper_finishes_later(mds: PandoMds, c: Nfs3Client,
                                                           root: bytes) -> None:
    fhs = [new_file(c, root, f"f{i}") for i in range(3)]
    for fh in fhs:
        c.write_all(fh, 0, os.urandom(100 * KIB), FILE_SYNC)
    ids = [fileid_of(c, fh) for fh in fhs]
    placed = {i: objects_of(mds, i) for i in ids}
    # The OSD holding the most of these objects goes down.
    count: dict[int, int] = {}
    for objs in placed.values():
        for osd, _ in objs:
            count[osd] = count.get(osd, 0) + 1
    victim_id = max(count, key=lambda k: count[k])
    victim = mds.osds[victim_id - 1]
    victim.kill9()
    for i in range(3):
        ok(c.remove(root, f"f{i}"), "REMOVE with an OSD down")
    assert all(c.getattr(fh).status == nfs3.NFS3ERR_STALE for fh in fhs)
    # What the live OSDs hold goes; what the dead one holds waits.
    live = {(osd, oid) for objs in placed.values() for osd, oid in objs if osd != victim_id}
    wait_for("objects on the live OSDs removed",
             lambda: not any(oid in objects(mds).get(osd, set()) for osd, oid in live))
    st = wait_for("the reaper retrying", lambda: (s := cluster_status(mds)).removals_retried > 0 and s,
                  timeout=12)
    assert st.removals_done < 3
    victim.start()
    stuck = {oid for objs in placed.values() for osd, oid in objs if osd == victim_id}
    assert stuck and stuck <= objects(mds)[victim_id]
    t0 = time.monotonic()
    wait_for("objects on the restarted OSD removed by the reaper",
             lambda: not (stuck & objects(mds)[victim_id]), timeout=15)
    print(f"reaper finished {time.monotonic() - t0:.1f} s after the OSD came back")
    assert sum(len(v) for v in objects(mds).values()) == 0
    assert cluster_status(mds).removals_done >= 3


# --- kill -9 of Ganesha during a storm ---------------------------------------------------

@dataclass
class Acked:
    """What one storm worker saw acknowledged."""
    created: dict[str, bytes] = field(default_factory=dict)   # current name -> handle
    renamed: dict[str, str] = field(default_factory=dict)     # old name -> new name
    removed: dict[str, bytes] = field(default_factory=dict)   # name -> handle
    data: dict[bytes, bytes] = field(default_factory=dict)    # handle -> content
    dirs: dict[str, bytes] = field(default_factory=dict)
    in_flight: str = ""                                       # the op the crash cut short
    ops: int = 0
    errors: list[str] = field(default_factory=list)           # error replies before it
    failed: set[bytes] = field(default_factory=set)           # files a write failed on


def storm_worker(mds: PandoMds, d: bytes, k: int, acked: Acked, stop: threading.Event) -> None:
    """Creates, writes (FILE_SYNC, or UNSTABLE + COMMIT), renames, mkdirs
    and removes until the crash.  An error reply before the crash is
    recorded and the worker goes on: the crash is still tested."""
    rng = random.Random(k)
    try:
        cl = connect(mds)
    except OSError:
        return

    def op(what: str, fn):  # type: ignore[no-untyped-def]
        acked.in_flight = what
        try:
            return fn()
        except (nfs3.Nfs3StatusError, AssertionError) as e:
            acked.errors.append(f"{what}: {e}".splitlines()[0])
            return None

    try:
        i = 0
        while not stop.is_set():
            i += 1
            name = f"t{k}-{i}"
            res = op(f"CREATE {name}", lambda: ok(cl.create(d, name, nfs3.GUARDED,
                                                            Sattr3(mode=0o644))))
            if res is None or not res.fh:
                continue
            fh = res.fh
            acked.created[name] = fh
            if i % 3 == 0:
                content = rng.randbytes(rng.choice([300, 5000, 70 * KIB, 150 * KIB]))
                stable = rng.choice([FILE_SYNC, UNSTABLE])
                done = op(f"WRITE {name}", lambda: cl.write_all(fh, 0, content, stable, 64 * KIB))
                if done is not None and stable == UNSTABLE:
                    done = op(f"COMMIT {name}", lambda: ok(cl.commit(fh)))
                if done is not None:
                    acked.data[fh] = content
                else:
                    acked.failed.add(fh)
            old, new = f"t{k}-{i - 1}", f"r{k}-{i - 1}"
            if i % 4 == 0 and old in acked.created:
                if op(f"RENAME {old} {new}", lambda: ok(cl.rename(d, old, d, new))):
                    acked.created[new] = acked.created.pop(old)
                    acked.renamed[old] = new
            if i % 5 == 0:
                dres = op(f"MKDIR m{k}-{i}", lambda: ok(cl.mkdir(d, f"m{k}-{i}")))
                if dres is not None:
                    acked.dirs[f"m{k}-{i}"] = dres.fh
            # Removals of inline files only: object-backed ones would race the
            # reaper with the moves (test_data's test_moves_..._reaper_...).
            victim = f"t{k}-{i - 2}"
            small = len(acked.data.get(acked.created.get(victim, b""), b"")) <= 64 * KIB
            if i % 7 == 0 and victim in acked.created and small:
                if op(f"REMOVE {victim}", lambda: ok(cl.remove(d, victim))):
                    acked.removed[victim] = acked.created.pop(victim)
            acked.in_flight = ""
            acked.ops = i
    except (ConnectionClosed, RpcError, OSError):
        pass                     # the crash: acked.in_flight is what it cut short
    finally:
        cl.close()


def test_kill9_during_a_storm_loses_nothing_acknowledged(mds: PandoMds, root: bytes) -> None:
    with connect(mds) as c:
        d = ok(c.mkdir(root, "storm")).fh or b""
    workers = [Acked() for _ in range(4)]
    stop = threading.Event()
    threads = [RaisingThread(target=storm_worker, args=(mds, d, k, a, stop))
               for k, a in enumerate(workers)]
    for t in threads:
        t.start()
    time.sleep(2.5)
    mds.kill9()
    stop.set()
    join_all(threads, 30)
    assert sum(a.ops for a in workers) > 40, "the storm hardly ran"
    before = [f"worker {k}: {e}" for k, a in enumerate(workers) for e in a.errors]
    mds.start()
    with connect(mds) as c:
        listing = {e.text: e for e in c.readdir_all(d, 32768, plus=True)}
        problems: list[str] = []
        for k, a in enumerate(workers):
            cut = a.in_flight
            for name, fh in a.created.items():
                if cut == f"REMOVE {name}":
                    continue                  # may have landed
                res = c.getattr(fh)
                if res.status != NFS3_OK:
                    problems.append(f"acknowledged {name}: handle {status_name(res.status)}")
                    continue
                # Under its acknowledged name; a rename the crash cut short
                # may have landed or not.
                alt = cut.split()[2] if cut.startswith(f"RENAME {name} ") else None
                here = name in listing or (alt is not None and alt in listing)
                if not here:
                    problems.append(f"acknowledged {name}: not in the directory")
                if fh in a.data and not cut.endswith(f" {name}"):
                    try:
                        got = c.read_all(fh, 0, len(a.data[fh]) + 1)
                    except nfs3.Nfs3StatusError as e:
                        problems.append(f"acknowledged data of {name}: {e}")
                        continue
                    if got != a.data[fh]:
                        problems.append(f"acknowledged data of {name}: differs "
                                        f"({len(got)} of {len(a.data[fh])} bytes)")
            for old, new in a.renamed.items():
                if old in listing:
                    problems.append(f"renamed {old} -> {new}: old name still there")
            for name, fh in a.removed.items():
                if name in listing or c.getattr(fh).status != nfs3.NFS3ERR_STALE:
                    problems.append(f"acknowledged REMOVE {name} undone")
            for name, fh in a.dirs.items():
                if name not in listing or c.getattr(fh).status != NFS3_OK:
                    problems.append(f"acknowledged MKDIR {name} lost")
    code = mds.stop_ganesha()
    rc, out = mds.fsck()
    mds.start()                       # the fixture's teardown stops it cleanly
    assert code == 0, f"ganesha.nfsd exit status {code}"
    report = []
    if before:
        report.append(f"{len(before)} error replies before the crash: {before[:5]}")
    if problems:
        report.append(f"after the crash: {problems[:20]}")
    if rc != 0:
        report.append(f"pando-fsck exit {rc} (Ganesha stopped):\n{out}")
    assert not report, "\n".join(report)
