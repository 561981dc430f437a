"""The mgr's HTTP API (mgr/README.md): every route, answers to bad input,
redirects from followers, and /metrics."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import HandPresence, parse_prometheus, write_seed
from pando_testing.mgr import MgrApi, MgrApiError, MgrProcess

Factory = Callable[..., Any]


def _cluster(mgr_factory: Factory, presence: Factory, tmp_path: Path,
             ids: tuple[int, ...] = (1, 2, 3)) -> tuple[MgrProcess, MgrApi, list[HandPresence]]:
    seed = write_seed(tmp_path / "cluster.conf", list(ids))
    pres = [presence(i) for i in ids]
    presence(mds="mds-a")
    mgr = mgr_factory(seed=seed)
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in ids}, timeout=15,
                 what="all osds up")
    return mgr, api, pres


def test_status_says_health_ok_with_every_osd_up(mgr_factory: Factory, presence: Factory,
                                                 tmp_path: Path) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path)
    # The mgr serves status from its first snapshot, before its election
    # ends: wait for both the etcd members and the leader to be known.
    s = api.wait_for(lambda a: (st := a.status())["etcd"]["members"] and st["leader"] and st,
                     timeout=15, what="etcd members and the leader known")
    assert s["health"] == "HEALTH_OK", s["checks"]
    assert s["osds"] == {"total": 3, "up": 3, "in": 3}
    assert s["leader"] == "mgr-a"
    assert s["capacity"] == {"total": 3 * 10**9, "used": 3 * 4 * 10**8, "free": 3 * 6 * 10**8}
    assert s["clients"] == 2
    assert s["etcd"]["quorum"] is True
    assert "cached" not in s


@pytest.mark.parametrize(("ratios", "code"), [(("0.3", "0.5"), "OSD_NEARFULL"),
                                              (("0.2", "0.35"), "OSD_FULL")])
def test_nearfull_and_full_follow_the_ratios_the_mgr_is_given(
        mgr_factory: Factory, presence: Factory, tmp_path: Path, ratios: tuple[str, str],
        code: str) -> None:
    seed = write_seed(tmp_path / "cluster.conf", [1, 2])
    for i in (1, 2):
        presence(i)                 # 40 % of each OSD in use
    presence(mds="mds-a")
    api = mgr_factory(seed=seed, extra_args=["--nearfull-ratio", ratios[0],
                                             "--full-ratio", ratios[1]]).api()
    s = api.wait_for(lambda a: (st := a.status())["osds"]["up"] == 2 and st, timeout=15,
                     what="both osds up")
    assert [c["code"] for c in s["checks"]] == [code], s["checks"]
    assert s["checks"][0]["detail"] == ["osd.1 is 40% full", "osd.2 is 40% full"]


def test_osds_lists_the_map_with_presence_and_rates(mgr_factory: Factory, presence: Factory,
                                                    tmp_path: Path) -> None:
    _, api, pres = _cluster(mgr_factory, presence, tmp_path)
    pres[0].put(counters={"nfs_read_bytes": 0, "nfs_write_bytes": 0, "nfs_write_ops": 0})
    time.sleep(0.6)
    pres[0].put(counters={"nfs_read_bytes": 0, "nfs_write_bytes": 10**8, "nfs_write_ops": 100})
    o1 = api.wait_for(lambda a: (o := a.get("/api/osds")[0])["rates"]["write_bps"] > 0 and o,
                      timeout=5, what="osd.1 write rate")
    assert o1["id"] == 1 and o1["alive"] is True and o1["statfs"]["bytes_total"] == 10**9
    assert o1["rates"]["write_bps"] > 10**7 and o1["rates"]["read_bps"] == 0
    for key in ("ctl", "nfs", "advertise", "weight", "domain", "up", "in", "down_at", "out_at"):
        assert key in o1
    assert "weight_auto" not in o1
    hist = api.wait_for(lambda a: [h for h in a.get("/api/history") if h["write_bps"] > 0],
                        timeout=5, what="a history sample with writes")
    assert set(hist[0]) >= {"t", "read_bps", "write_bps"}
    assert api.status()["throughput"]["write_bps"] > 0


def test_out_in_add_and_remove_change_the_map_by_one_epoch_each(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path)
    epoch = api.get("/api/map")["epoch"]
    assert api.post("/api/osd/2/out")["in"] is False
    assert api.get("/api/map")["epoch"] == epoch + 1
    again = api.post("/api/osd/2/out")
    assert again["changed"] is False and api.get("/api/map")["epoch"] == epoch + 1
    assert api.post("/api/osd/2/in")["in"] is True
    added = api.post("/api/osds", {"ctl": "127.0.0.1:20599", "nfs": "127.0.0.1:20499",
                                   "domain": "rack9", "weight": 42})
    assert (added["id"], added["up"], added["in"], added["weight"]) == (4, False, True, 42)
    assert added["advertise"] == "127.0.0.1:20499"
    assert api.post("/api/osd/4/out")["in"] is False
    with pytest.raises(MgrApiError) as e:
        api.call("DELETE", "/api/osd/4")
    assert e.value.status == 409 and "unknown" in e.value.body["error"]
    assert api.call("DELETE", "/api/osd/4?force=1")["removed"] == 4
    assert 4 not in api.osd_states()
    assert api.get("/api/map")["epoch"] == epoch + 5


def test_remove_is_refused_while_in_or_holding_objects(mgr_factory: Factory,
                                                       presence: Factory,
                                                       tmp_path: Path) -> None:
    _, api, pres = _cluster(mgr_factory, presence, tmp_path)
    for path, why in (("/api/osd/1", "mark it out first"),):
        with pytest.raises(MgrApiError) as e:
            api.call("DELETE", path)
        assert e.value.status == 409 and why in e.value.body["error"]
    pres[0].put(statfs={"bytes_total": 10**9, "bytes_free": 10**8, "objects": 12})
    api.post("/api/osd/1/out")
    with pytest.raises(MgrApiError) as e:
        api.wait_for(lambda a: a.get("/api/df")["osds"][0]["objects"] == 12, timeout=5)
        api.call("DELETE", "/api/osd/1")
    assert e.value.status == 409 and "12 objects" in e.value.body["error"]
    pres[0].put(statfs={"bytes_total": 10**9, "bytes_free": 10**9, "objects": 0})
    api.wait_for(lambda a: a.get("/api/df")["osds"][0]["objects"] == 0, timeout=5)
    assert api.call("DELETE", "/api/osd/1")["removed"] == 1
    time.sleep(0.8)              # its presence key, from before the removal, stays out
    assert sorted(api.osd_states()) == [2, 3]


@pytest.mark.parametrize("method,path,body,status", [
    ("POST", "/api/osd/9/out", None, 404),
    ("POST", "/api/osd/9/in", None, 404),
    ("DELETE", "/api/osd/9", None, 404),
    ("POST", "/api/osd/x/out", None, 400),
    ("POST", "/api/osd/0/out", None, 400),
    ("POST", "/api/osds", {"nfs": "127.0.0.1:1"}, 400),
    ("POST", "/api/osds", {"ctl": "no-port", "nfs": "127.0.0.1:1"}, 400),
    ("POST", "/api/osds", {"ctl": "h:1", "nfs": "h:2", "weight": "big"}, 400),
    ("POST", "/api/osds", {"ctl": "h:1", "nfs": "h:2", "id": 1}, 409),
    ("POST", "/api/osds", [1, 2], 400),
    ("POST", "/api/osds", {"ctl": "h:1", "nfs": "h:2", "pool": "Fast"}, 400),
    ("POST", "/api/osds", {"ctl": "h:1", "nfs": "h:2", "pool": 3}, 400),
    ("GET", "/api/nothing", None, 404),
    ("PUT", "/api/osds", {}, 405),
])
def test_bad_requests_get_a_clear_error(mgr_factory: Factory, presence: Factory,
                                        tmp_path: Path, method: str, path: str,
                                        body: Any, status: int) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path, ids=(1,))
    with pytest.raises(MgrApiError) as e:
        api.call(method, path, body)
    assert e.value.status == status
    assert isinstance(e.value.body, dict) and e.value.body["error"]


def test_a_body_that_is_not_json_is_a_400(mgr_factory: Factory, presence: Factory,
                                          tmp_path: Path) -> None:
    mgr, _, _ = _cluster(mgr_factory, presence, tmp_path, ids=(1,))

    def post() -> tuple[int, bytes]:
        req = urllib.request.Request(mgr.url + "/api/osds", data=b"{nope", method="POST",
                                     headers=mgr.api().headers)
        try:
            urllib.request.urlopen(req, timeout=5)
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        return 200, b""
    code, raw = mgr.pod.call_inside(post)
    assert code == 400 and "not JSON" in json.loads(raw)["error"]


def test_df_mds_map_and_the_dashboard_files_are_served(mgr_factory: Factory,
                                                       presence: Factory,
                                                       tmp_path: Path) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path)
    df = api.get("/api/df")
    assert [o["id"] for o in df["osds"]] == [1, 2, 3]
    assert df["osds"][0] | {} == df["osds"][0] and df["osds"][0]["total"] == 10**9
    pool = df["pools"][0]
    assert (pool["name"], pool["copies"], pool["total"]) == ("default", 2, 3 * 10**9 // 2)
    mds = api.get("/api/mds")
    assert [(m["name"], m["epoch"], m["alive"]) for m in mds] == [("mds-a", 1, True)]
    m = api.get("/api/map")
    assert [o["id"] for o in m["osds"]] == [1, 2, 3] and m["partition"] == 1
    page = api.get("/")
    assert "<title>Pando cluster</title>" in page and "/static/app.js" in page
    assert "setInterval(refresh" in api.get("/static/app.js")
    assert ".HEALTH_OK" in api.get("/static/app.css")


def test_df_has_a_row_per_named_pool_and_osds_show_their_pool(mgr_factory: Factory,
                                                              presence: Factory,
                                                              tmp_path: Path) -> None:
    seed = write_seed(tmp_path / "cluster.conf", [1, 2, 3, 4])
    presence(1, pool="fast", total=4 * 10**9, free=10**9)
    presence(2, pool="fast", total=2 * 10**9, free=2 * 10**9)
    presence(3, pool="archive")
    presence(4)
    api = mgr_factory(seed=seed).api()
    api.wait_for(lambda a: [o["pool"] for o in a.get("/api/osds")] == ["fast", "fast",
                                                                       "archive", ""],
                 timeout=15, what="the presence's pools in the map")
    added = api.post("/api/osds", {"ctl": "127.0.0.1:20599", "nfs": "127.0.0.1:20499",
                                   "pool": "archive"})
    assert added["pool"] == "archive" and api.get("/api/map")["osds"][4]["pool"] == "archive"
    pools = api.get("/api/df")["pools"]
    assert [p["name"] for p in pools] == ["default", "archive", "fast"]
    assert pools[1] == {"name": "archive", "osds": 2, "up": 1, "total": 10**9,
                        "used": 4 * 10**8, "free": 6 * 10**8}  # osd.5 is not present: no bytes
    assert pools[2] == {"name": "fast", "osds": 2, "up": 2, "total": 6 * 10**9,
                        "used": 3 * 10**9, "free": 3 * 10**9}


def test_metrics_parse_and_their_labels_are_bounded(mgr_factory: Factory, presence: Factory,
                                                    tmp_path: Path) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path)
    epoch = api.get("/api/map")["epoch"]
    m = parse_prometheus(api.get("/metrics"))
    assert m["pando_map_epoch"] == [({}, float(epoch))] and epoch >= 1
    assert m["pando_mgr_leader"] == [({"mgr": "mgr-a"}, 1.0)]
    assert m["pando_health_status"] == [({}, 0.0)]
    assert sorted(lab["osd"] for lab, v in m["pando_osd_up"] if v == 1) == ["1", "2", "3"]
    assert ({"osd": "2"}, 10.0**9) in m["pando_osd_bytes_total"]
    assert {(lab["osd"], lab["proto"]) for lab, _ in m["pando_osd_write_bytes_total"]} == {
        (o, p) for o in "123" for p in ("nfs", "ctl")}
    buckets = [(lab["le"], v) for lab, v in m["pando_mds_op_duration_seconds_bucket"]
               if lab["op"] == "lookup"]
    assert buckets[0] == ("0.0001", 0) and buckets[1] == ("0.00025", 3)
    assert buckets[2] == ("0.0005", 8) and buckets[-1] == ("+Inf", 8)
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)      # cumulative
    assert m["pando_mds_op_duration_seconds_count"] == [({"mds": "mds-a", "op": "lookup"}, 8)]
    assert m["pando_mds_layouts"] == [({"mds": "mds-a"}, 5.0)]
    assert {lab["kind"]: v for lab, v in m["pando_mgr_etcd_malformed_total"]} == {
        k: 0 for k in ("map", "osd", "mds", "leader", "member", "job", "progress",
                       "scrub_request", "group_active", "group_member", "group_held",
                       "group_snapshot", "journal_segment")}
    allowed = {"osd", "proto", "mds", "op", "le", "mgr", "kind", "group"}
    for name, samples in m.items():
        for lab, _ in samples:
            assert set(lab) <= allowed, (name, lab)
    assert len(m["pando_mds_op_duration_seconds_bucket"]) == 17     # one op, 16 bounds + Inf
