"""Several pando-mgr on one etcd: exactly one leads; a killed leader is
replaced within the lease and the new one writes; a deposed leader's
writes are refused by etcd; etcd losing a member or going away for a
while does not stop the mgr."""
from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import PREFIX, HandPresence, leader_of, map_of, osd_in_map, osd_value
from pando_testing.etcd import EtcdCluster, b64
from pando_testing.mgr import MgrApiError, MgrProcess

Factory = Callable[..., Any]
LEASE = 2


def _leader_name(etcd: EtcdCluster) -> str | None:
    v = leader_of(etcd.client())
    return v["name"] if v else None


def test_two_mgrs_elect_exactly_one_leader_and_the_follower_redirects(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory) -> None:
    presence(1)
    a = mgr_factory()
    etcd.client().wait_for(lambda cl: osd_in_map(cl, 1), timeout=10, what="osd.1 added")
    b = mgr_factory()
    api_b = b.api()
    s = api_b.wait_for(lambda x: len((st := x.status())["mgrs"]) == 2 and st, timeout=5,
                       what="b sees both mgrs")
    assert s["leader"] == "mgr-a"
    assert [(m["name"], m["leader"]) for m in s["mgrs"]] == [("mgr-a", True), ("mgr-b", False)]
    with pytest.raises(MgrApiError) as e:
        api_b.post("/api/osd/1/out", follow=False)
    assert e.value.status == 307 and e.value.body["leader"] == a.url
    assert api_b.post("/api/osd/1/out")["in"] is False     # followed to the leader
    metrics_b = api_b.get("/metrics")
    assert 'pando_mgr_leader{mgr="mgr-b"} 0' in metrics_b
    assert 'pando_mgr_leader{mgr="mgr-a"} 1' in a.api().get("/metrics")


def test_killed_leader_is_replaced_within_the_lease_and_the_new_one_writes(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory) -> None:
    c = etcd.client()
    mgrs: list[MgrProcess] = [mgr_factory(), mgr_factory(), mgr_factory()]
    c.wait_for(map_of, timeout=10, what="map written")
    assert _leader_name(etcd) == "mgr-a"
    mgrs[0].kill9()
    t0 = time.monotonic()
    new = c.wait_for(lambda _: _leader_name(etcd) not in (None, "mgr-a") and _leader_name(etcd),
                     timeout=10, what="a new leader")
    took = time.monotonic() - t0
    assert took <= LEASE + 1, f"takeover after {took:.1f}s"
    presence(4)
    o = c.wait_for(lambda cl: osd_in_map(cl, 4), timeout=5, what="osd.4 added by new leader")
    assert o["up"] and (map_of(c) or {})["updated_by"] == new
    leaders = [m.name for m in mgrs[1:] if m.api().get("/metrics").count(
        f'pando_mgr_leader{{mgr="{m.name}"}} 1')]
    assert leaders == [new]


def test_a_deposed_leader_cannot_write(etcd: EtcdCluster, mgr_factory: Factory,
                                       presence: Factory) -> None:
    c = etcd.client()
    a, b = mgr_factory(), mgr_factory()
    c.wait_for(map_of, timeout=10, what="map written")
    old = c.call("/v3/kv/range", {"key": b64(PREFIX + "mgr/leader")})["kvs"][0]
    assert a.proc is not None
    a.proc.send_signal(signal.SIGSTOP)       # a hung leader: its lease runs out
    try:
        c.wait_for(lambda _: _leader_name(etcd) == "mgr-b", timeout=10, what="b leads")
        # The very txn a would send with its old leader key: refused.
        bogus = json.dumps({"epoch": 999, "osds": []})
        r = c.call("/v3/kv/txn", {
            "compare": [{"key": b64(PREFIX + "mgr/leader"), "result": "EQUAL",
                         "target": "CREATE", "create_revision": old["create_revision"]}],
            "success": [{"request_put": {"key": b64(PREFIX + "map"), "value": b64(bogus)}}]})
        assert not r.get("succeeded", False)
        presence(2)
        c.wait_for(lambda cl: osd_in_map(cl, 2), timeout=5, what="osd.2 added by b")
    finally:
        a.proc.send_signal(signal.SIGCONT)
    a.api().wait_for(lambda x: x.status()["leader"] == "mgr-b", timeout=5, what="a follows b")
    assert "pando_mgr_leader{mgr=\"mgr-a\"} 0" in a.api().get("/metrics")
    time.sleep(1)
    m = map_of(c)
    assert m is not None and m["epoch"] != 999 and m["updated_by"] == "mgr-b"
    assert b.alive() and a.alive()


def test_sigterm_exits_0_and_hands_over_at_once(etcd: EtcdCluster, mgr_factory: Factory) -> None:
    c = etcd.client()
    a, _ = mgr_factory(lease=10), mgr_factory(lease=10)
    c.wait_for(lambda _: _leader_name(etcd) == "mgr-a", timeout=10, what="a leads")
    t0 = time.monotonic()
    assert a.stop() == 0
    c.wait_for(lambda _: _leader_name(etcd) == "mgr-b", timeout=10, what="b leads")
    assert time.monotonic() - t0 < 10 / 4 + 1.5       # one campaign tick, not the lease
    assert c.get(PREFIX + "mgr/members/mgr-a") is None
    assert "lease" in a.log_text() and "revoked" in a.log_text()


def test_one_etcd_member_of_three_killed_the_mgr_goes_on(
        etcd3: EtcdCluster, mgr3_factory: Factory) -> None:
    c = etcd3.client()
    p1 = HandPresence(etcd3.pod, c, PREFIX + "osd/1", osd_value(1), ttl=LEASE).start()
    p2 = HandPresence(etcd3.pod, c, PREFIX + "osd/2", osd_value(2), ttl=LEASE).start()
    try:
        mgr = mgr3_factory()
        c.wait_for(lambda cl: (osd_in_map(cl, 1) or {}).get("up")
                   and (osd_in_map(cl, 2) or {}).get("up"), timeout=10, what="osds up")
        etcd3.members[0].kill9()            # the mgr's first endpoint
        p1.stop_keepalive()
        c.wait_for(lambda cl: (osd_in_map(cl, 1) or {}).get("up") is False, timeout=10,
                   what="osd.1 down with 2 of 3 members")
        api = mgr.api()
        s = api.wait_for(lambda x: (st := x.status())["health"] != "HEALTH_OK"
                         and any(ch["code"] == "ETCD_QUORUM" for ch in st["checks"]) and st,
                         timeout=15, what="ETCD_QUORUM warning")
        assert s["etcd"]["quorum"] is True and "cached" not in s
        assert [m["healthy"] for m in s["etcd"]["members"]].count(False) == 1
        assert api.post("/api/osd/2/out")["in"] is False
        etcd3.members[0].start()
        one = etcd3.client()          # ready before teardown's SIGTERM
        one.urls = [etcd3.members[0].client_url]
        one.wait_healthy()
    finally:
        p1.stop_keepalive()
        p2.stop_keepalive()


def test_etcd_gone_the_mgr_serves_cached_state_refuses_changes_and_recovers(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory) -> None:
    presence(1, ttl=10)
    mgr = mgr_factory()
    api = mgr.api()
    api.wait_for(lambda x: x.osd_states() == {1: (True, True)}, timeout=10, what="osd.1 up")
    etcd.members[0].kill9()
    s = api.wait_for(lambda x: (st := x.status()).get("cached") and st, timeout=10,
                     what="cached status")
    assert s["health"] == "HEALTH_ERR" and s["osds"] == {"total": 1, "up": 1, "in": 1}
    assert any(ch["code"] == "ETCD_QUORUM" for ch in s["checks"])
    assert api.get("/api/osds")[0]["up"] is True
    with pytest.raises(MgrApiError) as e:
        api.post("/api/osd/1/out")
    assert e.value.status == 503 and "error" in e.value.body
    time.sleep(1)
    assert mgr.alive()
    assert mgr.log_text().count("etcd unreachable") <= 3     # logged once per task
    etcd.members[0].start()
    api.wait_for(lambda x: "cached" not in x.status(), timeout=15, what="fresh again")
    # Its lease survived the restart (etcd keeps leases), so it leads again.
    out = api.wait_for(lambda x: x.post("/api/osd/1/out"), timeout=10, what="leads again")
    assert out["in"] is False and api.status()["leader"] == "mgr-a"


def test_bad_arguments_are_refused_with_a_clear_message(pod: Any, tmp_path: Path) -> None:
    seed = tmp_path / "bad.conf"
    seed.write_text("osd 1 ctl=nowhere\n")
    for args, words in ((["--lease", "0"], "must be > 0"), (["--listen", "x"], "HOST:PORT"),
                        (["--seed", str(seed)], "line 1")):
        m = MgrProcess(pod, tmp_path / "mgr", "http://127.0.0.1:2379", extra_args=args)
        cp = pod.run(m.argv(), check=False, timeout=30)
        assert cp.returncode == 2 and words in cp.stderr, cp.stderr


def test_log_file_records_every_state_change(etcd: EtcdCluster, mgr_factory: Factory,
                                             presence: Factory, tmp_path: Path) -> None:
    log = tmp_path / "mgr-a.file.log"
    p1 = presence(1)
    mgr = mgr_factory(extra_args=["--log-file", str(log), "--log-level", "info"])
    etcd.client().wait_for(lambda cl: (osd_in_map(cl, 1) or {}).get("up"), timeout=10,
                           what="osd.1 up")
    p1.revoke()
    etcd.client().wait_for(lambda cl: (osd_in_map(cl, 1) or {}).get("up") is False,
                           timeout=5, what="osd.1 down")
    assert mgr.stop() == 0
    text = log.read_text()
    for line in ("listening on", "leader acquired", "map epoch 1 written", "osd.1 added",
                 "osd.1 down: presence lease expired", "revoked", "stopped"):
        assert line in text, line
    assert " DEBUG " not in text


def test_after_etcd_returns_the_map_catches_up_with_an_osd_lost_meanwhile(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory) -> None:
    c = etcd.client()
    p1, _ = presence(1), presence(2)
    api = mgr_factory().api()
    api.wait_for(lambda x: x.osd_states() == {1: (True, True), 2: (True, True)}, timeout=10,
                 what="osds up")
    etcd.members[0].kill9()
    p1.stop_keepalive()                     # osd.1 dies while etcd is away
    api.wait_for(lambda x: x.status().get("cached"), timeout=10, what="cached")
    time.sleep(1)
    etcd.members[0].start()
    # etcd restores leases on restart with a fresh TTL plus an election
    # timeout (1 s here): osd.1's runs out then, osd.2's is kept alive again.
    t0 = time.monotonic()
    c.wait_for(lambda cl: (osd_in_map(cl, 1) or {}).get("up") is False, timeout=15,
               what="osd.1 down after etcd came back")
    assert time.monotonic() - t0 < LEASE + 1 + 3
    assert (osd_in_map(c, 2) or {}).get("up") is True
    api.wait_for(lambda x: x.osd_states() == {1: (False, True), 2: (True, True)}, timeout=5,
                 what="the mgr serves the new map")
