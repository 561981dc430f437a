"""Rebuild (ganesha-fsal/README.md, "Rebuild"): the metadata manager puts
a file's lost components back on other OSDs, declustered, and catches a
stale component up where it is.

The cluster map and the rebuild jobs are written into etcd by hand here,
as the leading mgr writes them (mgr/README.md, "Rebuild and scrub"); the
manager finds the files, queues tasks in etcd, claims them and reports
progress there.  Every copy of every file is read straight from the OSDs
and compared with what was written."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pando_testing.cluster_map import (PREFIX, dbus_json, etcd_fsal, osd_entry, put_map,
                                       start_on_map, wait_epoch, wait_for)
from pando_testing.etcd import EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mds_files import (PARTITION, BackgroundWriter, components, connect, new_file,
                                     object_bytes)
from pando_testing.nfs3 import FILE_SYNC
from pando_testing.rebuild_jobs import progress, put_job, wait_job_done

MDS_NAME = "mds-test"
KIB = 1024


def assert_every_copy_matches(mds: PandoMds, files: dict[str, bytes]) -> None:
    """Each component object (objects keep file offsets; one column, so
    each holds the whole file) has exactly the file's bytes."""
    for name, data in files.items():
        want = hashlib.sha256(data).hexdigest()
        comps = components(mds, "/" + name)
        assert len(comps) == 2, f"{name}: {comps}"
        for osd, oid in comps:
            got = object_bytes(mds, osd, oid)
            assert hashlib.sha256(got[:len(data)]).hexdigest() == want, \
                f"{name}: the copy on OSD {osd} (object {oid}) differs"
            assert not got[len(data):].strip(b"\0"), f"{name}: bytes past the end on OSD {osd}"


@pytest.fixture
def cluster(etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]
            ) -> Iterator[Callable[..., PandoMds]]:
    """A manager over 5 OSDs following the map in etcd (epoch 1: all up and in)."""
    def make(extra: str = "") -> PandoMds:
        return start_on_map(etcd, mds_factory, 5, "\nRebuild_Parallel = 4;\n" + extra,
                            inline_max=4096, object_pool=0)
    yield make


def take_out(mds: PandoMds, etcd: EtcdCluster, osd: int, epoch: int) -> None:
    put_map(etcd.client(), epoch, [osd_entry(o, up=o.osd_id != osd, in_=o.osd_id != osd)
                                   for o in mds.osds])
    wait_epoch(mds, epoch)


def test_components_on_an_out_osd_are_rebuilt_elsewhere_and_every_copy_matches(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"f{i}": os.urandom(100 * KIB + i * 7919) for i in range(16)}
    for name, data in files.items():
        new_file(c, root, name, data)
    on3 = [n for n in files if 3 in {o for o, _ in components(mds, "/" + n)}]
    assert on3, "no file had a component on OSD 3"
    mds.osds[2].kill9()
    take_out(mds, etcd, 3, 2)
    put_job(etcd, 2, 3)
    p = wait_job_done(etcd, MDS_NAME, 2)
    assert p["files_done"] >= len(on3) and p["files_failed"] == 0, p
    assert p["bytes_done"] > 0
    ok, _, over_dbus = dbus_json(mds, "rebuild_status")
    assert ok and 2 in over_dbus["jobs_done"] and over_dbus["files_done"] == p["files_done"]
    for name in files:
        assert 3 not in {o for o, _ in components(mds, "/" + name)}, f"{name} still on OSD 3"
    assert_every_copy_matches(mds, files)
    for name, data in files.items():
        assert c.read_all(c.lookup_fh(root, name), 0, len(data)) == data
    assert not etcd.client().get_prefix(f"{PREFIX}rebuild/tasks/"), "tasks left in etcd"
    assert not etcd.client().get_prefix(f"{PREFIX}rebuild/claims/"), "claims left in etcd"
    # Declustered: the lost components went to more than one OSD.
    new_homes = {o for n in on3 for o, _ in components(mds, "/" + n)}
    assert len(new_homes) >= 3, new_homes
    # pando-fsck, on the stopped manager: nothing short of copies, and the
    # dead OSD, out, is not a problem.
    assert mds.stop_ganesha() == 0
    rc, out = mds.fsck()
    assert rc == 0, out
    assert "redundancy: every file has every copy its scheme wants" in out
    assert "osd 3 " in out and "out, and unreachable" in out


def test_fsck_counts_components_on_an_out_osd_until_they_are_rebuilt(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    for i in range(6):
        new_file(c, root, f"h{i}", os.urandom(40 * KIB))
    on2 = sum(1 for i in range(6) if 2 in {o for o, _ in components(mds, f"/h{i}")})
    take_out(mds, etcd, 2, 2)           # out, alive: no job yet
    assert mds.stop_ganesha() == 0
    rc, out = mds.fsck()
    assert rc == 4, out
    assert out.count("which is out: rebuild moves it") == on2 >= 1, out
    assert "redundancy: some files are short of copies" in out


def test_a_second_failure_after_the_first_rebuild_loses_nothing(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"g{i}": os.urandom(70 * KIB + i * 4099) for i in range(12)}
    for name, data in files.items():
        new_file(c, root, name, data)
    mds.osds[0].kill9()
    take_out(mds, etcd, 1, 2)
    put_job(etcd, 2, 1)
    wait_job_done(etcd, MDS_NAME, 2)
    mds.osds[4].kill9()
    put_map(etcd.client(), 3, [osd_entry(o, up=o.osd_id not in (1, 5), in_=o.osd_id not in (1, 5))
                               for o in mds.osds])
    wait_epoch(mds, 3)
    put_job(etcd, 3, 5)
    wait_job_done(etcd, MDS_NAME, 3)
    for name in files:
        assert not {o for o, _ in components(mds, "/" + name)} & {1, 5}
    assert_every_copy_matches(mds, files)


def test_the_spare_target_takes_every_lost_component(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"s{i}": os.urandom(64 * KIB + i) for i in range(10)}
    for name, data in files.items():
        new_file(c, root, name, data)
    on2 = [n for n in files if 2 in {o for o, _ in components(mds, "/" + n)}]
    mds.osds[1].kill9()
    take_out(mds, etcd, 2, 2)
    spare = next(o.osd_id for o in mds.osds
                 if o.osd_id != 2 and all(o.osd_id not in {x for x, _ in components(mds, "/" + n)}
                                          for n in on2[:1]))
    put_job(etcd, 2, 2, target=spare)
    wait_job_done(etcd, MDS_NAME, 2)
    for n in on2:
        osds = {o for o, _ in components(mds, "/" + n)}
        assert 2 not in osds
        assert spare in osds or len(osds) == 2, f"{n}: {osds}"
    assert_every_copy_matches(mds, files)


def test_a_file_written_during_its_rebuild_loses_nothing(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    # 1 MiB/s: the 3 MiB file's copy takes about 3 s, written meanwhile.
    mds = cluster("Rebuild_Bandwidth_Mb = 1;\n")
    c = connect(mds)
    root = mds.root_handle()
    data = bytearray(os.urandom(3 << 20))
    fh = new_file(c, root, "hot", bytes(data))
    osds = {o for o, _ in components(mds, "/hot")}
    victim = min(osds)
    mds.osds[victim - 1].kill9()
    take_out(mds, etcd, victim, 2)
    put_job(etcd, 2, victim)

    def piece(i: int) -> tuple[int, bytes]:
        return (i * 262144 + 4096) % (len(data) - 8192), os.urandom(8192)

    with BackgroundWriter(mds, fh, data, piece, pause=0.05) as writer:
        writer.assert_goes_on(5, 15, f"OSD {victim} killed, its components being rebuilt")
        wait_job_done(etcd, MDS_NAME, 2, timeout=90)
        writer.assert_goes_on(5, 15, "after the rebuild")
    assert victim not in {o for o, _ in components(mds, "/hot")}
    assert_every_copy_matches(mds, {"hot": bytes(data)})
    assert "was written during its rebuild: copied again" in mds.log_text()
    print(f"writes told to retry during the freeze: {writer.delayed}")


def test_a_stale_component_is_caught_up_where_it_is_once_its_osd_answers(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    data = bytearray(os.urandom(1 << 20))
    fh = new_file(c, root, "lag", bytes(data))
    comps = components(mds, "/lag")
    osd = comps[1][0]
    mds.osds[osd - 1].stop()
    missed = os.urandom(64 * KIB)                       # one extent, aligned
    c.write_all(fh, 256 * KIB, missed, stable=FILE_SYNC)   # misses the stopped OSD
    data[256 * KIB:320 * KIB] = missed
    mds.osds[osd - 1].start()
    # The manager's own stale record becomes a task (no job) within ~10 s.
    p = wait_for("the stale component caught up", lambda: (
        (p := progress(etcd, MDS_NAME)).get("files_done", 0) >= 1 and p.get("state") == "idle"
        and p), timeout=60)
    assert components(mds, "/lag") == comps, "caught up in place, not moved"
    assert_every_copy_matches(mds, {"lag": bytes(data)})
    # Only what it missed was copied (the extents' checksums differ), not 1 MiB.
    assert p["bytes_done"] == 64 * KIB, p


def test_an_osd_back_after_its_components_were_rebuilt_has_its_leftovers_removed(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"b{i}": os.urandom(50 * KIB + i) for i in range(10)}
    for name, data in files.items():
        new_file(c, root, name, data)
    old = {oid for n in files for o, oid in components(mds, "/" + n) if o == 4}
    assert old, "no file had a component on OSD 4"
    assert old <= set(map(int, mds.osds[3].tool("ls", str(PARTITION)).stdout.split()))
    mds.osds[3].kill9()
    take_out(mds, etcd, 4, 2)
    put_job(etcd, 2, 4)
    wait_job_done(etcd, MDS_NAME, 2)
    mds.osds[3].start()

    def left() -> set[int]:
        cp = mds.osds[3].tool("ls", str(PARTITION))
        return {int(w) for w in cp.stdout.split()} & old
    # The reaper retries the old objects' removal every 5 s.
    wait_for("the leftover objects on OSD 4 removed", lambda: not left(), timeout=30)
    assert_every_copy_matches(mds, files)


def test_two_osds_drained_at_once_move_every_component_even_of_files_on_both(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"d{i}": os.urandom(30 * KIB + i) for i in range(24)}
    for name, data in files.items():
        new_file(c, root, name, data)
    both = [n for n in files if {o for o, _ in components(mds, "/" + n)} == {1, 2}]
    # Out but alive (a drain): the components move while their OSDs answer.
    put_map(etcd.client(), 2, [osd_entry(o, in_=o.osd_id > 2) for o in mds.osds])
    wait_epoch(mds, 2)
    put_job(etcd, 2, 1)
    put_job(etcd, 3, 2)
    wait_job_done(etcd, MDS_NAME, 2)
    wait_job_done(etcd, MDS_NAME, 3)
    for name in files:
        assert not {o for o, _ in components(mds, "/" + name)} & {1, 2}, name
    assert_every_copy_matches(mds, files)
    print(f"files on both drained OSDs: {len(both)}")


def test_a_rebuilt_component_never_shares_a_failure_domain_with_its_mirror(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> None:
    domain = {1: "rack-a", 2: "rack-a", 3: "rack-b", 4: "rack-b", 5: "rack-c", 6: "rack-c"}
    mds = mds_factory(6, start=False, inline_max=4096, object_pool=0,
                      extra_fsal=etcd_fsal(etcd, MDS_NAME))

    def entries(dead: int = 0) -> list[dict[str, Any]]:
        return [{**osd_entry(o, up=o.osd_id != dead, in_=o.osd_id != dead),
                 "domain": domain[o.osd_id]} for o in mds.osds]
    put_map(etcd.client(), 1, entries())
    mds.start()
    wait_epoch(mds, 1)
    c = connect(mds)
    root = mds.root_handle()
    files = {f"r{i}": os.urandom(20 * KIB + i) for i in range(30)}
    for name, data in files.items():
        new_file(c, root, name, data)
    mds.osds[0].kill9()
    put_map(etcd.client(), 2, entries(dead=1))
    wait_epoch(mds, 2)
    put_job(etcd, 2, 1)
    wait_job_done(etcd, MDS_NAME, 2)
    for name in files:
        osds = [o for o, _ in components(mds, "/" + name)]
        assert 1 not in osds and len({domain[o] for o in osds}) == 2, f"{name}: {osds}"
    assert_every_copy_matches(mds, files)


def test_a_stale_component_on_the_jobs_osd_does_not_keep_the_job_from_ending(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    """A write that missed the dead OSD records its component stale; once
    the OSD is out, the stale scan (every 10 s) must leave the job's task
    for that component alone.  A scan that put its own (job 0) under the
    same key would leave the job's count of open tasks above 0 after the
    file was rebuilt, and the job would never end (as under kernel
    writers, tests/pnfs/test_rebuild_kernel.py)."""
    # 1 MB/s, one worker: the stale file's task, last in the queue, waits
    # past a stale scan.
    mds = cluster("Rebuild_Bandwidth_Mb = 1;\nRebuild_Parallel = 1;\n")
    c = connect(mds)
    root = mds.root_handle()
    files = {f"q{i:02}": os.urandom(2 << 20) for i in range(16)}
    handles = {n: new_file(c, root, n, d) for n, d in files.items()}
    on = {n: {o for o, _ in components(mds, "/" + n)} for n in files}
    victim = max(range(1, 6), key=lambda o: sum(o in v for v in on.values()))
    last = max(n for n in files if victim in on[n])
    ahead = sum(victim in v for v in on.values()) - 1
    assert ahead >= 5, f"only {ahead} files queued before {last} on OSD {victim}"
    mds.osds[victim - 1].kill9()
    files[last] = os.urandom(2 << 20)
    c.write_all(handles[last], 0, files[last], stable=FILE_SYNC)     # misses the victim
    take_out(mds, etcd, victim, 2)
    put_job(etcd, 2, victim)
    p = wait_job_done(etcd, MDS_NAME, 2, timeout=90)
    assert p["files_done"] == ahead + 1 and p["files_failed"] == 0, p
    assert victim not in {o for o, _ in components(mds, "/" + last)}
    assert_every_copy_matches(mds, files)


def test_a_job_put_over_a_running_stale_task_is_still_done_after_it(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    """A stale component is being caught up in place (task of no job) when
    its OSD is taken out: the job's scan puts its task under the same key.
    The running task must not delete the job's task when it ends (it did:
    the component stayed on the out OSD and the job never ended)."""
    mds = cluster("Rebuild_Bandwidth_Mb = 1;\n")
    c = connect(mds)
    root = mds.root_handle()
    data = os.urandom(3 << 20)
    fh = new_file(c, root, "slow", data)
    osd = components(mds, "/slow")[1][0]
    mds.osds[osd - 1].stop()
    data = os.urandom(3 << 20)
    c.write_all(fh, 0, data, stable=FILE_SYNC)          # all 48 extents missed
    mds.osds[osd - 1].start()
    wait_for("the in-place catch-up running", lambda: progress(etcd, MDS_NAME).get("state")
             == "rebuilding", timeout=30)
    take_out(mds, etcd, osd, 2)
    put_job(etcd, 2, osd)
    wait_job_done(etcd, MDS_NAME, 2, timeout=90)
    assert osd not in {o for o, _ in components(mds, "/slow")}, "left on the out OSD"
    assert_every_copy_matches(mds, {"slow": data})
    assert "was put again while it ran: kept" in mds.log_text()
