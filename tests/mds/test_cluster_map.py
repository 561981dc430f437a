"""The metadata manager follows the cluster map in etcd (FSAL option Etcd).

The map is written into etcd by hand here (no mgr), as mgr/README.md
says the leading mgr writes it.  Ganesha reads it every 500 ms and
applies a higher epoch: a new OSD gets connections and takes new files;
an OSD that is down (or weight 0) takes none, nor do objects the manager
made ahead on it; the last applied map is kept beside the store, so a
restart while etcd is away still knows it; etcd away stops nothing (and
with three members, one killed is not even noticed); a malformed map is
logged and ignored.  The map and each file's storage map
are on dbus (map_status, file_map), the manager's presence and op
latencies in etcd (mds/<name>)."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from pando_testing.cluster_map import (PREFIX, etcd_fsal, file_map, map_status, osd_entry,
                                       osds_of, put_map, start_on_map, wait_for, wait_epoch)
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdClient, EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file

MDS_NAME = "mds-test"
KIB = 1024
INLINE_MAX = 4096


@pytest.fixture
def etcd_mds(etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]
             ) -> Callable[..., PandoMds]:
    """A manager over 4 OSDs that follows the map in `etcd`, epoch 1 (the 4
    OSDs) written before it starts."""
    def make(**kw: Any) -> PandoMds:
        return start_on_map(etcd, mds_factory, 4, inline_max=INLINE_MAX, **kw)
    return make


def test_osd_added_to_the_map_while_ganesha_runs_takes_new_files(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess]) -> None:
    mds = etcd_mds(object_pool=0)
    fifth = osd_factory(5)
    t0 = time.monotonic()
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds), osd_entry(fifth)])
    st = wait_epoch(mds, 2)
    took = time.monotonic() - t0
    print(f"map epoch 2 applied {took:.2f} s after the put")
    assert took < 3, "the map is read every 500 ms"
    assert {o["id"] for o in st["osds"] if o["takes"]} == {1, 2, 3, 4, 5}
    assert st["source"] == "etcd"
    c = connect(mds)
    root = mds.root_handle()
    used: set[int] = set()
    for i in range(24):
        new_file(c, root, f"f{i}", bytes([i]) * (8 * KIB))
        used |= osds_of(mds, f"/f{i}")
    assert 5 in used, f"no new file on the OSD the map added (used {sorted(used)})"
    assert c.read(c.lookup_fh(root, "f23"), 0, 8 * KIB).data == bytes([23]) * (8 * KIB)
    assert re.search(r"cluster map epoch 2 applied \(from etcd\): osd\.5 new", mds.log_text())


def test_osd_marked_down_gets_no_new_components(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    # The object pool is on: the maps it made ahead under epoch 1 name
    # OSD 4 too, and must not be handed out once OSD 4 is down.
    mds = etcd_mds()
    time.sleep(1)   # the pool fills
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds[:3]),
                               osd_entry(mds.osds[3], up=False)])
    st = wait_epoch(mds, 2)
    assert [o["id"] for o in st["osds"] if not o["takes"]] == [4]
    c = connect(mds)
    root = mds.root_handle()
    for i in range(40):
        new_file(c, root, f"d{i}", b"x" * (8 * KIB))
        assert 4 not in osds_of(mds, f"/d{i}"), f"d{i} has a component on the down OSD"
    assert "osd.4 now down/in weight" in mds.log_text()


def test_weight_zero_and_out_take_no_new_components(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    mds = etcd_mds(object_pool=0)
    c = connect(mds)
    root = mds.root_handle()
    new_file(c, root, "before", b"b" * (8 * KIB))
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds[:2]),
                               osd_entry(mds.osds[2], weight=0),
                               osd_entry(mds.osds[3], in_=False)])
    wait_epoch(mds, 2)
    for i in range(20):
        new_file(c, root, f"w{i}", b"w" * (8 * KIB))
        assert osds_of(mds, f"/w{i}") == {1, 2}
    # A file already on OSD 3 or 4 keeps its components; file_map says out.
    ok, _, j = file_map(mds, "/before")
    states = {k["osd"]: k["state"] for g in j["groups"] for k in g["components"]}
    assert ok and all(s == ("out" if osd == 4 else "ok") for osd, s in states.items())


def test_etcd_killed_nfs_goes_on_and_the_map_catches_up_when_it_is_back(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess]) -> None:
    mds = etcd_mds(object_pool=0)
    etcd.members[0].kill9()
    wait_for("the etcd warning", lambda: "does not answer" in mds.log_text())
    c = connect(mds)
    root = mds.root_handle()
    for i in range(5):
        new_file(c, root, f"e{i}", b"e" * (8 * KIB))
    assert map_status(mds)["epoch"] == 1
    # Back, with a map changed meanwhile (a 5th OSD): applied.
    fifth = osd_factory(5)
    etcd.start()
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds), osd_entry(fifth)])
    wait_epoch(mds, 2)
    assert "etcd answers again" in mds.log_text()
    assert mds.log_text().count("does not answer") == 1, "the outage is logged once"


def test_restart_while_etcd_is_down_uses_the_kept_map(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess]) -> None:
    mds = etcd_mds(object_pool=0)
    fifth = osd_factory(5)
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds[:3]),
                               osd_entry(mds.osds[3], up=False), osd_entry(fifth)])
    wait_epoch(mds, 2)
    assert etcd.stop() == {"etcd1": 0}
    # cluster.conf names OSDs 1-4 only: OSD 5 is known from the kept map.
    assert mds.stop_ganesha() == 0
    mds.start()
    st = map_status(mds)
    assert st["epoch"] == 2 and st["source"] == "cache"
    assert {o["id"]: o["takes"] for o in st["osds"]} == {1: True, 2: True, 3: True, 4: False,
                                                         5: True}
    c = connect(mds)
    root = mds.root_handle()
    used: set[int] = set()
    for i in range(20):
        new_file(c, root, f"r{i}", b"r" * (8 * KIB))
        used |= osds_of(mds, f"/r{i}")
    assert 5 in used and 4 not in used, sorted(used)


def test_malformed_or_older_map_is_logged_ignored_and_the_applied_one_kept(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    mds = etcd_mds()
    client = etcd.client()
    client.put(PREFIX + "map", '{"epoch": 5, "osds": [')
    wait_for("the malformed map logged", lambda: "malformed cluster map" in mds.log_text())
    client.put(PREFIX + "map", json.dumps({"epoch": 6, "osds": [{"id": 1, "ctl": "x"}]}))
    wait_for("the second malformed map logged",
             lambda: mds.log_text().count("malformed cluster map") == 2)
    assert map_status(mds)["epoch"] == 1
    assert 'no "nfs"' in mds.log_text() or "not host:port" in mds.log_text()
    put_map(client, 7, [osd_entry(o) for o in mds.osds])
    wait_epoch(mds, 7)
    # A lower epoch (etcd restored from an old backup) is not applied.
    put_map(client, 3, [osd_entry(o) for o in mds.osds[:2]])
    wait_for("the lower epoch logged", lambda: "below the applied 7" in mds.log_text())
    assert map_status(mds)["epoch"] == 7
    assert mds.alive()


def test_file_map_over_dbus_for_inline_mirrored_and_missing_paths(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    mds = etcd_mds()
    c = connect(mds)
    root = mds.root_handle()
    new_file(c, root, "small", b"s" * 100)
    new_file(c, root, "big", b"b" * (64 * KIB))
    ok, _, j = file_map(mds, "/small")
    assert ok and j["inline"] is True and j["size"] == 100 and j["groups"] == []
    ok, _, j = file_map(mds, "/big")
    assert ok and j["inline"] is False and j["path"] == "/big" and j["size"] == 64 * KIB
    assert j["scheme"] == "mirror" and j["mirrors"] == 2 and j["stripe_unit"] == 1 << 20
    comps = [k for g in j["groups"] for k in g["components"]]
    assert len(comps) == 2 and len({k["osd"] for k in comps}) == 2
    assert all(k["state"] == "ok" and k["object"] > 0 for k in comps)
    ok, msg, j = file_map(mds, "/nothing-here")
    assert not ok and "No such file" in msg and j == {}


def test_presence_in_etcd_carries_the_epoch_and_op_latencies(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    mds = etcd_mds()
    c = connect(mds)
    root = mds.root_handle()
    new_file(c, root, "p", b"p" * (8 * KIB))
    client = etcd.client()
    key = f"{PREFIX}mds/{MDS_NAME}"

    def presence() -> Any:
        p = client.get_json(key)
        return p if p and p["ops"]["write"]["count"] > 0 else None
    p = wait_for("the presence with a write counted", presence)
    # The test harness's Ganesha listens on every address (no Bind_Addr):
    # the presence then names the host.  `pando-cluster up` binds one
    # (tests/cluster/test_pando_cluster.py sees it in the mgr's MDS list).
    assert p["name"] == MDS_NAME and p["epoch"] == 1 and p["nfs"].endswith(f":{mds.nfs_port}")
    assert p["store_failed"] is False
    assert len(p["op_bounds"]) == 16
    assert set(p["ops"]) == {"lookup", "getattr", "setattr", "create", "mkdir", "remove",
                             "rename", "readdir", "open", "layoutget", "layoutcommit",
                             "layoutreturn", "read", "write", "commit"}
    for op in p["ops"].values():
        assert len(op["buckets"]) == 17 and sum(op["buckets"]) == op["count"]
    assert p["ops"]["create"]["count"] >= 1 and p["gateway_write_bytes"] >= 8 * KIB
    # No quota: zero limits, and the usage the store counts (the root, p).
    assert p["quota"] == {"bytes": 0, "files": 0, "used_bytes": 8 * KIB, "used_files": 2}
    mds.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                 "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.quota_set",
                 "uint64:1048576", "uint64:100"], env=mds.dbus_env(), timeout=30)
    wait_for("the quota in the presence",
             lambda: (client.get_json(key) or {}).get("quota", {}).get("files") == 100)
    # A clean stop revokes the lease: the key goes at once.
    assert mds.stop_ganesha() == 0
    wait_for("the presence key gone", lambda: client.get(key) is None, timeout=5)


def test_presence_says_each_applied_epoch_at_once_not_at_the_next_refresh(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds]) -> None:
    """The mgr shows which epoch each manager applied (`pando status`): the
    FSAL puts its presence as soon as it applies a map, not at its next
    2 s refresh.  Four changes, each seen within 1.5 s (the map is read
    every 0.5 s); refreshes alone would make that unlikely."""
    mds = etcd_mds()
    client = etcd.client()
    key = f"{PREFIX}mds/{MDS_NAME}"
    took = []
    for epoch in range(2, 6):
        put_map(client, epoch, [osd_entry(o, weight=(1 << 40) + epoch) for o in mds.osds])
        t0 = time.monotonic()

        def at_epoch(e: int = epoch) -> bool:
            p = client.get_json(key)
            return bool(p) and p["epoch"] == e
        wait_for(f"presence at epoch {epoch}", at_epoch, timeout=10)
        took.append(time.monotonic() - t0)
        time.sleep(0.3)
    print("presence epoch seen after " + ", ".join(f"{t:.2f}" for t in took) + " s")
    assert max(took) < 1.5, took


@pytest.mark.parametrize("killed", ["follower", "leader"])
def test_map_followed_through_the_members_left_when_one_of_three_is_killed(
        etcd3: EtcdCluster, mds_factory: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess], killed: str) -> None:
    mds = mds_factory(4, start=False, object_pool=0, extra_fsal=etcd_fsal(etcd3))
    put_map(etcd3.client(), 1, [osd_entry(o) for o in mds.osds])
    mds.start()
    wait_epoch(mds, 1)
    leader = etcd3.leader()
    victim = leader if killed == "leader" else next(m for m in etcd3.members if m is not leader)
    victim.kill9()
    fifth = osd_factory(5)
    put_map(etcd3.client(), 2, [*(osd_entry(o) for o in mds.osds), osd_entry(fifth)])
    st = wait_epoch(mds, 2)
    assert st["osds"][-1]["id"] == 5 and st["osds"][-1]["takes"]
    log = mds.log_text()
    if killed == "follower":
        assert "does not answer" not in log, "another member answered"
    else:
        # Reads are linearizable: while the two left elect a leader (about
        # a second) none answers, so one warning is honest; it must end.
        assert log.count("does not answer") <= 1
        assert "does not answer" not in log or "etcd answers again" in log
    client = etcd3.client()
    wait_for("the presence through another member",
             lambda: (p := client.get_json(f"{PREFIX}mds/{MDS_NAME}")) and p["epoch"] == 2)


def test_map_changed_while_its_etcd_member_was_down_is_applied_when_it_is_back(
        etcd3: EtcdCluster, mds_factory: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess]) -> None:
    # The manager knows one member only; the others take the change.
    only = etcd3.members[0]
    fsal = "\n".join([f'Etcd = "{only.client_url}";', f'Etcd_Prefix = "{PREFIX}";',
                      f'Mds_Name = "{MDS_NAME}";'])
    mds = mds_factory(4, start=False, object_pool=0, extra_fsal=fsal)
    put_map(etcd3.client(), 1, [osd_entry(o) for o in mds.osds])
    mds.start()
    wait_epoch(mds, 1)
    only.kill9()
    wait_for("the etcd warning", lambda: "does not answer" in mds.log_text())
    fifth = osd_factory(5)
    others = EtcdClient(mds.pod, [m.client_url for m in etcd3.members[1:]])
    put_map(others, 2, [*(osd_entry(o) for o in mds.osds), osd_entry(fifth)])
    time.sleep(1.5)
    assert map_status(mds)["epoch"] == 1
    c = connect(mds)
    new_file(c, mds.root_handle(), "meanwhile", b"m" * (8 * KIB))
    only.start()
    st = wait_epoch(mds, 2)
    assert any(o["id"] == 5 and o["takes"] for o in st["osds"])
    assert "etcd answers again" in mds.log_text()


def test_fsck_knows_the_osds_the_map_added_from_the_map_kept_beside_the_store(
        etcd: EtcdCluster, etcd_mds: Callable[..., PandoMds],
        osd_factory: Callable[..., OsdProcess]) -> None:
    mds = etcd_mds(object_pool=0)
    fifth = osd_factory(5)
    put_map(etcd.client(), 2, [*(osd_entry(o) for o in mds.osds), osd_entry(fifth)])
    wait_epoch(mds, 2)
    c = connect(mds)
    root = mds.root_handle()
    on_fifth = None
    for i in range(24):
        new_file(c, root, f"f{i}", bytes([i]) * (8 * KIB))
        if 5 in osds_of(mds, f"/f{i}"):
            on_fifth = f"f{i}"
            break
    assert on_fifth, "no new file on the OSD the map added"
    c.close()
    assert mds.stop_ganesha() == 0
    code, out = mds.fsck()
    assert code == 0, f"pando-fsck found trouble with a map-added OSD (exit {code}):\n{out}"
    assert "OSDs from the cluster map" in out and "epoch 2" in out, out
    mds.start()
