"""Manager groups as the mgr reads them (groups.py): the active and
members from etcd's keys, a malformed value left out, health when a
group has no active or no standby, each standby's lag, and what a
handover asks.  Pure."""
from __future__ import annotations

import json
from typing import Any

import pytest

from pando_mgr import groups, health
from pando_mgr.etcd import KV
from pando_mgr.manager import parse_snapshot
from pando_mgr.osdmap import MapError

PREFIX = "/pando/"
NOW = 1796100000


def _kv(rel: str, val: Any, rev: int = 5) -> KV:
    raw = val if isinstance(val, bytes) else json.dumps(val).encode()
    return KV(PREFIX + rel, raw, rev, rev, 0)


def _member(role: str, seq: int, term: int = 41) -> dict[str, Any]:
    return {"name": "x", "role": role, "seq": seq, "term": term}


def test_the_active_its_term_and_the_members_are_read_with_each_standbys_lag() -> None:
    s = parse_snapshot([_kv("groups/g1/active", {"name": "a"}, rev=41),
                        _kv("groups/g1/members/a", _member("active", 900)),
                        _kv("groups/g1/members/b", _member("standby", 880)),
                        _kv("groups/g1/members/c", _member("standby", 950)),
                        _kv("journal/g1/0000000000000001", {"index": 1}),
                        _kv("groups/g1/other", {"x": 1})], PREFIX, 9)
    assert not s.malformed
    g = s.groups["g1"]
    assert (g.active, g.term, sorted(g.members)) == ("a", 41, ["a", "b", "c"])
    assert groups.view(s.groups, NOW) == [{
        "name": "g1", "active": "a", "term": 41, "since": None, "standbys": 2, "members": [
            {"name": "a", "role": "active", "seq": 900, "lag": None},
            {"name": "b", "role": "standby", "seq": 880, "lag": 20},
            {"name": "c", "role": "standby", "seq": 950, "lag": 0}], "down": []}]


def test_a_malformed_group_value_is_left_out_and_listed() -> None:
    s = parse_snapshot([_kv("groups/g1/active", b"a"),
                        _kv("groups/g1/members/b", _member("leader", 3)),
                        _kv("groups/g1/members/c", {"role": "standby", "seq": -1})], PREFIX, 9)
    assert sorted((k, key) for k, key, _ in s.malformed) == [
        ("group_active", PREFIX + "groups/g1/active"),
        ("group_member", PREFIX + "groups/g1/members/b"),
        ("group_member", PREFIX + "groups/g1/members/c")]
    assert not any(g.active or g.members for g in s.groups.values())


def _checks(s: Any) -> dict[str, health.Check]:
    return {c.code: c for c in health.checks(None, {}, {"a": {}}, True, [], groups=s.groups,
                                             now=NOW)}


def _codes(s: Any) -> dict[str, str]:
    return {code: c.severity for code, c in _checks(s).items()}


def test_health_errs_on_a_group_without_an_active_and_warns_without_a_standby() -> None:
    lone = parse_snapshot([_kv("groups/g1/active", {"name": "a"}),
                           _kv("groups/g1/members/a", _member("active", 5))], PREFIX, 9)
    assert _codes(lone)["MDS_GROUP_NO_STANDBY"] == "HEALTH_WARN"
    headless = parse_snapshot([_kv("groups/g1/members/b", _member("standby", 5))], PREFIX, 9)
    assert _codes(headless)["MDS_GROUP_NO_ACTIVE"] == "HEALTH_ERR"
    paired = parse_snapshot([_kv("groups/g1/active", {"name": "a"}),
                             _kv("groups/g1/members/a", _member("active", 5)),
                             _kv("groups/g1/members/b", _member("standby", 5))], PREFIX, 9)
    assert not {"MDS_GROUP_NO_STANDBY", "MDS_GROUP_NO_ACTIVE"} & set(_codes(paired))


def test_a_handover_names_the_active_in_its_term_and_needs_a_standby() -> None:
    s = parse_snapshot([_kv("groups/g1/active", {"name": "a"}, rev=41),
                        _kv("groups/g1/members/a", _member("active", 900)),
                        _kv("groups/g1/members/b", _member("standby", 880)),
                        _kv("groups/g2/active", {"name": "c"}, rev=50),
                        _kv("groups/g2/members/c", _member("active", 10)),
                        _kv("groups/g3/members/d", _member("standby", 10))], PREFIX, 60)
    assert groups.handover(s.groups, "g1") == (
        "groups/g1/handover", {"from": "a", "term": 41, "standbys": ["b"]})
    for name, status, words in (("g2", 409, "no standby to take over from c"),
                                ("g3", 409, "no active"),
                                ("g4", 404, "no manager group g4"),
                                ("g1/active", 400, "not a group name"),
                                ("", 400, "not a group name"),
                                ("x" * 64, 400, "not a group name")):
        with pytest.raises(MapError) as e:
            groups.handover(s.groups, name)
        assert e.value.status == status and words in str(e.value), name


def test_the_actives_takeover_time_is_shown_and_a_standbys_zero_is_none() -> None:
    s = parse_snapshot([_kv("groups/g1/active", {"name": "a"}, rev=41),
                        _kv("groups/g1/members/a", {**_member("active", 9), "since": 1764543662}),
                        _kv("groups/g1/members/b", {**_member("standby", 6), "since": 0}),
                        _kv("groups/g2/members/c", {**_member("standby", 1), "since": 0}),
                        _kv("groups/g3/members/d", {**_member("active", 1), "since": -5})],
                       PREFIX, 60)
    assert [(g["name"], g["since"]) for g in groups.view(s.groups, NOW)] == [
        ("g1", 1764543662), ("g2", None)]
    assert [(kind, key) for kind, key, _ in s.malformed] == [
        ("group_member", PREFIX + "groups/g3/members/d")]


def test_a_member_down_shows_with_the_seq_its_store_holds_for_an_hour() -> None:
    """Its key went with its lease; its held record stays, and the active
    keeps the journal for it (ganesha-fsal/mds/held.h)."""
    s = parse_snapshot([_kv("groups/g1/active", {"name": "b"}, rev=41),
                        _kv("groups/g1/members/b", _member("active", 900)),
                        _kv("groups/g1/held/a", {"seq": 409, "at": NOW - 60}),
                        _kv("groups/g1/held/b", {"seq": 890, "at": NOW}),
                        _kv("groups/g1/held/old", {"seq": 5, "at": NOW - 3601}),
                        _kv("groups/g1/held/bad", {"seq": 0, "at": NOW})], PREFIX, 60)
    assert [(kind, key) for kind, key, _ in s.malformed] == [
        ("group_held", PREFIX + "groups/g1/held/bad")]
    assert groups.view(s.groups, NOW)[0]["down"] == [{"name": "a", "seq": 409, "at": NOW - 60}]
    down = _checks(s)["MDS_GROUP_MEMBER_DOWN"]
    assert down.severity == "HEALTH_WARN"
    assert down.detail == ["group g1: a down since 2026-12-01 04:39:00 UTC, its store at seq 409"]
