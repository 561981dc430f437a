"""Manager groups as the mgr reads them (groups.py): the active and
members from etcd's keys, a malformed value left out, health when a
group has no active or no standby, each standby's lag, its snapshot and
journal with health when the group could not start again from them, and
what a handover asks.  Pure."""
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


MAP_HEX = "0a1b2c"


def _segment(index: int, first_seq: int) -> KV:
    return _kv(f"journal/g1/{index:016x}",
               {"index": index, "term": 41, "first_seq": first_seq, "map": MAP_HEX})


def _snapshot(seq: int, at: int = NOW - 60) -> KV:
    return _kv("groups/g1/snapshot",
               {"index": 3, "seq": seq, "bytes": 4096, "at": at, "map": MAP_HEX})


def test_the_active_its_term_and_the_members_are_read_with_each_standbys_lag() -> None:
    s = parse_snapshot([_kv("groups/g1/active", {"name": "a"}, rev=41),
                        _kv("groups/g1/members/a", _member("active", 900)),
                        _kv("groups/g1/members/b", _member("standby", 880)),
                        _kv("groups/g1/members/c", _member("standby", 950)),
                        _kv("groups/g1/other", {"x": 1})], PREFIX, 9)
    assert not s.malformed
    g = s.groups["g1"]
    assert (g.active, g.term, sorted(g.members)) == ("a", 41, ["a", "b", "c"])
    assert groups.view(s.groups, NOW) == [{
        "name": "g1", "active": "a", "term": 41, "since": None, "standbys": 2, "members": [
            {"name": "a", "role": "active", "seq": 900, "lag": None},
            {"name": "b", "role": "standby", "seq": 880, "lag": 20},
            {"name": "c", "role": "standby", "seq": 950, "lag": 0}], "down": [],
        "snapshot": None, "journal": {"segments": 0, "first_seq": None}}]


def test_the_snapshot_and_the_journals_first_record_are_read() -> None:
    s = parse_snapshot([_kv("groups/g1/active", {"name": "a"}, rev=41),
                        _kv("groups/g1/members/a", _member("active", 900)),
                        _snapshot(700), _segment(4, 650), _segment(5, 800)], PREFIX, 9)
    assert not s.malformed
    view = groups.view(s.groups, NOW)[0]
    assert view["snapshot"] == {"index": 3, "seq": 700, "bytes": 4096, "at": NOW - 60}
    assert view["journal"] == {"segments": 2, "first_seq": 650}
    assert s.groups["g1"].snapshot_followed()


def test_a_malformed_snapshot_or_segment_is_left_out_and_listed() -> None:
    good = {"index": 3, "seq": 7, "bytes": 1, "at": NOW, "map": MAP_HEX}
    seg = {"index": 4, "term": 1, "first_seq": 1, "map": MAP_HEX}
    s = parse_snapshot([_kv("groups/g1/snapshot", {**good, "map": "0A1B"}),
                        _kv("groups/g2/snapshot", {**good, "index": 0}),
                        _kv("groups/g3/snapshot", {k: v for k, v in good.items() if k != "map"}),
                        _kv("journal/g1/0000000000000005", seg),
                        _kv("journal/g1/0000000000000004", {**seg, "first_seq": -1}),
                        _kv("journal/g1/000000000000000g", seg),
                        _kv("journal/g2/0000000000000004", {**seg, "map": "abc"})], PREFIX, 9)
    assert sorted((k, key) for k, key, _ in s.malformed) == sorted([
        ("group_snapshot", PREFIX + "groups/g1/snapshot"),
        ("group_snapshot", PREFIX + "groups/g2/snapshot"),
        ("group_snapshot", PREFIX + "groups/g3/snapshot"),
        ("journal_segment", PREFIX + "journal/g1/0000000000000005"),
        ("journal_segment", PREFIX + "journal/g1/0000000000000004"),
        ("journal_segment", PREFIX + "journal/g1/000000000000000g"),
        ("journal_segment", PREFIX + "journal/g2/0000000000000004")])
    assert not any(g.snapshot or g.segments for g in s.groups.values())


def test_health_warns_when_every_store_lost_could_not_start_the_group_again() -> None:
    """From no snapshot an hour after the takeover (the active makes one
    every 15 min by default), or from one the journal no longer follows."""
    since = {**_member("active", 900), "since": NOW - 3700}
    base = [_kv("groups/g1/active", {"name": "a"}), _kv("groups/g1/members/a", since),
            _kv("groups/g1/members/b", _member("standby", 900))]
    assert _codes(parse_snapshot(base, PREFIX, 9))["MDS_GROUP_NO_SNAPSHOT"] == "HEALTH_WARN"
    recent = [base[0], _kv("groups/g1/members/a", {**since, "since": NOW - 600}), base[2]]
    assert "MDS_GROUP_NO_SNAPSHOT" not in _codes(parse_snapshot(recent, PREFIX, 9))
    followed = parse_snapshot(base + [_snapshot(700), _segment(4, 701)], PREFIX, 9)
    assert not {"MDS_GROUP_NO_SNAPSHOT", "MDS_GROUP_SNAPSHOT_BEHIND"} & set(_codes(followed))
    behind = _checks(parse_snapshot(base + [_snapshot(700), _segment(4, 702)], PREFIX, 9))
    assert behind["MDS_GROUP_SNAPSHOT_BEHIND"].severity == "HEALTH_WARN"
    assert behind["MDS_GROUP_SNAPSHOT_BEHIND"].detail == [
        "group g1: snapshot 3 holds up to seq 700, the journal starts at seq 702: were every"
        " member's store lost, the group could not start again"]


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
