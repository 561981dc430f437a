"""Rebuild jobs and scrub on a real etcd and real pando-mgr processes
(mgr/README.md, "Rebuild and scrub"): the FSAL is stood in for by its
`mds/<name>` presence and `rebuild/progress/<name>`, `scrub/progress/
<name>` keys on that presence's lease, put here as the FSAL puts them."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import (PREFIX, jobs_of, osd_in_map, parse_prometheus, put_progress,
                     rebuild_cluster, rebuild_progress, scrub_progress, write_seed)
from pando_mgr.etcd import Etcd
from pando_mgr.manager import group_names, read_state, state_ranges
from pando_testing.etcd import EtcdCluster
from pando_testing.mgr import MgrApiError, MgrProcess
from pando_testing.pod import Pod

Factory = Callable[..., Any]


def _wait_jobs(etcd: EtcdCluster, pred: Callable[[dict[int, dict[str, Any]]], bool],
               timeout: float = 10, what: str = "jobs") -> dict[int, dict[str, Any]]:
    seen: list[dict[int, dict[str, Any]]] = [{}]

    def ok(cl: Any) -> bool:
        seen[0] = jobs_of(cl)
        return pred(seen[0])
    etcd.client().wait_for(ok, timeout=timeout, what=what)
    return seen[0]


def test_an_osd_marked_out_by_command_gets_one_job_named_by_the_epoch_that_took_it_out(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, _ = rebuild_cluster(mgr_factory, presence, tmp_path)
    ans = api.post("/api/osd/2/out")
    jobs = jobs_of(etcd.client())
    assert list(jobs) == [ans["epoch"]], "the job is written with the map, not a poll later"
    job = jobs[ans["epoch"]]
    assert {k: job[k] for k in ("id", "osd", "reason", "target", "by")} == {
        "id": ans["epoch"], "osd": 2, "reason": "out", "target": None, "by": "mgr-a"}
    assert time.time() - job["created"] < 10
    assert api.post("/api/osd/2/out")["changed"] is False
    time.sleep(0.6)
    assert list(jobs_of(etcd.client())) == [ans["epoch"]]
    r = api.get("/api/rebuild")
    assert r["running"] is True
    assert [(j["id"], j["osd"], j["pending_on"]) for j in r["jobs"]] == [
        (ans["epoch"], 2, ["mds-a"])]


def test_osd_in_again_cancels_its_out_job_but_not_an_admin_job(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, _ = rebuild_cluster(mgr_factory, presence, tmp_path)
    out = api.post("/api/osd/2/out")["epoch"]
    admin = api.post("/api/rebuild", {"osd": 3})["id"]
    assert sorted(jobs_of(etcd.client())) == [out, admin]
    api.post("/api/osd/2/in")
    assert list(jobs_of(etcd.client())) == [admin]
    api.post("/api/osd/3/out")              # osd.3 has a job already: no second one
    api.post("/api/osd/3/in")               # and its admin job is not an out-job
    time.sleep(0.6)
    assert list(jobs_of(etcd.client())) == [admin]


def test_a_job_is_deleted_once_every_present_fsal_lists_it_done(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    a, b = fsals
    first = api.post("/api/osd/3/out")["epoch"]
    put_progress(a, "rebuild", rebuild_progress(jobs_done=[first], state="idle"))
    put_progress(b, "rebuild", rebuild_progress(jobs_active=[first]))
    job = api.wait_for(lambda x: (j := x.get("/api/rebuild")["jobs"]) and j[0]["done_by"]
                       and j[0], timeout=5, what="mds-a's done seen")
    assert (job["done_by"], job["pending_on"]) == (["mds-a"], ["mds-b"])
    time.sleep(1.0)
    assert list(jobs_of(etcd.client())) == [first], "mds-b has not finished it"
    put_progress(b, "rebuild", rebuild_progress(jobs_done=[first], state="idle"))
    _wait_jobs(etcd, lambda j: not j, timeout=5, what="the job deleted")
    assert api.wait_for(lambda x: not x.get("/api/rebuild")["running"], timeout=5,
                        what="rebuild idle")

    # A metadata manager that is gone (its presence lease revoked) holds no job back.
    second = api.post("/api/osd/2/out")["epoch"]
    put_progress(a, "rebuild", rebuild_progress(jobs_done=[first, second], state="idle"))
    time.sleep(1.0)
    assert list(jobs_of(etcd.client())) == [second]
    b.revoke()
    _wait_jobs(etcd, lambda j: not j, timeout=5, what="the job deleted without mds-b")


def test_no_job_is_deleted_while_no_fsal_is_present(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path)
    job = api.post("/api/osd/1/out")["epoch"]
    fsals[0].revoke()
    api.wait_for(lambda x: any(c["code"] == "MDS_DOWN" for c in x.status()["checks"]),
                 timeout=5, what="MDS_DOWN")
    time.sleep(1.0)
    assert list(jobs_of(etcd.client())) == [job]


def test_an_osd_down_past_the_interval_gets_one_job_across_leader_failovers(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    seed = write_seed(tmp_path / "cluster.conf", [1, 2, 3])
    osds = [presence(i) for i in (1, 2, 3)]
    fsal = presence(mds="mds-a")
    a = mgr_factory(seed=seed, down_out_interval=4)
    b = mgr_factory(seed=seed, down_out_interval=4)
    api = b.api()
    api.wait_for(lambda x: x.osd_states() == {i: (True, True) for i in (1, 2, 3)}, timeout=15,
                 what="all osds up")
    osds[1].stop_keepalive()                            # osd.2 killed
    api.wait_for(lambda x: x.osd_states()[2] == (False, True), timeout=10, what="osd.2 down")
    a.kill9()                                           # the leader, before the interval
    o2 = etcd.client().wait_for(lambda cl: (o := osd_in_map(cl, 2)) and not o["in"] and o,
                                timeout=15, what="osd.2 out")
    jobs = _wait_jobs(etcd, lambda j: len(j) >= 1, timeout=5, what="a job")
    (jid, job), = jobs.items()
    assert (job["osd"], job["reason"], job["by"]) == (2, "out", "mgr-b")
    assert api.get("/api/map")["epoch"] >= jid and o2["out_at"] > 0

    c = mgr_factory(seed=seed, down_out_interval=4)     # a standby, then the leader
    c.api().wait_for(lambda x: len(x.status()["mgrs"]) == 2, timeout=10, what="c is up")
    b.kill9()
    c.api().wait_for(lambda x: x.status()["leader"] == "mgr-c", timeout=10, what="c leads")
    time.sleep(1.0)
    assert list(jobs_of(etcd.client())) == [jid], "a new leader made a second job"
    put_progress(fsal, "rebuild", rebuild_progress(jobs_done=[jid], state="idle"))
    _wait_jobs(etcd, lambda j: not j, timeout=5, what="c deleted the job b made")


REFUSALS: list[tuple[Any, int, str]] = [
    ("{nope", 400, "not JSON"),
    ([1], 400, "JSON object"),
    ({"osd": "1"}, 400, "osd must be"),
    ({"osd": 1, "spare": 4}, 400, "unknown fields"),
    ({"osd": 9}, 404, "no such OSD"),
    ({"osd": 1, "target": 9}, 400, "not in the map"),
    ({"osd": 1, "target": 1}, 400, "is the OSD to rebuild"),
    ({"osd": 1, "target": 3}, 400, "is down"),
    ({"osd": 1, "target": 2}, 400, "is out"),
    ({"osd": 1, "target": "4"}, 400, "target must be"),
]


def test_rebuild_requests_are_refused_with_the_status_that_says_why(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    mgr, api, osds, _ = rebuild_cluster(mgr_factory, presence, tmp_path, ids=(1, 2, 3, 4))
    api.post("/api/osd/2/out")
    osds[2].revoke()
    api.wait_for(lambda x: x.osd_states()[3] == (False, True), timeout=5, what="osd.3 down")
    epoch = api.get("/api/map")["epoch"]
    for body, status, why in REFUSALS:
        with pytest.raises(MgrApiError) as e:
            if isinstance(body, str):
                _post_raw(mgr, "/api/rebuild", body.encode())
            else:
                api.post("/api/rebuild", body)
        assert e.value.status == status and why in e.value.body["error"], (body, e.value.body)
    assert api.get("/api/map")["epoch"] == epoch, "a refused request changed the map"
    assert [j["osd"] for j in jobs_of(etcd.client()).values()] == [2]


def _post_raw(mgr: MgrProcess, path: str, data: bytes) -> None:
    def go() -> tuple[int, bytes]:
        req = urllib.request.Request(mgr.url + path, data=data, method="POST",
                                     headers=mgr.api().headers)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
    code, raw = mgr.pod.call_inside(go)
    if code >= 400:
        raise MgrApiError(code, json.loads(raw))


def test_a_rebuild_request_is_a_job_at_a_new_epoch_and_a_second_one_is_refused(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, _ = rebuild_cluster(mgr_factory, presence, tmp_path, ids=(1, 2, 3, 4))
    before = api.get("/api/map")["epoch"]
    job = api.post("/api/rebuild", {"osd": 1, "target": 4})
    m = api.get("/api/map")
    assert job["id"] == m["epoch"] == before + 1, "each request gets its own epoch"
    assert "osd.1 rebuild onto osd.4" in m["reason"]
    assert (job["osd"], job["reason"], job["target"], job["by"]) == (1, "admin", 4, "mgr-a")
    assert jobs_of(etcd.client()) == {job["id"]: job}
    other = api.post("/api/rebuild", {"osd": 2, "target": None})
    assert other["id"] == job["id"] + 1 and other["target"] is None
    for osd in (1, 2):
        with pytest.raises(MgrApiError) as e:
            api.post("/api/rebuild", {"osd": osd})
        assert e.value.status == 409 and "already has an active rebuild job" in \
            e.value.body["error"]
    api.post("/api/osd/1/out")              # out while an admin job runs: no second job
    assert sorted(jobs_of(etcd.client())) == [job["id"], other["id"]]


def test_a_follower_sends_rebuild_and_scrub_requests_to_the_leader(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    a, _, _, _ = rebuild_cluster(mgr_factory, presence, tmp_path)
    b = mgr_factory()
    api_b = b.api()
    api_b.wait_for(lambda x: len(x.status()["mgrs"]) == 2, timeout=10, what="b is up")
    for path, body in (("/api/rebuild", {"osd": 1}), ("/api/scrub", {"action": "start"})):
        with pytest.raises(MgrApiError) as e:
            api_b.post(path, body, follow=False)
        assert e.value.status == 307 and e.value.body["leader"] == a.url
    assert api_b.post("/api/rebuild", {"osd": 1})["by"] == "mgr-a"


def test_rebuild_sums_the_fsals_progress_and_keeps_the_rate_history(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    jid = api.post("/api/osd/2/out")["epoch"]
    put_progress(fsals[0], "rebuild", rebuild_progress(
        jobs_active=[jid], files_total=100, files_done=40, files_failed=1,
        bytes_total=10**9, bytes_done=4 * 10**8, rate_bps=3e7, eta_s=20.0, parallel=8))
    put_progress(fsals[1], "rebuild", rebuild_progress(
        jobs_active=[jid], files_total=20, files_done=20, bytes_total=2 * 10**8,
        bytes_done=10**8, rate_bps=1e7, eta_s=10.0))
    r = api.wait_for(lambda x: (v := x.get("/api/rebuild"))["files_total"] == 120 and v,
                     timeout=5, what="both FSALs' progress")
    assert (r["files_done"], r["files_failed"]) == (60, 1)
    assert (r["bytes_total"], r["bytes_done"]) == (12 * 10**8, 5 * 10**8)
    assert r["rate_bps"] == 4e7 and r["eta_s"] == 20.0 and r["running"] is True
    assert sorted(r["mds"]) == ["mds-a", "mds-b"] and r["mds"]["mds-a"]["parallel"] == 8
    assert [j["id"] for j in r["jobs"]] == [jid]
    hist = api.wait_for(lambda x: [h for h in x.get("/api/rebuild")["history"]
                                   if h["rate_bps"] == 4e7], timeout=5, what="rate sampled")
    assert set(hist[0]) == {"t", "rate_bps"}
    st = api.status()["rebuild"]
    assert {k: st[k] for k in ("running", "files_total", "files_done", "bytes_total",
                               "bytes_done", "rate_bps", "eta_s")} == {
        "running": True, "files_total": 120, "files_done": 60, "bytes_total": 12 * 10**8,
        "bytes_done": 5 * 10**8, "rate_bps": 4e7, "eta_s": 20.0}
    assert [j["id"] for j in st["jobs"]] == [jid] and "mds" not in st
    fsals[0].revoke()                       # its progress goes with its presence
    r = api.wait_for(lambda x: (v := x.get("/api/rebuild"))["files_total"] == 20 and v,
                     timeout=5, what="mds-a's progress gone")
    assert r["rate_bps"] == 1e7


def test_scrub_requests_grow_and_the_fsals_findings_are_summed(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    first = api.post("/api/scrub", {"action": "start"})
    assert (first["id"], first["action"]) == (1, "start")
    assert etcd.client().get_json(PREFIX + "scrub/request") == first
    second = api.post("/api/scrub", {"action": "stop"})
    assert (second["id"], second["action"]) == (2, "stop")
    for bad in ({"action": "pause"}, {}, {"action": "start", "x": 1}, ["start"]):
        with pytest.raises(MgrApiError) as e:
            api.post("/api/scrub", bad)
        assert e.value.status == 400
    put_progress(fsals[0], "scrub", scrub_progress(files_total=500, files_done=120,
                                                   mismatches=3, repaired=2, unrepairable=0))
    put_progress(fsals[1], "scrub", scrub_progress(state="idle", mismatches=1, repaired=1))
    s = api.wait_for(lambda x: (v := x.get("/api/scrub"))["mismatches"] == 4 and v, timeout=5,
                     what="both FSALs' scrub progress")
    assert (s["running"], s["repaired"], s["unrepairable"]) == (True, 3, 0)
    assert sorted(s["mds"]) == ["mds-a", "mds-b"] and s["request"]["id"] == 2
    assert api.status()["scrub"] == {"running": True, "mismatches": 4, "repaired": 3,
                                     "unrepairable": 0}


def test_unrepairable_scrub_findings_are_health_err_osd_scrub_errors(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path)
    api.wait_for(lambda x: x.status()["health"] == "HEALTH_OK", timeout=10, what="HEALTH_OK")
    put_progress(fsals[0], "scrub", scrub_progress(mismatches=3, repaired=1, unrepairable=2))
    st = api.wait_for(lambda x: (s := x.status())["health"] == "HEALTH_ERR" and s, timeout=5,
                      what="HEALTH_ERR")
    (check,) = [c for c in st["checks"] if c["code"] == "OSD_SCRUB_ERRORS"]
    assert check["severity"] == "HEALTH_ERR" and check["summary"] == "2 scrub errors"
    assert check["detail"] == ["mds mds-a: scrub found 2 unrepairable mismatches"]
    put_progress(fsals[0], "scrub", scrub_progress(mismatches=3, repaired=3))
    api.wait_for(lambda x: x.status()["health"] == "HEALTH_OK", timeout=5, what="HEALTH_OK")


def test_metrics_show_rebuild_and_scrub_per_metadata_manager(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    jid = api.post("/api/osd/3/out")["epoch"]
    put_progress(fsals[0], "rebuild", rebuild_progress(
        jobs_active=[jid], files_total=10, files_done=4, files_failed=1, bytes_total=1000,
        bytes_done=400, rate_bps=100.0, eta_s=6.0))
    put_progress(fsals[1], "rebuild", rebuild_progress(jobs_done=[jid], state="idle"))
    put_progress(fsals[0], "scrub", scrub_progress(files_done=7, mismatches=2, repaired=1,
                                                   unrepairable=1))
    m = api.wait_for(lambda x: (p := parse_prometheus(x.get("/metrics"))).get(
        "pando_rebuild_files_total") and len(p["pando_rebuild_files_total"]) == 2 and
        p.get("pando_scrub_files_done") and p, timeout=5, what="rebuild metrics")
    a = {"mds": "mds-a"}
    for name, want in (("pando_rebuild_files_total", 10), ("pando_rebuild_files_done", 4),
                       ("pando_rebuild_files_failed", 1), ("pando_rebuild_bytes_total", 1000),
                       ("pando_rebuild_bytes_done", 400),
                       ("pando_rebuild_rate_bytes_per_second", 100),
                       ("pando_scrub_files_done", 7), ("pando_scrub_mismatches_total", 2),
                       ("pando_scrub_repaired_total", 1), ("pando_scrub_unrepairable_total", 1)):
        assert (a, float(want)) in m[name], (name, m[name])
    assert ({"mds": "mds-b"}, 0.0) in m["pando_rebuild_files_total"]
    assert m["pando_rebuild_jobs"] == [({}, 1.0)]
    assert m["pando_rebuild_eta_seconds"] == [({}, 6.0)]
    for name, samples in m.items():
        if name.startswith(("pando_rebuild", "pando_scrub")):
            assert all(set(lab) <= {"mds"} for lab, _ in samples), name


def test_the_poll_reads_every_key_but_the_per_file_tasks_and_reclaim_records_at_one_revision(
        pod: Pod, etcd: EtcdCluster) -> None:
    """Per-file rebuild tasks and a group's per-client reclaim records are
    thousands of keys the FSALs read: the mgr's poll lists neither."""
    c = etcd.client()
    keys = ["groups", "groups/g1/active", "groups/g1/clients/41.1", "groups/g1/held/a",
            "groups/g1/members/a", "groups/g1/members/b", "groups/g1/nsm/41.h",
            "groups/g1/snapshot", "groups/g1/snapshot_wanted", "groups/g2/members/c",
            "groups/g2x", "groups/g3/clients/5.5", "journal/g1/0000000000000001", "map",
            "mds/a", "mgr/leader", "osd/1", "rebuild/claims/a/00000000000000ff",
            "rebuild/jobs/7", "rebuild/progress/a", "rebuild/tasks/a/01/00000000000000ff",
            "rebuild/tasks/b/00/0000000000000001", "rebuild/tasksx", "scrub/progress/a",
            "scrub/request", "zzz"]
    for k in keys:
        c.put(PREFIX + k, "{}")
    c.put("/pando0", "{}")                          # past the prefix
    left_out = ("rebuild/tasks/", "groups/g1/clients/", "groups/g1/nsm/",
                "groups/g1/snapshot_wanted", "groups/g2x", "groups/g3/")

    async def read() -> tuple[list[str], list[str], int]:
        e = Etcd([etcd.members[0].client_url])
        try:
            names = await group_names(e, PREFIX)
            kvs, rev = await read_state(e, PREFIX)
        finally:
            await e.close()
        return names, sorted(kv.key[len(PREFIX):] for kv in kvs), rev
    names, got, rev = pod.call_inside(lambda: asyncio.run(read()))
    assert names == ["g1", "g2", "g3"]
    assert got == [k for k in keys if not k.startswith(left_out)]
    assert rev >= len(keys) + 1
    assert state_ranges(PREFIX)[0] == (PREFIX, PREFIX + "groups/")
