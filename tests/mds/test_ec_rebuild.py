"""Rebuild of erasure-coded files (ganesha-fsal/README.md, "Rebuild"): the
components an out OSD held are decoded from k of the others of their
group onto other OSDs, through the same job, task, progress and map
switch as mirrored files (tests/mds/test_rebuild.py).  Full redundancy is
back afterwards: with two more OSDs killed, every file still reads back
right, through the rebuilt components."""
from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

from pando_testing import nfs3
from pando_testing import mds_files
from pando_testing.cluster_map import (PREFIX, dbus_json, osd_entry, put_map,
                                       start_on_map, wait_epoch, wait_for)
from pando_testing.etcd import EtcdCluster
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.mds_files import BackgroundWriter, connect
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, Nfs3Client, Sattr3
from pando_testing.rebuild_jobs import progress, put_job

MDS_NAME = "mds-test"
KIB = 1024
SU = 16 * KIB
K = 4
ROW = K * SU
NOSDS = 7


def components(mds: PandoMds, path: str) -> list[tuple[int, int]]:
    return mds_files.components(mds, path, "rs")


def watch_job(etcd: EtcdCluster, job: int, timeout: float = 90) -> list[dict[str, Any]]:
    """Every distinct progress record seen until the job is done and the
    manager idle; the last is the final one."""
    seen: list[dict[str, Any]] = []

    def done() -> bool:
        p = progress(etcd, MDS_NAME)
        if p and (not seen or p != seen[-1]):
            seen.append(p)
        return job in p.get("jobs_done", []) and p.get("state") == "idle"
    wait_for(f"rebuild job {job} done", done, timeout)
    return seen


def start_cluster(etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Seven OSDs: an RS(4,2) file uses six, so a lost component has
    somewhere to go.  Slowed to 1 MiB/s so progress shows mid-job."""
    return start_on_map(etcd, mds_factory, NOSDS,
                        "\nRebuild_Parallel = 4;\nRebuild_Bandwidth_Mb = 1;\n",
                        inline_max=4096, object_pool=0)


def write_rs_files(mds: PandoMds, c: Nfs3Client, sizes: list[int]) -> dict[str, bytes]:
    d = mkdir(c, mds.root_handle(), "ec")
    ok, msg = layout_set(mds, "/ec", {"scheme": "rs", "k": 4, "m": 2, "stripe_unit": SU})
    assert ok, msg
    rng = random.Random(14)
    files = {}
    for i, size in enumerate(sizes):
        data = rng.randbytes(size)
        res = c.create(d, f"f{i}", nfs3.GUARDED, Sattr3(mode=0o644))
        assert res.status == NFS3_OK and res.fh is not None
        c.write_all(res.fh, 0, data, stable=FILE_SYNC, chunk=ROW)
        files[f"f{i}"] = data
    return files


def take_out(mds: PandoMds, etcd: EtcdCluster, osd: int) -> None:
    mds.osds[osd - 1].kill9()
    put_map(etcd.client(), 2, [osd_entry(o, up=o.osd_id != osd, in_=o.osd_id != osd)
                               for o in mds.osds])
    wait_epoch(mds, 2)


def reads_right(c: Nfs3Client, mds: PandoMds, files: dict[str, bytes], why: str) -> None:
    ec = c.lookup_fh(mds.root_handle(), "ec")
    for n, data in files.items():
        assert sha(c.read_all(c.lookup_fh(ec, n), 0, len(data))) == sha(data), f"{n}: {why}"


def kill_two_sparing(mds: PandoMds, keep: set[int]) -> list[int]:
    """Kills two live OSDs outside keep: every file is down to k components."""
    victims = [o for o in mds.osds if o.alive() and o.osd_id not in keep][:2]
    assert len(victims) == 2, keep
    for o in victims:
        o.kill9()
    return [o.osd_id for o in victims]


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_rs_components_on_an_out_osd_are_decoded_elsewhere_with_full_redundancy_back(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> None:
    mds = start_cluster(etcd, mds_factory)
    c = connect(mds)
    # whole rows, then a partial last row cut at a different unit each time
    files = write_rs_files(mds, c, [6 * ROW + i * 9 * KIB + 123 for i in range(8)])
    before = {n: components(mds, f"/ec/{n}") for n in files}
    counts = {o.osd_id: sum(o.osd_id in {x for x, _ in v} for v in before.values())
              for o in mds.osds}
    dead = max(counts, key=lambda o: counts[o])
    on_dead = [n for n in files if dead in {x for x, _ in before[n]}]
    assert len(on_dead) >= 3, counts
    by_id = {o.osd_id: o for o in mds.osds}
    take_out(mds, etcd, dead)
    put_job(etcd, 2, dead)
    seen = watch_job(etcd, 2)
    p = seen[-1]

    # Progress and counters as for mirrored files: files, bytes (what was
    # written: each lost component's share of its file, about size / k).
    assert p["files_done"] >= len(on_dead) and p["files_failed"] == 0, p
    assert p["bytes_done"] >= sum(len(files[n]) // K - SU for n in on_dead), p
    assert any(s.get("state") != "idle" and s.get("bytes_done", 0) > 0 for s in seen[:-1]), \
        f"no progress shown while the job ran: {seen}"
    ok, _, over_dbus = dbus_json(mds, "rebuild_status")
    assert ok and 2 in over_dbus["jobs_done"] and over_dbus["files_done"] == p["files_done"]
    assert not etcd.client().get_prefix(f"{PREFIX}rebuild/tasks/"), "tasks left in etcd"

    # The maps name the dead OSD no more; only its components moved.
    after = {n: components(mds, f"/ec/{n}") for n in files}
    homes: dict[str, int] = {}
    for n in files:
        assert dead not in {x for x, _ in after[n]}, f"{n} still on OSD {dead}"
        moved = [i for i, (b, a) in enumerate(zip(before[n], after[n])) if b != a]
        assert moved == [i for i, (x, _) in enumerate(before[n]) if x == dead], n
        if moved:
            homes[n] = after[n][moved[0]][0]
    reads_right(c, mds, files, "after the rebuild")

    # Two more OSDs killed, chosen to spare the most new homes: each file is
    # down to k components, the rebuilt one among them where it survives.
    alive = [o for o in by_id if o != dead]
    spared = sorted(alive, key=lambda o: -sum(h == o for h in homes.values()))
    victims = spared[-2:]
    proved = [n for n, h in homes.items() if h not in victims]
    assert len(proved) >= len(homes) // 2, (homes, victims)
    for v in victims:
        by_id[v].kill9()
    reads_right(c, mds, files, f"reads wrong with OSDs {victims} killed too ({homes})")


def test_an_rs_file_written_during_its_rebuild_loses_nothing(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> None:
    # 1 MiB/s: a component of the 8 MiB file (2 MiB) takes about 2 s,
    # written meanwhile, then again with its writers held.
    mds = start_cluster(etcd, mds_factory)
    c = connect(mds)
    files = write_rs_files(mds, c, [128 * ROW])
    data = bytearray(files["f0"])
    fh = c.lookup_fh(c.lookup_fh(mds.root_handle(), "ec"), "f0")
    before = components(mds, "/ec/f0")
    victim = before[0][0]                         # data column 0
    take_out(mds, etcd, victim)
    put_job(etcd, 2, victim)
    rng = random.Random(7)

    def piece(_: int) -> tuple[int, bytes]:
        return rng.randrange(len(data) - 9000), rng.randbytes(rng.randrange(1, 9000))

    with BackgroundWriter(mds, fh, data, piece, pause=0.02) as writer:
        watch_job(etcd, 2)
    assert writer.written > 10, writer.written
    assert "was written during its rebuild: copied again" in mds.log_text()
    after = components(mds, "/ec/f0")
    assert victim not in {x for x, _ in after}
    home = after[0][0]
    reads_right(c, mds, {"f0": bytes(data)}, "after the rebuild")
    killed = kill_two_sparing(mds, {home})
    reads_right(c, mds, {"f0": bytes(data)}, f"with OSDs {killed} killed too")
    print(f"writes told to retry during the freeze: {writer.delayed}")


def test_a_stale_rs_component_is_decoded_where_it_is_once_its_osd_answers(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> None:
    mds = start_cluster(etcd, mds_factory)
    c = connect(mds)
    files = write_rs_files(mds, c, [16 * ROW + 5000])
    data = bytearray(files["f0"])
    fh = c.lookup_fh(c.lookup_fh(mds.root_handle(), "ec"), "f0")
    comps = components(mds, "/ec/f0")
    osd = comps[K][0]                             # parity 0
    mds.osds[osd - 1].stop()
    missed = random.Random(9).randbytes(3 * ROW)  # changes every parity unit of 3 rows
    c.write_all(fh, 5 * ROW, missed, stable=FILE_SYNC)
    data[5 * ROW:8 * ROW] = missed
    mds.osds[osd - 1].start()
    # The manager's own stale record becomes a task (no job) within ~10 s.
    p = wait_for("the stale component caught up", lambda: (
        (p := progress(etcd, MDS_NAME)).get("files_done", 0) >= 1 and p.get("state") == "idle"
        and p), timeout=60)
    assert components(mds, "/ec/f0") == comps, "caught up in place, not moved"
    # decoded whole: one parity unit per row of the file
    assert p["bytes_done"] == 17 * SU, p
    killed = kill_two_sparing(mds, {osd})
    reads_right(c, mds, {"f0": bytes(data)}, f"with OSDs {killed} killed too")
