"""Transcoding progress on a real etcd and a real pando-mgr (mgr/README.md,
"Rebuild and scrub"): the FSAL is stood in for by its `mds/<name>`
presence and the `transcode/progress/<name>` key it puts on a lease, put
here as ganesha-fsal/mds/transcode.c puts it; the pure summary too."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import PREFIX, parse_prometheus, put_progress, rebuild_cluster
from pando_mgr.progress import parse_key, transcode_summary
from pando_testing.etcd import EtcdCluster

Factory = Callable[..., Any]


def transcode_progress(**fields: Any) -> dict[str, Any]:
    """A `transcode/progress/<mds>` value as the FSAL puts it."""
    return {"passes": 3, "files_done": 0, "bytes_done": 0, "failed": 0, "retried": 0,
            "current_ino": 0, "last_pass_end": time.time(), "interval_s": 600,
            "updated": time.time()} | fields


def test_progress_keys_are_kind_slash_progress_slash_one_manager_name() -> None:
    assert parse_key("transcode/progress/mds-a") == ("transcode", "mds-a")
    assert parse_key("scrub/progress/b") == ("scrub", "b")
    assert parse_key("rebuild/progress/c") == ("rebuild", "c")
    for other in ("transcode/progress/", "transcode/progress/a/b", "transcode/request",
                  "rebuild/tasks/a/progress/b", "other/progress/a", "transcode/progressx"):
        assert parse_key(other) is None, other


def test_the_summary_sums_the_counters_and_counts_managers_transcoding_a_file_now() -> None:
    s = transcode_summary({
        "b": transcode_progress(files_done=2, bytes_done=3 << 20, failed=1, retried=2,
                                current_ino=17),
        "a": transcode_progress(files_done=5, bytes_done=10 << 20),
        "c": {"files_done": "seven", "bytes_done": None, "failed": True, "current_ino": "x"}})
    assert {k: v for k, v in s.items() if k != "mds"} == {
        "managers": 3, "files_done": 7, "bytes_done": 13 << 20, "failed": 1, "retried": 2,
        "running": 1}
    assert list(s["mds"]) == ["a", "b", "c"]
    assert transcode_summary({}) == {"managers": 0, "files_done": 0, "bytes_done": 0,
                                     "failed": 0, "retried": 0, "running": 0, "mds": {}}


def test_api_transcode_sums_every_managers_progress_and_status_carries_the_sums(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    assert api.get("/api/transcode") == {"managers": 0, "files_done": 0, "bytes_done": 0,
                                         "failed": 0, "retried": 0, "running": 0, "mds": {}}
    a = transcode_progress(files_done=3, bytes_done=12 << 20, failed=1, current_ino=42)
    put_progress(fsals[0], "transcode", a)
    put_progress(fsals[1], "transcode", transcode_progress(files_done=2, bytes_done=4 << 20,
                                                           retried=1))
    t = api.wait_for(lambda x: (v := x.get("/api/transcode"))["managers"] == 2 and v,
                     timeout=5, what="both FSALs' transcode progress")
    assert {k: v for k, v in t.items() if k != "mds"} == {
        "managers": 2, "files_done": 5, "bytes_done": 16 << 20, "failed": 1, "retried": 1,
        "running": 1}
    assert t["mds"]["mds-a"] == a and sorted(t["mds"]) == ["mds-a", "mds-b"]
    assert api.status()["transcode"] == {"managers": 2, "files_done": 5,
                                         "bytes_done": 16 << 20, "failed": 1, "retried": 1,
                                         "running": 1}
    fsals[0].revoke()                       # its progress goes with its lease
    t = api.wait_for(lambda x: (v := x.get("/api/transcode"))["managers"] == 1 and v,
                     timeout=5, what="mds-a's progress gone")
    assert (t["files_done"], t["running"], list(t["mds"])) == (2, 0, ["mds-b"])


def test_a_progress_value_that_is_not_a_json_object_is_ignored(
        etcd: EtcdCluster, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    c = etcd.client()
    c.put(PREFIX + "transcode/progress/mds-a", "not json")
    c.put(PREFIX + "transcode/progress/mds-b", json.dumps([1, 2]))
    put_progress(fsals[0], "transcode", transcode_progress(files_done=1))
    put_progress(fsals[1], "transcode", transcode_progress(files_done=1))
    api.wait_for(lambda x: x.get("/api/transcode")["files_done"] == 2, timeout=5,
                 what="the good values")
    c.put(PREFIX + "transcode/progress/mds-b", "{")
    t = api.wait_for(lambda x: (v := x.get("/api/transcode"))["managers"] == 1 and v,
                     timeout=5, what="the bad value dropped")
    assert list(t["mds"]) == ["mds-a"] and api.status()["health"] != "HEALTH_ERR"


def test_metrics_count_files_bytes_and_failures_per_metadata_manager_only(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    put_progress(fsals[0], "transcode", transcode_progress(files_done=4, bytes_done=1 << 22,
                                                           failed=1, current_ino=99))
    put_progress(fsals[1], "transcode", transcode_progress())
    m = api.wait_for(lambda x: (p := parse_prometheus(x.get("/metrics"))).get(
        "pando_transcode_files_total") and len(p["pando_transcode_files_total"]) == 2 and p,
        timeout=5, what="transcode metrics")
    for name, a, b in (("pando_transcode_files_total", 4, 0),
                       ("pando_transcode_bytes_total", 1 << 22, 0),
                       ("pando_transcode_failed_total", 1, 0)):
        assert sorted(m[name], key=lambda s: s[0]["mds"]) == [
            ({"mds": "mds-a"}, float(a)), ({"mds": "mds-b"}, float(b))], name
    text = api.get("/metrics")
    for name in ("pando_transcode_files_total", "pando_transcode_bytes_total",
                 "pando_transcode_failed_total"):
        assert f"# TYPE {name} counter" in text
