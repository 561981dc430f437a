"""The dashboard's manager groups in headless Chromium against a real mgr
on etcd, the groups' keys put by hand as their managers put them: each
group's active and term, its standbys' lag and its members down, red
without an active, amber without a standby.  Screenshots are kept in
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
    etcd.put(PREFIX + "groups/g2/active", json.dumps({"name": "c"}))
    etcd.put(PREFIX + "groups/g3/members/d", _member("d", "standby", 1))
    dashboard.api.wait_for(lambda a: len(a.status().get("groups", [])) == 3, timeout=10,
                           what="three groups seen")
    term = next(g["term"] for g in dashboard.api.status()["groups"] if g["name"] == "g1")
    page = dashboard.look("groups.png")
    assert page.text["group-g1"] == \
        f"group g1: a (active, term {term}), standbys: b (lag 3), down: e (at seq 4)"
    assert page.attrs["group-g1"]["class"] == ""
    assert page.text["group-g2"].endswith(", no standby")
    assert page.attrs["group-g2"]["class"] == "warn"
    assert page.text["group-g3"] == "group g3: no active, standbys: d (lag unknown)"
    assert page.attrs["group-g3"]["class"] == "err"
