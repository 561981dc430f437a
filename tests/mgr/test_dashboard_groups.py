"""The dashboard's manager groups in headless Chromium against a real mgr
on etcd, the groups' keys put by hand as their managers put them: each
group's active and term, its standbys' lag, its members down, its
snapshot and journal, red without an active, amber without a standby or
with a snapshot the journal no longer follows.  Screenshots are kept in
build/test-logs/<test>/."""
from __future__ import annotations

import json
import time
from typing import Any

from dashboard_page import Dashboard
from mgrtest import PREFIX


def _member(name: str, role: str, seq: int) -> str:
    return json.dumps({"name": name, "role": role, "seq": seq, "term": 41})


def test_the_groups_show_their_active_term_and_standbys_lag(dashboard: Dashboard) -> None:
    etcd: Any = dashboard.fsals[0].client
    page = dashboard.look("groups-none.png")
    assert page.text["groups"].strip() == ""
    etcd.put(PREFIX + "groups/g1/members/a", _member("a", "active", 9))
    etcd.put(PREFIX + "groups/g1/members/b", _member("b", "standby", 6))
    etcd.put(PREFIX + "groups/g1/active", json.dumps({"name": "a"}))
    etcd.put(PREFIX + "groups/g1/held/e", json.dumps({"seq": 4, "at": int(time.time())}))
    etcd.put(PREFIX + "groups/g1/snapshot", json.dumps(
        {"index": 2, "seq": 5, "bytes": 4096, "at": int(time.time()), "map": "0a1b"}))
    etcd.put(PREFIX + "journal/g1/0000000000000003", json.dumps(
        {"index": 3, "term": 41, "first_seq": 6, "map": "0a1b"}))
    etcd.put(PREFIX + "groups/g2/active", json.dumps({"name": "c"}))
    etcd.put(PREFIX + "groups/g3/members/d", _member("d", "standby", 1))
    dashboard.api.wait_for(lambda a: len(a.status().get("groups", [])) == 3, timeout=10,
                           what="three groups seen")
    term = next(g["term"] for g in dashboard.api.status()["groups"] if g["name"] == "g1")
    page = dashboard.look("groups.png")
    assert page.text["group-g1"] == (
        f"group g1: a (active, term {term}), standbys: b (lag 3), down: e (at seq 4),"
        " snapshot at seq 5, journal from seq 6")
    assert page.attrs["group-g1"]["class"] == ""
    assert page.text["group-g2"].endswith(", no standby, no snapshot")
    assert page.attrs["group-g2"]["class"] == "warn"
    assert page.text["group-g3"] == "group g3: no active, standbys: d (lag unknown), no snapshot"
    assert page.attrs["group-g3"]["class"] == "err"
    etcd.put(PREFIX + "journal/g1/0000000000000003", json.dumps(
        {"index": 3, "term": 41, "first_seq": 7, "map": "0a1b"}))
    dashboard.api.wait_for(lambda a: any(g["journal"]["first_seq"] == 7
                                         for g in a.status()["groups"]), timeout=10,
                           what="the journal past the snapshot")
    page = dashboard.look("groups-behind.png")
    assert page.text["group-g1"].endswith(", snapshot at seq 5, journal from seq 7")
    assert page.attrs["group-g1"]["class"] == "warn"
