"""A manager group (Mds_Group): the active journals every change to the
OSDs before it answers; a standby, started from a snapshot of the
active's store, follows the journal and takes over when the active is
killed, with every change the active acknowledged, and serves the same
tree; a standby with no store starts from a snapshot the active puts on
the OSDs, and, with every member's store lost, from the last snapshot
the group listed and the journal; an OSD of the journal stopped costs the active nothing; a
standby killed and started again catches up; with both killed,
either leads with every change and the other follows it from its own
store; the active's NFSv4 clients reclaim their opens and locks there,
and its NFSv3 hosts, told by sm-notify, their locks.
Real etcd, OSDs and two ganesha.nfsd in one pod, NFSv3 and NFSv4.1
clients."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from pando_cluster.paths import built
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdClient, EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, connect_v4, new_file
from pando_testing.mds_group import GROUP, group_fsal, standby_of, start_standby, wait_log
from pando_testing.nfs3 import FILE_SYNC, NFS3ERR_JUKEBOX, Nfs3Client
from pando_testing.nfs4 import NFS4_OK, NFS4ERR_DENIED, NFS4ERR_GRACE, OPEN4_SHARE_ACCESS_BOTH
from pando_testing.nlm import NLM4_DENIED, NLM4_DENIED_GRACE_PERIOD, NLM4_GRANTED, nlm_host
from pando_testing.oncrpc import ConnectionClosed

# Both sides of the inline threshold (PandoMds.inline_max): bytes in the
# store, and bytes on the OSDs behind a map the store holds.
SIZES = (100, 200_000)
TAKEOVER_TIMEOUT_S = 60
DIR = "/pando"


def payload(name: str, size: int) -> bytes:
    return (name.encode() * (size // len(name) + 1))[:size]


def make_files(c: Nfs3Client, root: bytes, prefix: str, count: int) -> dict[str, bytes]:
    """count files in a new directory prefix, each with its own bytes;
    also a rename and a removal.  What the tree must hold afterwards."""
    d = c.mkdir(root, prefix).fh
    assert d is not None
    want = {}
    for i in range(count):
        name = f"f{i}"
        data = payload(f"{prefix}/{name}", SIZES[i % len(SIZES)])
        new_file(c, d, name, data)
        want[f"{prefix}/{name}"] = data
    assert c.rename(d, "f0", d, "renamed").status == 0
    want[f"{prefix}/renamed"] = want.pop(f"{prefix}/f0")
    assert c.remove(d, "f1").status == 0
    del want[f"{prefix}/f1"]
    return want


def check_files(c: Nfs3Client, root: bytes, want: dict[str, bytes]) -> None:
    for path, data in want.items():
        d, name = path.split("/")
        fh = c.lookup_fh(c.lookup_fh(root, d), name)
        assert c.read_all(fh, 0, len(data) + 1) == data, path


def kill_the_active_and_check(a: PandoMds, b: PandoMds, want: dict[str, bytes]) -> None:
    """kill -9 of the active a: the standby b serves, with every file."""
    a.kill9()
    b.wait_serving(TAKEOVER_TIMEOUT_S)
    with connect(b) as c:
        check_files(c, b.root_handle(), want)


def member(etcd: EtcdClient, name: str) -> dict[str, Any]:
    value = etcd.get_json(f"/pando/groups/g1/members/{name}")
    assert isinstance(value, dict), value
    return value


def record_keys(etcd: EtcdClient, kind: str) -> tuple[int, list[str]]:
    """b's term, and the keys (<term>.<id>) of the group's reclaim
    records of `kind` ("clients", "nsm") in etcd."""
    term = member(etcd, "b")["term"]
    return term, [k.rsplit("/", 1)[1] for k in etcd.get_prefix(f"/pando/groups/g1/{kind}/")]


def wait_caught_up(etcd: EtcdClient, timeout: float = 30, active: str = "a",
                   standby: str = "b") -> None:
    """Until the standby's member key says it holds the active's last
    record (each is refreshed every second; a member started again puts
    its key within a second)."""
    deadline = time.monotonic() + timeout
    while True:
        a = etcd.get_json(f"/pando/groups/g1/members/{active}")
        b = etcd.get_json(f"/pando/groups/g1/members/{standby}")
        if isinstance(a, dict) and isinstance(b, dict):
            assert (a["role"], b["role"]) == ("active", "standby"), (a, b)
            if b["seq"] == a["seq"] > 0:
                return
        assert time.monotonic() < deadline, f"the standby stays behind: {a}, {b}"
        time.sleep(0.2)


def found_group(mds_factory: Callable[..., PandoMds], etcd: EtcdCluster) -> PandoMds:
    """Manager "a" over 4 OSDs, the active of GROUP, which it founds."""
    a = mds_factory(4, object_pool=0, extra_fsal=group_fsal(etcd, "a"), mds_group=GROUP)
    wait_log(a, "a is the active, term", 10)
    return a


def found_pair(mds_factory: Callable[..., PandoMds], etcd: EtcdCluster,
               tmp_path: Path) -> tuple[PandoMds, bytes, PandoMds, EtcdClient]:
    """found_group's "a", its root, its standby "b" following, and an
    etcd client for the members' keys."""
    a = found_group(mds_factory, etcd)
    return a, a.root_handle(), start_standby(a, etcd, tmp_path), etcd.client()


def test_a_standby_takes_over_with_every_acknowledged_change(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    a = found_group(mds_factory, etcd)
    root = a.root_handle()
    with connect(a) as c:
        want = make_files(c, root, "before", 20)
    b = start_standby(a, etcd, tmp_path)
    try:
        with connect(a) as c:
            want |= make_files(c, root, "after", 40)
            members = etcd.client()
            wait_caught_up(members)
            # Changes the standby has not applied when the active dies (it
            # polls every 100 ms): acknowledged, so the takeover reads them.
            want |= make_files(c, root, "final", 6)
            last = new_file(c, root, "last", b"x")
            c.write_all(last, 1, b"yz", FILE_SYNC)
        a.kill9()
        killed = time.monotonic()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        print(f"takeover: {time.monotonic() - killed:.1f} s from kill -9 to serving")
        assert "b is the active, term" in b.log_text()
        assert member(members, "b")["role"] == "active"
        broot = b.root_handle()
        assert broot == root
        with connect(b) as c:
            check_files(c, broot, want)
            assert c.read_all(c.lookup_fh(broot, "last"), 0, 10) == b"xyz"
            new_file(c, broot, "on-b", b"new active")
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_a_standby_killed_and_started_again_catches_up_and_takes_over_with_every_change(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    a, root, b, members = found_pair(mds_factory, etcd, tmp_path)
    try:
        with connect(a) as c:
            want = make_files(c, root, "before", 10)
            wait_caught_up(members)
            b.kill9()
            want |= make_files(c, root, "while-down", 20)
        b.start(wait=False)
        wait_log(b, "b follows the journal until it leads", 30, count=2)
        wait_caught_up(members)
        kill_the_active_and_check(a, b, want)
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_both_killed_and_started_again_lose_nothing_acknowledged(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The active and its standby die together (a power cut), with changes
    the standby had not applied.  The standby, started first, leads with
    every change the old active acknowledged (it reads them from the
    journal); the old active, started again, follows it as a standby."""
    a, root, b, members = found_pair(mds_factory, etcd, tmp_path)
    try:
        with connect(a) as c:
            want = make_files(c, root, "before", 10)
            wait_caught_up(members)
            want |= make_files(c, root, "last", 6)
        b.kill9()
        a.kill9()
        b.start(wait=False)
        wait_log(b, "b is the active, term", TAKEOVER_TIMEOUT_S)
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        a.start(wait=False)
        wait_log(a, "a follows the journal until it leads", 30)
        with connect(b) as c:
            check_files(c, b.root_handle(), want)
            want |= make_files(c, b.root_handle(), "on-b", 4)
        wait_caught_up(members, active="b", standby="a")
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_an_osd_of_the_journal_stopped_costs_the_active_nothing(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The OSD of one copy of the journal's segment goes: the active goes
    on in a new segment on the other OSDs, acknowledging every change
    (small files, inline in the store: only the journal needs the OSDs),
    and the standby follows across and takes over with all of them."""
    a = found_group(mds_factory, etcd)
    root = a.root_handle()
    b = start_standby(a, etcd, tmp_path)
    members = etcd.client()
    gone: OsdProcess | None = None
    try:
        with connect(a) as c:
            d = c.mkdir(root, "d").fh
            assert d is not None
            want = {f"d/f{i}": payload(f"f{i}", SIZES[0]) for i in range(12)}
            for i in range(6):
                new_file(c, d, f"f{i}", want[f"d/f{i}"])
            seg = re.search(r"journal: segment \d+ \(term \d+\) from seq \d+ on OSDs (\d+)",
                            a.log_text())
            assert seg is not None, "no journal segment in the active's log"
            gone = next(o for o in a.osds if o.osd_id == int(seg.group(1)))
            assert gone.stop() == 0
            for i in range(6, 12):
                new_file(c, d, f"f{i}", want[f"d/f{i}"])
        assert f"journal goes on in a new segment away from OSD {gone.osd_id}" in a.log_text()
        wait_caught_up(members)
        a.kill9()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        with connect(b) as c:
            check_files(c, b.root_handle(), want)
    finally:
        code = b.stop()
        if gone is not None and not gone.alive():
            gone.start()
    assert code == 0, b.log_text()[-3000:]


def test_a_frozen_active_acknowledges_nothing_once_the_standby_leads(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The active stopped (SIGSTOP) as a partition would: its lease runs
    out and the standby takes over.  Let go again, the old active must not
    acknowledge a change its clients still send it: it is no longer sure
    that it leads, so its journal refuses, and it stops itself."""
    a = found_group(mds_factory, etcd)
    b = start_standby(a, etcd, tmp_path)
    try:
        root = a.root_handle()
        with connect(a) as c:
            new_file(c, root, "before", b"acknowledged")
            assert a.proc is not None
            os.kill(a.proc.pid, signal.SIGSTOP)
            b.wait_serving(TAKEOVER_TIMEOUT_S)
            os.kill(a.proc.pid, signal.SIGCONT)
            try:
                status = c.create(root, "split").status
            except ConnectionClosed as e:
                status = -1
                print(f"the old active dropped the call: {e!r}")
            assert status != 0, "the old active acknowledged a create after the standby led"
        assert a.proc.wait(timeout=30) != 0
        assert "a is no longer the active" in a.log_text()
        with connect(b) as c:
            broot = b.root_handle()
            assert c.read_all(c.lookup_fh(broot, "before"), 0, 100) == b"acknowledged"
            assert c.lookup(broot, "split").status != 0
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_a_standby_stops_cleanly_on_sigterm(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    a = found_group(mds_factory, etcd)
    b = start_standby(a, etcd, tmp_path)
    assert b.stop() == 0, b.log_text()[-3000:]
    assert "the standby stops (SIGTERM)" in b.log_text()
    assert a.alive()


def test_a_standby_that_starts_from_nothing_begins_from_the_groups_snapshot(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """No store at its Db_Path: the standby asks the active, which puts a
    snapshot of its store on the OSDs (three copies); the standby starts
    from it, follows the journal, and takes over after a kill -9 of the
    active with every change it acknowledged.  Neither leaves a working
    copy behind."""
    a = found_group(mds_factory, etcd)
    root = a.root_handle()
    with connect(a) as c:
        want = make_files(c, root, "before", 20)
    db = tmp_path / "b-new"
    b = standby_of(a, etcd, tmp_path / "mdsb", db)
    b.start(wait=False)
    members = etcd.client()
    try:
        wait_log(b, "b starts from snapshot at seq", 60)
        wait_log(b, "b follows the journal until it leads", 30)
        assert "snapshot 1 at seq" in a.log_text()
        snap = members.get_json("/pando/groups/g1/snapshot")
        assert snap["index"] == 1 and snap["seq"] > 0 and snap["bytes"] > 0, snap
        assert members.get("/pando/groups/g1/snapshot_wanted") is None
        assert a.db_path is not None
        assert not Path(f"{a.db_path}.snapshot").exists()
        assert not Path(f"{db}.fetch").exists()
        with connect(a) as c:
            want |= make_files(c, root, "after", 20)
            wait_caught_up(members)
            want |= make_files(c, root, "final", 4)
        kill_the_active_and_check(a, b, want)
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_with_every_store_lost_a_member_starts_again_from_the_snapshot_and_the_journal(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The active killed, then the standby that took over killed too, and
    both their stores lost: a member started from nothing finds no active
    to make it a snapshot, takes the one the group lists once
    GROUP_SNAPSHOT_FALLBACK_S (10 s) has passed, follows the journal of
    both terms from it, and leads with every change either active
    acknowledged."""
    a = found_group(mds_factory, etcd)
    root = a.root_handle()
    with connect(a) as c:
        want = make_files(c, root, "before", 20)
    b = standby_of(a, etcd, tmp_path / "mdsb", tmp_path / "b-new")
    b.start(wait=False)
    try:
        wait_log(b, "b starts from snapshot at seq", 60)
        wait_log(b, "b follows the journal until it leads", 30)
        with connect(a) as c:
            want |= make_files(c, root, "after", 20)
        kill_the_active_and_check(a, b, want)
        with connect(b) as c:
            want |= make_files(c, root, "on_b", 10)
    finally:
        b.kill9()
    assert a.db_path is not None and b.db_path is not None
    shutil.rmtree(a.db_path)
    shutil.rmtree(b.db_path)
    m = standby_of(a, etcd, tmp_path / "mdsc", tmp_path / "c-new", name="c")
    m.start(wait=False)
    try:
        wait_log(m, "no active made a snapshot in 10 s: c takes snapshot 1", 60)
        wait_log(m, "c starts from snapshot at seq", 30)
        m.wait_serving(TAKEOVER_TIMEOUT_S)
        with connect(m) as c:
            check_files(c, root, want)
    finally:
        code = m.stop()
    assert code == 0, m.log_text()[-3000:]


def test_the_active_lists_a_snapshot_on_schedule_only_once_its_store_moved_on(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster) -> None:
    """Snapshot_Interval = 2: with nobody asking, the active lists a
    snapshot of its store once it holds changes no snapshot has, and not
    again while nothing changes."""
    a = mds_factory(4, object_pool=0, mds_group=GROUP,
                    extra_fsal=group_fsal(etcd, "a") + "\nSnapshot_Interval = 2;")
    wait_log(a, "a is the active, term", 10)
    members = etcd.client()
    with connect(a) as c:
        make_files(c, a.root_handle(), "first", 4)
    wait_log(a, "snapshot 1 at seq", 15)
    assert "on schedule" in a.log_text()
    first = members.get_json("/pando/groups/g1/snapshot")
    time.sleep(8)  # four intervals, past the 5 s between any two snapshots
    assert members.get_json("/pando/groups/g1/snapshot") == first
    with connect(a) as c:
        make_files(c, a.root_handle(), "second", 4)
    wait_log(a, "snapshot 2 at seq", 15)
    second = members.get_json("/pando/groups/g1/snapshot")
    assert second["index"] == 2 and second["seq"] > first["seq"], (first, second)


def test_an_active_that_cannot_journal_steps_down_and_comes_back_from_a_snapshot(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """Every OSD stops: the active's next create is in its store but
    reaches no copy of the journal, so it is never acknowledged: the
    client is told to send it again (NFS3ERR_JUKEBOX), and the active,
    whose journal cannot go on, leaves the lead and stops.  The OSDs
    come back, and the standby leads and creates on.  Started again, the old active's store holds a batch the
    new term never had at seqs the new term used: it must not follow on
    from it (it would skip the new term's changes there), so it moves
    its store aside, starts from the group's snapshot, and later leads
    with every change of the new term and without the refused create."""
    a, root, b, members = found_pair(mds_factory, etcd, tmp_path)
    try:
        # The journal tries again for 10 s before it gives up.
        with connect(a, timeout=30) as c:
            want = make_files(c, root, "before", 6)
            wait_caught_up(members)
            for o in a.osds:
                assert o.stop() == 0
            # The client is told to send it again, not given an error.
            assert c.create(root, "never-acknowledged").status == NFS3ERR_JUKEBOX
        # Its journal failed for good: the active leaves the lead and stops.
        wait_log(a, "cannot write the journal: it leaves the lead to a standby", 30)
        assert a.proc is not None and a.proc.wait(timeout=30) != 0
        for o in a.osds:
            o.start()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        with connect(b) as c:
            want |= make_files(c, b.root_handle(), "on-b", 6)
        a.start(wait=False)
        wait_log(a, "a starts from snapshot at seq", 60)
        assert "a moves its store aside to" in a.log_text()
        assert "records of an ended term the next did not have" in a.log_text()
        wait_log(a, "a follows the journal until it leads", 30, count=3)
        wait_caught_up(members, active="b", standby="a")
        with connect(b) as c:
            want |= make_files(c, b.root_handle(), "final", 4)
        wait_caught_up(members, active="b", standby="a")
        kill_the_active_and_check(b, a, want)
        with connect(a) as c:
            assert c.lookup(a.root_handle(), "never-acknowledged").status != 0
    finally:
        code = a.stop()
    assert code == 0, a.log_text()[-3000:]


def test_a_store_of_another_file_system_cannot_join_the_group(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """A store that was never journaled cannot follow a journal that
    already has records.  The member says so, creates no export, and
    ganesha.nfsd ends (a member's RecoveryBackend = fsal has no records to
    give without one); the active goes on."""
    a = found_group(mds_factory, etcd)
    with connect(a) as c:
        make_files(c, a.root_handle(), "d", 4)
    other = tmp_path / "b-other"
    subprocess.run([str(built("ganesha-fsal", "ns", "pando-ns-bench")), "-n", "1", str(other)],
                   check=True, capture_output=True, timeout=60)
    b = standby_of(a, etcd, tmp_path / "mdsb", other)
    b.start(wait=False)
    wait_log(b, "cannot follow the journal after seq 0", 30)
    wait_log(b, "Could not create export", 10)
    assert b.proc is not None and b.proc.wait(timeout=30) != 0
    assert "Fatal errors.  Server exiting" in b.log_text()
    assert "asks the active for a snapshot" not in b.log_text()
    assert a.alive()
    with connect(a) as c:
        assert c.lookup_fh(c.lookup_fh(a.root_handle(), "d"), "f2")


def test_nfsv4_clients_reclaim_their_opens_and_locks_on_the_new_active(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The active's NFSv4 client, its open and its lock, are in the
    group's reclaim records in etcd: after kill -9 of the active the new
    one holds everyone else off (GRACE) until that client reclaimed both,
    then ends its grace period at once, and the reclaimed lock holds."""
    a = mds_factory(4, object_pool=0, extra_fsal=group_fsal(etcd, "a"), mds_group=GROUP,
                    protocols=(3, 4), pseudo=DIR, graceless=False)
    wait_log(a, "a is the active, term", 10)
    b = start_standby(a, etcd, tmp_path)
    verifier = os.urandom(8)
    try:
        with connect_v4(a, "returning", verifier) as nfs:
            assert nfs.reclaim_complete() == NFS4_OK
            fh, sid = nfs.create(DIR, "held")
            assert nfs.lock(fh, sid, 0, 100) == NFS4_OK
            a.kill9()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        with connect_v4(b) as newcomer:
            assert newcomer.reclaim_complete() == NFS4_OK
            assert newcomer.create_status(DIR, "too-early") == NFS4ERR_GRACE
            with connect_v4(b, "returning", verifier) as back:
                sid = back.reclaim_open(fh)
                assert back.lock(fh, sid, 0, 100, reclaim=True) == NFS4_OK
                assert back.reclaim_complete() == NFS4_OK
                reclaimed = time.monotonic()
                while (status := newcomer.create_status(DIR, "after-grace")) == NFS4ERR_GRACE:
                    assert time.monotonic() - reclaimed < 5, "the grace period goes on"
                    time.sleep(0.2)
                assert status == NFS4_OK
                print(f"grace ended {time.monotonic() - reclaimed:.1f} s after the reclaim")
                _, other = newcomer.open(DIR, "held", OPEN4_SHARE_ACCESS_BOTH)
                assert newcomer.lock(fh, other, 50, 10) == NFS4ERR_DENIED
        assert "pando: 1 NFSv4 clients may reclaim" in b.log_text()
        # The grace period over, only b's term's records are left: the
        # newcomer's and the returning client's again.
        term, keys = record_keys(etcd.client(), "clients")
        assert len(keys) == 2 and all(k.startswith(f"{term:016x}.") for k in keys), keys
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def test_nfsv3_hosts_reclaim_their_locks_on_the_new_active(
        mds_factory: Callable[..., PandoMds], etcd: EtcdCluster, tmp_path: Path) -> None:
    """The hosts NLM monitors on the active are records in etcd
    (patches/0146): the new active, in the active's place, lists them in
    its NSM_Notify_Dir, so its grace period waits for them, and sm-notify
    tells them from the service address (Nsm_Source); the host that held
    a lock reclaims it, and nobody else gets its range."""
    a = mds_factory(4, object_pool=0, mds_group=GROUP, protocols=(3, 4), pseudo=DIR,
                    graceless=False,
                    extra_fsal=group_fsal(etcd, "a") + '\nNsm_Source = "127.0.0.1";')
    wait_log(a, "a is the active, term", 10)
    fh = a.create_files(["locked"])[0]
    b = start_standby(a, etcd, tmp_path, in_place=True)
    try:
        holder = nlm_host(a.pod, "127.0.0.2")
        try:
            assert holder.lock(fh, 0, 100) == NLM4_GRANTED
        finally:
            holder.close()
        hosts = etcd.client().get_prefix("/pando/groups/g1/nsm/").values()
        assert [json.loads(h)["tag"] for h in hosts] == ["127.0.0.2"], hosts
        a.kill9()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        listed = (b.statd_dir / "sm.bak" / "127.0.0.2")
        newcomer, back = nlm_host(b.pod, "127.0.0.3"), nlm_host(b.pod, "127.0.0.2")
        try:
            assert newcomer.lock(fh, 50, 10) == NLM4_DENIED_GRACE_PERIOD
            assert back.lock(fh, 0, 100, reclaim=True) == NLM4_GRANTED
            reclaimed = time.monotonic()
            while (status := newcomer.lock(fh, 200, 10)) == NLM4_DENIED_GRACE_PERIOD:
                assert time.monotonic() - reclaimed < 30, "the grace period goes on"
                time.sleep(0.2)
            assert status == NLM4_GRANTED
            print(f"grace ended {time.monotonic() - reclaimed:.1f} s after the reclaim")
            assert newcomer.lock(fh, 50, 10) == NLM4_DENIED
        finally:
            newcomer.close()
            back.close()
        assert not listed.exists(), "sm-notify did not tell the host"
        assert "pando: 1 NFSv3 hosts to tell" in b.log_text()
        assert "to reclaim, from 127.0.0.1" in b.log_text()
        # Grace over: the host is b's, recorded in b's term only.
        term, keys = record_keys(etcd.client(), "nsm")
        assert len(keys) == 2 and all(k.startswith(f"{term:016x}.") for k in keys), keys
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]
