"""Typed parsing of what the mgr reads from etcd (values.py): a malformed
value is left out, listed, counted per kind of key and logged at most once
a minute per kind; everything else is read as before.  Pure."""
from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from mgrtest import mds_value, osd_value, quota, rebuild_progress
from pando_mgr import health, osdmap, values
from pando_mgr.etcd import KV
from pando_mgr.manager import parse_snapshot

PREFIX = "/pando/"
MAP: dict[str, Any] = {"epoch": 3, "partition": 1, "pools": [], "osds": [
    {"id": i, "ctl": f"127.0.0.1:{20590 + i}", "nfs": f"127.0.0.1:{20490 + i}",
     "up": True, "in": True} for i in (1, 2)]}


def _kv(rel: str, val: Any, rev: int = 5) -> KV:
    raw = val if isinstance(val, bytes) else json.dumps(val).encode()
    return KV(PREFIX + rel, raw, rev, rev, 0)


def _snap(*kvs: KV) -> Any:
    return parse_snapshot(list(kvs), PREFIX, 9)


@pytest.mark.parametrize("kind,rel,val", [
    ("osd", "osd/1", osd_value(1, statfs={"bytes_total": "x", "bytes_free": 0})),
    ("osd", "osd/1", osd_value(1, counters={"nfs_read_bytes": -1})),
    ("osd", "osd/1", osd_value(1, ctl="no port")),
    ("osd", "osd/1", osd_value(1, time=float("nan"))),
    ("osd", "osd/1", osd_value(2)),                            # another OSD's id
    ("osd", "osd/1", osd_value(1, pool="Fast")),
    ("osd", "osd/1", osd_value(1, pool="-fast")),
    ("osd", "osd/1", osd_value(1, pool="a" * 32)),
    ("osd", "osd/1", osd_value(1, pool=7)),
    ("osd", "osd/1", osd_value(1, pool=None)),
    ("osd", "osd/1", [1, 2]),
    ("osd", "osd/1", b"{not json"),
    ("mds", "mds/a", mds_value("a") | {"degraded": "many"}),
    ("mds", "mds/a", mds_value("a") | {"op_bounds": ["x"]}),
    ("mds", "mds/a", mds_value("a") | {"ops": {"lookup": {"buckets": [1.5]}}}),
    ("mds", "mds/a", mds_value("a") | {"quota": quota(bytes="x")}),
    ("mds", "mds/a", mds_value("a") | {"quota": quota(used_files=-1)}),
    ("mds", "mds/a", mds_value("a") | {"quota": quota(files=2**64)}),
    ("mds", "mds/a", mds_value("a") | {"quota": quota(used_bytes=1.5)}),
    ("mds", "mds/a", mds_value("a") | {"quota": quota(bytes=True)}),
    ("mds", "mds/a", mds_value("a") | {"quota": {"bytes": 10, "files": 0, "used_bytes": 1}}),
    ("mds", "mds/a", mds_value("a") | {"quota": [10, 0, 1, 1]}),
    ("mds", "mds/a", mds_value("a") | {"quota": None}),
    ("leader", "mgr/leader", {"name": "mgr-a", "url": "http://evil.example/path"}),
    ("leader", "mgr/leader", {"name": "mgr-a", "url": "http://user@h:1"}),
    ("leader", "mgr/leader", {"name": "mgr-a", "url": "http://h"}),
    ("leader", "mgr/leader", {"name": "mgr-a"}),
    ("member", "mgr/members/b", {"name": "mgr-b", "url": "javascript:alert(1)"}),
    ("job", "rebuild/jobs/4", {"osd": "2", "reason": "out"}),
    ("job", "rebuild/jobs/4", {"osd": 2, "reason": "because"}),
    ("job", "rebuild/jobs/x", {"osd": 2, "reason": "out"}),
    ("progress", "rebuild/progress/a", rebuild_progress(jobs_done=["4"])),
    ("progress", "scrub/progress/a", {"state": 3}),
    ("progress", "transcode/progress/a", {"files_done": "x"}),
    ("scrub_request", "scrub/request", {"id": 2, "action": "explode"}),
])
def test_a_malformed_value_is_left_out_and_listed_with_its_kind(kind: str, rel: str,
                                                               val: Any) -> None:
    s = _snap(_kv("map", MAP), _kv(rel, val), _kv("osd/2", osd_value(2)))
    assert [(k, key) for k, key, _ in s.malformed] == [(kind, PREFIX + rel)]
    assert 2 in s.presence and s.cmap is not None and s.cmap.epoch == 3
    assert 1 not in s.presence and not s.mds and s.leader is None and not s.mgrs
    assert not s.jobs and not s.rebuild and not s.scrub and not s.transcode
    assert s.scrub_request is None


def test_well_formed_values_are_read_as_the_readme_gives_them() -> None:
    s = _snap(_kv("map", MAP), _kv("osd/1", osd_value(1)), _kv("mds/a", mds_value("a")),
              _kv("mgr/leader", {"name": "mgr-a", "url": "http://[::1]:7480", "since": 1.5}),
              _kv("mgr/members/mgr-a", {"name": "mgr-a", "url": "https://h1:7480/"}),
              _kv("rebuild/jobs/4", {"osd": 2, "reason": "out", "target": None}),
              _kv("rebuild/progress/a", rebuild_progress(jobs_done=[4])),
              _kv("scrub/request", {"id": 2, "action": "start", "time": 1.0}),
              _kv("something/else", b"not json at all"))
    assert s.malformed == []
    assert s.presence[1].statfs("bytes_total") == 10**9 and s.mds["a"]["clients"] == 2
    assert s.leader == {"name": "mgr-a", "url": "http://[::1]:7480", "since": 1.5}
    assert s.jobs[4].osd == 2 and s.rebuild["a"]["jobs_done"] == [4]
    assert s.scrub_request == {"id": 2, "action": "start", "time": 1.0}


def test_an_mds_quota_is_read_whole_and_a_manager_without_one_is_read_as_before() -> None:
    """Older managers send no quota; a member the mgr does not know is
    kept unchecked, as in every value."""
    s = _snap(_kv("mds/a", mds_value("a") | {"quota": quota(bytes=2**63, used_files=7)}),
              _kv("mds/b", mds_value("b")),
              _kv("mds/c", mds_value("c") | {"quota": quota() | {"used_dirs": "x"}}))
    assert s.malformed == []
    assert s.mds["a"]["quota"] == {"bytes": 2**63, "files": 0, "used_bytes": 0, "used_files": 7}
    assert "quota" not in s.mds["b"] and s.mds["c"]["quota"]["used_dirs"] == "x"


def test_a_malformed_map_is_known_to_exist_so_it_is_never_seeded_over() -> None:
    s = _snap(_kv("map", {**MAP, "osds": [{"id": 1, "up": "yes"}]}))
    assert s.cmap is None and s.map_kv is not None
    assert [k for k, _, _ in s.malformed] == ["map"]
    cs = health.checks(s.cmap, s.presence, s.mds, True, [], {}, s.malformed)
    assert [(c.code, c.severity) for c in cs if c.code.startswith("ETCD_MAL")] == [
        ("ETCD_MALFORMED", "HEALTH_ERR")]
    assert "MAP_MISSING" not in [c.code for c in cs]


def test_a_pool_name_or_none_is_read_from_presence_and_the_map() -> None:
    osds = [{**MAP["osds"][0], "pool": "fast"}, {**MAP["osds"][1], "pool": ""}]
    s = _snap(_kv("map", {**MAP, "osds": osds}), _kv("osd/1", osd_value(1, pool="ssd_2")),
              _kv("osd/2", osd_value(2, pool="")))
    assert s.malformed == [] and s.cmap is not None
    assert [o.pool for o in s.cmap.osds] == ["fast", ""]
    assert s.presence[1].value["pool"] == "ssd_2" and s.presence[2].value["pool"] == ""


@pytest.mark.parametrize("pool", ["Fast", "_x", "a" * 32, "fast\n", 7, None])
def test_a_map_with_an_osd_pool_that_is_no_pool_name_is_malformed(pool: Any) -> None:
    """The C parser refuses such a map whole; so does the mgr, and writes
    nothing over it."""
    s = _snap(_kv("map", {**MAP, "osds": [{**MAP["osds"][0], "pool": pool}]}))
    assert s.cmap is None and s.map_kv is not None
    assert [k for k, _, _ in s.malformed] == ["map"]


def test_an_osd_whose_presence_is_malformed_is_marked_down_as_if_absent() -> None:
    s = _snap(_kv("map", MAP), _kv("osd/1", osd_value(1, statfs={"bytes_total": "x"})),
              _kv("osd/2", osd_value(2)))
    m = osdmap.step(s.cmap, s.presence, 100.0, osdmap.Settings(name="mgr-a"))
    assert m is not None
    assert [(o.id, o.up) for o in m.osds] == [(1, False), (2, True)]
    assert m.reason == "osd.1 down: presence lease expired"


def test_skipped_values_are_counted_every_time_and_logged_once_a_minute_per_kind(
        caplog: pytest.LogCaptureFixture) -> None:
    sk = values.Skipped()
    with caplog.at_level(logging.WARNING, logger="pando_mgr.values"):
        for t in (0.0, 0.25, 30.0):
            sk.record("osd", "/pando/osd/1", "statfs is 'x'", now=t)
        sk.record("mds", "/pando/mds/a", "not JSON", now=30.0)
        sk.record("osd", "/pando/osd/1", "statfs is 'x'", now=60.0)
    assert sk.counts["osd"] == 4 and sk.counts["mds"] == 1 and sk.counts["map"] == 0
    assert set(sk.counts) == set(values.KINDS)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0].startswith("skipping /pando/osd/1: statfs is 'x'")


def test_the_health_detail_of_malformed_values_is_bounded() -> None:
    bad = [("osd", f"/pando/osd/{i}", "not JSON") for i in range(50)]
    (c,) = health.checks(None, {}, {"a": {}}, True, [], {}, bad)[:1]
    assert (c.code, c.severity, c.summary) == ("ETCD_MALFORMED", "HEALTH_WARN",
                                               "50 malformed values in etcd skipped")
    assert len(c.detail) == 11 and c.detail[-1] == "... and 40 more"


@pytest.mark.parametrize("url,ok", [
    ("http://127.0.0.1:7480", True), ("https://h1.example:7480/", True),
    ("http://[::1]:7480", True), ("http://h1:7480/x", False), ("http://h1", False),
    ("http://h1:0", False), ("http://h1:7480?x", False), ("http://a@h1:7480", False),
    ("ftp://h1:21", False), ("http://h 1:7480", False), ("http://h1:7480\r\nX: y", False),
    (7480, False),
])
def test_a_mgr_url_is_an_http_origin_and_nothing_more(url: Any, ok: bool) -> None:
    assert values.mgr_url(url) is ok
