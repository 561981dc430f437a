"""Rebuild planning as pure functions (pando_mgr.rebuild and the
rate history): which jobs a map change makes or cancels, when a job is
done, the summaries, the rebuild request's checks."""
from __future__ import annotations

import pytest
from pando_mgr import osdmap, rebuild
from pando_mgr.history import RateHistory
from pando_mgr.osdmap import ClusterMap, MapError, Osd
from pando_mgr.rebuild import Job


def cluster(*states: tuple[bool, bool], epoch: int = 5) -> ClusterMap:
    """OSDs 1.. with (up, in) each."""
    return ClusterMap(epoch=epoch, osds=[Osd(id=i, ctl=f"h:{i}", nfs=f"h:{100 + i}", up=u,
                                             in_=n) for i, (u, n) in enumerate(states, 1)])


def test_a_change_that_takes_an_osd_out_makes_one_job_at_its_epoch() -> None:
    old = cluster((True, True), (False, True), (True, True))
    new = osdmap.mark_out(old, 2, 50.0, "mgr-a")
    assert new is not None
    (job,) = rebuild.out_jobs(old, new, {}, 50.0, "mgr-a")
    assert job == Job(id=6, osd=2, reason="out", target=None, created=50.0, by="mgr-a")
    assert rebuild.out_jobs(new, new, {}, 51.0, "mgr-a") == [], "no change, no job"
    assert rebuild.out_jobs(None, new, {}, 51.0, "mgr-a") == [], "a seed outs nobody"


def test_an_osd_with_an_active_job_gets_no_second_one() -> None:
    old = cluster((True, True), (True, True))
    new = osdmap.mark_out(old, 1, 50.0, "mgr-a")
    assert new is not None
    admin = {3: Job(id=3, osd=1, reason="admin", target=2)}
    assert rebuild.out_jobs(old, new, admin, 50.0, "mgr-a") == []


def test_marking_in_cancels_out_jobs_of_that_osd_only() -> None:
    old = cluster((True, False), (True, False))
    new = osdmap.mark_in(old, 1, 50.0, "mgr-a")
    assert new is not None
    jobs = {4: Job(4, 1, "out"), 5: Job(5, 2, "out"), 6: Job(6, 1, "admin")}
    assert rebuild.cancelled_jobs(old, new, jobs) == [Job(4, 1, "out")]


def test_a_job_is_done_when_every_present_manager_lists_it() -> None:
    jobs = {4: Job(4, 1, "out"), 5: Job(5, 2, "out")}
    mds: dict[str, dict[str, object]] = {"a": {}, "b": {}}
    prog = {"a": {"jobs_done": [4, 5]}, "b": {"jobs_done": [4]}}
    assert rebuild.done_jobs(jobs, mds, prog) == [Job(4, 1, "out")]
    assert rebuild.done_jobs(jobs, {"a": {}}, prog) == list(jobs.values())
    assert rebuild.done_jobs(jobs, {}, prog) == [], "nobody present: nobody ran it"
    assert rebuild.done_jobs(jobs, {"a": {}, "c": {}}, prog) == [], "c has no progress yet"
    assert rebuild.done_jobs(jobs, {"a": {}}, {"a": {"jobs_done": ["4", True]}}) == []


def test_summary_sums_and_takes_the_slowest_eta() -> None:
    prog = {"a": {"state": "rebuilding", "files_total": 10, "files_done": 5, "bytes_total": 100,
                  "bytes_done": 50, "rate_bps": 10.0, "eta_s": 5.0},
            "b": {"state": "scanning", "files_total": 2, "bytes_total": 40, "rate_bps": 4.0,
                  "eta_s": 9.5},
            "c": {"state": "idle", "eta_s": 100.0, "files_total": "x"}}
    s = rebuild.summary({7: Job(7, 3, "out")}, {"a": {}, "b": {}}, prog)
    assert (s["files_total"], s["files_done"], s["bytes_total"], s["bytes_done"]) == (
        12, 5, 140, 50)
    assert (s["rate_bps"], s["eta_s"], s["running"]) == (14.0, 9.5, True)
    assert s["jobs"] == [{"id": 7, "osd": 3, "reason": "out", "target": None, "created": 0.0,
                          "by": "", "done_by": [], "pending_on": ["a", "b"]}]
    scanning = {**prog, "a": {"state": "scanning", "bytes_total": 100, "bytes_done": 20,
                              "rate_bps": 0.0, "eta_s": 0.0}}
    assert rebuild.summary({}, {}, scanning)["eta_s"] is None, "no rate: unknown, not 0"
    no_eta = {"a": {"state": "rebuilding", "bytes_total": 100, "bytes_done": 20,
                    "rate_bps": 40.0}}
    assert rebuild.summary({}, {}, no_eta)["eta_s"] == 0.0, "the FSAL's own word"
    idle = rebuild.summary({}, {}, {})
    assert (idle["running"], idle["eta_s"], idle["jobs"]) == (False, 0.0, [])


@pytest.mark.parametrize("req,status", [
    (None, 400), ({"osd": True}, 400), ({"osd": 0}, 400), ({"osd": 1, "x": 0}, 400),
    ({"osd": 9}, 404), ({"osd": 1, "target": 1}, 400), ({"osd": 1, "target": 2}, 400),
    ({"osd": 1, "target": 3}, 400), ({"osd": 1, "target": 7}, 400),
    ({"osd": 1, "target": 1.5}, 400)])
def test_rebuild_checks(req: object, status: int) -> None:
    m = cluster((True, True), (False, True), (True, False), (True, True))
    with pytest.raises(MapError) as e:
        rebuild.check_rebuild(m, req)
    assert e.value.status == status


def test_rebuild_check_passes_a_good_target_or_none() -> None:
    m = cluster((True, True), (False, True), (True, False), (True, True))
    assert rebuild.check_rebuild(m, {"osd": 2, "target": 4}) == (2, 4)
    assert rebuild.check_rebuild(m, {"osd": 2, "target": None}) == (2, None)
    with pytest.raises(MapError) as e:
        rebuild.check_no_active_job({3: Job(3, 2, "out")}, 2)
    assert e.value.status == 409


def test_scrub_requests_count_up_and_only_start_and_stop_pass() -> None:
    assert rebuild.scrub_request("start", None, 1.0) == {"id": 1, "action": "start", "time": 1.0}
    assert rebuild.scrub_request("stop", {"id": 41}, 2.0)["id"] == 42
    assert rebuild.scrub_request("stop", {"id": "x"}, 2.0)["id"] == 1
    with pytest.raises(MapError):
        rebuild.scrub_request("pause", None, 1.0)


def test_rate_history_keeps_a_point_a_second_over_ten_minutes() -> None:
    h = RateHistory()
    for i in range(4 * 700):                    # 700 s of 0.25 s polls
        h.sample(float(i), now=i * 0.25)
    pts = h.to_json()
    assert 590 <= len(pts) <= 610
    assert pts[-1] == {"t": 699.75, "rate_bps": 2799.0}, "the newest sample is kept"
    assert pts[0]["t"] >= 699.75 - 600
    gaps = [b["t"] - a["t"] for a, b in zip(pts, pts[1:])]
    assert min(gaps) >= 1.0 - 1e-9
