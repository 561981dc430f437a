"""pando-mgr on a real etcd follows OSD presence: seeded OSDs come up,
lost presence is down within the lease, down becomes out after the
interval, a returning OSD is up again, unknown OSDs are added."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import PREFIX, map_of, osd_in_map, write_seed
from pando_testing.etcd import EtcdCluster

Factory = Callable[..., Any]


def _states(etcd: EtcdCluster) -> dict[int, tuple[bool, bool]]:
    m = map_of(etcd.client()) or {}
    return {o["id"]: (o["up"], o["in"]) for o in m.get("osds", [])}


def test_the_seed_writes_epoch_1_and_seeded_osds_come_up_with_their_presence(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    mgr_factory(seed=write_seed(tmp_path / "cluster.conf", [1, 2, 3], capacity=5000))
    first = c.wait_for(map_of, timeout=10, what="map seeded")
    assert first["epoch"] == 1 and first["partition"] == 1
    assert [(o["id"], o["up"], o["in"], o["weight"]) for o in first["osds"]] == [
        (1, False, True, 5000), (2, False, True, 5000), (3, False, True, 5000)]
    for i in (1, 2, 3):
        presence(i)
    c.wait_for(lambda _: _states(etcd) == {i: (True, True) for i in (1, 2, 3)}, timeout=5,
               what="seeded osds up")
    m = map_of(c)
    assert m is not None and m["epoch"] >= 2 and m["updated_by"] == "mgr-a"


def test_killed_osd_is_marked_down_within_the_lease(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    p1, _ = presence(1, ttl=2), presence(2, ttl=2)
    mgr_factory(seed=write_seed(tmp_path / "cluster.conf", [1, 2]))
    c.wait_for(lambda _: _states(etcd) == {1: (True, True), 2: (True, True)}, timeout=10,
               what="osds up")
    p1.stop_keepalive()                     # what kill -9 does to the lease
    t0 = time.monotonic()
    c.wait_for(lambda _: _states(etcd).get(1) == (False, True), timeout=10, what="osd.1 down")
    took = time.monotonic() - t0
    assert took <= 2 + 2, f"down after {took:.1f}s"
    o = osd_in_map(c, 1)
    assert o is not None and abs(o["down_at"] - time.time()) < 5
    assert "osd.1 down" in (map_of(c) or {})["reason"]
    assert _states(etcd)[2] == (True, True)


def test_a_clean_stop_revokes_and_is_seen_at_once(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    p1 = presence(1, ttl=10)
    mgr_factory()
    c.wait_for(lambda _: _states(etcd) == {1: (True, True)}, timeout=10, what="osd.1 added")
    p1.revoke()
    t0 = time.monotonic()
    c.wait_for(lambda _: _states(etcd).get(1) == (False, True), timeout=5, what="osd.1 down")
    assert time.monotonic() - t0 < 1.5


def test_a_down_osd_goes_out_after_the_down_out_interval(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    p1 = presence(1, ttl=2)
    mgr_factory(down_out_interval=3)
    c.wait_for(lambda _: _states(etcd) == {1: (True, True)}, timeout=10, what="osd.1 added")
    p1.revoke()
    c.wait_for(lambda _: _states(etcd).get(1) == (False, True), timeout=5, what="osd.1 down")
    t0 = time.monotonic()
    c.wait_for(lambda _: _states(etcd).get(1) == (False, False), timeout=10, what="osd.1 out")
    assert 2.5 <= time.monotonic() - t0 <= 4.5
    o = osd_in_map(c, 1)
    assert o is not None and o["out_at"] >= o["down_at"] + 3 - 0.01


def test_an_osd_that_comes_back_is_up_again_without_restarting_anything(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    p1 = presence(1, ttl=2)
    mgr = mgr_factory()
    c.wait_for(lambda _: _states(etcd) == {1: (True, True)}, timeout=10, what="osd.1 added")
    p1.revoke()
    c.wait_for(lambda _: _states(etcd).get(1) == (False, True), timeout=5, what="osd.1 down")
    epoch = (map_of(c) or {})["epoch"]
    p1.start()
    c.wait_for(lambda _: _states(etcd).get(1) == (True, True), timeout=5, what="osd.1 up")
    o = osd_in_map(c, 1)
    assert o is not None and o["down_at"] == 0
    assert (map_of(c) or {})["epoch"] == epoch + 1
    assert mgr.alive() and mgr.starts == 1
    log = mgr.log_text()
    assert "osd.1 down" in log and "osd.1 up" in log


def test_an_unknown_osd_announcing_itself_is_added_up_and_in(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory) -> None:
    c = etcd.client()
    mgr_factory()
    c.wait_for(map_of, timeout=10, what="empty map written")
    presence(7, total=123456, domain="rack-b")
    o = c.wait_for(lambda cl: osd_in_map(cl, 7), timeout=5, what="osd.7 added")
    assert (o["up"], o["in"], o["weight"], o["domain"]) == (True, True, 123456, "rack-b")
    assert o["nfs"] == "127.0.0.1:20497" and o["ctl"] == "127.0.0.1:20597"


def test_a_restarted_mgr_keeps_the_map_and_does_not_seed_again(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    c = etcd.client()
    presence(1)
    mgr = mgr_factory(seed=write_seed(tmp_path / "cluster.conf", [1, 2]))
    c.wait_for(lambda _: _states(etcd) == {1: (True, True), 2: (False, True)}, timeout=10,
               what="osd.1 up")
    epoch = (map_of(c) or {})["epoch"]
    assert mgr.stop() == 0
    assert c.get(PREFIX + "mgr/leader") is None          # revoked, not left to expire
    write_seed(tmp_path / "cluster.conf", [1, 2, 3])
    mgr.start()
    time.sleep(1.5)
    m = map_of(c)
    assert m is not None and m["epoch"] == epoch and [o["id"] for o in m["osds"]] == [1, 2]
