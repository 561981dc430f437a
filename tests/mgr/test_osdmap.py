"""The cluster map's state machine as pure functions (pando_mgr.osdmap,
pando_mgr.health): every transition, the seed, admin changes, refusals."""
from __future__ import annotations

from typing import Any

import pytest
from pando_mgr import health, osdmap
from pando_mgr.osdmap import ClusterMap, MapError, Osd, Presence, Settings

S = Settings(name="mgr-t", down_out_interval=600)
SEED = """# a test cluster
key_file = cluster.key
partition = 7
osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491
osd 2 ctl=127.0.0.1:20592 nfs=127.0.0.1:20492 advertise=10.0.2.2:20492 capacity=5000
"""


def pres(osd_id: int, rev: int = 10, objects: int = 0, total: int = 1000,
         free: int = 600, **kw: Any) -> Presence:
    v = {"id": osd_id, "ctl": f"127.0.0.1:{20590 + osd_id}",
         "nfs": f"127.0.0.1:{20490 + osd_id}",
         "statfs": {"bytes_total": total, "bytes_free": free, "objects": objects}, **kw}
    return Presence(osd_id, v, rev)


def seeded() -> ClusterMap:
    return osdmap.parse_seed(SEED, 100.0, "mgr-t")


def up_map() -> ClusterMap:
    m = osdmap.step(seeded(), {1: pres(1), 2: pres(2, advertise="10.0.2.2:20492")}, 101, S)
    assert m is not None
    return m


def test_seed_gives_epoch_1_with_every_osd_down_and_in() -> None:
    m = seeded()
    assert (m.epoch, m.partition, m.updated_by) == (1, 7, "mgr-t")
    assert [(o.id, o.up, o.in_, o.down_at) for o in m.osds] == [(1, False, True, 0),
                                                                  (2, False, True, 0)]
    assert m.osds[1].advertise == "10.0.2.2:20492" and m.osds[1].weight == 5000
    assert m.osds[0].advertise == "127.0.0.1:20491" and m.osds[0].weight_auto
    assert m.pools == osdmap.DEFAULT_POOLS


def test_the_seed_has_the_osds_present_already_up_in_its_first_epoch() -> None:
    """A manager that takes epoch 1 must not find every OSD down when they
    were all present: it would have nowhere to place a file (NOSPC), as
    one just after `pando-cluster up` did."""
    m = osdmap.seed_map(SEED, {1: pres(1)}, 100.0, S)
    assert (m.epoch, m.partition, m.updated_by) == (1, 7, "mgr-t")
    assert [(o.id, o.up, o.in_) for o in m.osds] == [(1, True, True), (2, False, True)]
    assert m.osds[0].weight == 1000
    assert m.reason.startswith("seeded from cluster.conf; osd.1 up")
    assert osdmap.seed_map(SEED, {}, 100.0, S).osds == seeded().osds


@pytest.mark.parametrize("bad", ["osd x ctl=a:1 nfs=b:2", "osd 1 nfs=b:2",
                                 "osd 1 ctl=a:1 nfs=b:2 colour=red", "frobnicate = 3",
                                 "osd 1 ctl=a nfs=b:2"])
def test_a_malformed_seed_is_refused_with_its_line(bad: str) -> None:
    with pytest.raises(ValueError, match="line 2"):
        osdmap.parse_seed("partition = 1\n" + bad + "\n", 0, "x")


def test_presence_brings_a_seeded_osd_up_and_takes_its_capacity() -> None:
    m = up_map()
    assert m.epoch == 2 and all(o.up for o in m.osds)
    assert m.osds[0].weight == 1000          # weight_auto: from statfs
    assert m.osds[1].weight == 5000          # configured capacity stays
    assert "osd.1 up" in m.reason and m.updated_at == 101


def test_nothing_observed_changes_nothing_and_keeps_the_epoch() -> None:
    m = up_map()
    assert osdmap.step(m, {1: pres(1), 2: pres(2, advertise="10.0.2.2:20492")}, 200, S) is None


def test_lost_presence_marks_down_with_the_time() -> None:
    m = osdmap.step(up_map(), {2: pres(2, advertise="10.0.2.2:20492")}, 150, S)
    assert m is not None and m.epoch == 3
    o = m.osd(1)
    assert o is not None and (o.up, o.in_, o.down_at) == (False, True, 150)
    assert m.reason == "osd.1 down: presence lease expired"


def test_down_longer_than_the_interval_goes_out_not_before() -> None:
    down = osdmap.step(up_map(), {}, 150, S)
    assert down is not None
    assert osdmap.step(down, {}, 150 + 599, S) is None
    out = osdmap.step(down, {}, 150 + 600, S)
    assert out is not None and out.epoch == down.epoch + 1
    o = out.osd(1)
    assert o is not None and (o.up, o.in_, o.out_at) == (False, False, 750)
    assert "osd.1 out: down for 600s" in out.reason


def test_a_down_osd_that_comes_back_is_up_again_and_stays_out_if_out() -> None:
    down = osdmap.step(up_map(), {}, 150, S)
    assert down is not None
    back = osdmap.step(down, {1: pres(1), 2: pres(2, advertise="10.0.2.2:20492")}, 160, S)
    assert back is not None
    assert [(o.up, o.in_, o.down_at) for o in back.osds] == [(True, True, 0), (True, True, 0)]
    out = osdmap.step(down, {}, 800, S)
    assert out is not None
    again = osdmap.step(out, {1: pres(1)}, 900, S)
    assert again is not None
    o = again.osd(1)
    assert o is not None and (o.up, o.in_) == (True, False)


def test_unknown_presence_adds_an_osd_up_and_in_weighted_by_its_capacity() -> None:
    m = osdmap.step(up_map(), {1: pres(1), 2: pres(2, advertise="10.0.2.2:20492"),
                               5: pres(5, total=777, domain="rack2")}, 300, S)
    assert m is not None and [o.id for o in m.osds] == [1, 2, 5]
    o = m.osd(5)
    assert o is not None
    assert (o.up, o.in_, o.weight, o.domain, o.nfs) == (True, True, 777, "rack2",
                                                         "127.0.0.1:20495")
    assert "osd.5 added" in m.reason


def test_a_new_address_in_presence_updates_the_map() -> None:
    m = osdmap.step(up_map(), {1: pres(1, nfs="127.0.0.1:30000"),
                               2: pres(2, advertise="10.0.2.2:20492")}, 300, S)
    assert m is not None
    o = m.osd(1)
    assert o is not None and (o.nfs, o.advertise) == ("127.0.0.1:30000", "127.0.0.1:30000")


def test_admin_out_and_in() -> None:
    m = up_map()
    out = osdmap.mark_out(m, 2, 400, "admin")
    assert out is not None and out.epoch == m.epoch + 1 and out.updated_by == "admin"
    assert osdmap.mark_out(out, 2, 401, "admin") is None          # already out
    back = osdmap.mark_in(out, 2, 402, "admin")
    assert back is not None
    o = back.osd(2)
    assert o is not None and (o.in_, o.out_at) == (True, 0)
    with pytest.raises(MapError) as e:
        osdmap.mark_out(m, 9, 0, "admin")
    assert e.value.status == 404


def test_admin_add_validates_and_picks_the_next_id() -> None:
    m, o = osdmap.add_osd(up_map(), {"ctl": "h:1", "nfs": "h:2", "domain": "r1"}, 5, "a")
    assert (o.id, o.up, o.in_, o.advertise, o.weight_auto) == (3, False, True, "h:2", True)
    assert m.osd(3) is not None
    for bad, status in (({"ctl": "h:1"}, 400), ({"ctl": "h", "nfs": "h:2"}, 400),
                        ({"ctl": "h:1", "nfs": "h:2", "weight": -1}, 400),
                        ({"ctl": "h:1", "nfs": "h:2", "id": "x"}, 400),
                        ({"ctl": "h:1", "nfs": "h:2", "bogus": 1}, 400),
                        ({"ctl": "h:1", "nfs": "h:2", "id": 1}, 409), ([], 400)):
        with pytest.raises(MapError) as e:
            osdmap.add_osd(up_map(), bad, 5, "a")
        assert e.value.status == status, bad


def test_remove_is_refused_while_in_or_holding_objects_and_force_skips_objects() -> None:
    m = up_map()
    for presence, force, why in ((pres(1), False, "is in"),):
        with pytest.raises(MapError, match=why) as e:
            osdmap.remove_osd(m, 1, presence, force, 0, "a", 50)
        assert e.value.status == 409
    out = osdmap.mark_out(m, 1, 1, "a")
    assert out is not None
    with pytest.raises(MapError, match="holds 4 objects"):
        osdmap.remove_osd(out, 1, pres(1, objects=4), False, 2, "a", 50)
    with pytest.raises(MapError, match="unknown"):
        osdmap.remove_osd(out, 1, None, False, 2, "a", 50)
    gone = osdmap.remove_osd(out, 1, pres(1, objects=4), True, 2, "a", 50)
    assert gone.osd(1) is None and gone.removed == {1: 50}


def test_a_removed_osd_comes_back_only_with_a_new_presence_key() -> None:
    out = osdmap.mark_out(up_map(), 1, 1, "a")
    assert out is not None
    gone = osdmap.remove_osd(out, 1, pres(1, rev=10), False, 2, "a", 50)
    assert osdmap.step(gone, {1: pres(1, rev=10), 2: pres(2, advertise="10.0.2.2:20492")},
                       3, S) is None
    again = osdmap.step(gone, {1: pres(1, rev=60), 2: pres(2, advertise="10.0.2.2:20492")},
                        3, S)
    assert again is not None and again.osd(1) is not None and again.removed == {}


def test_the_map_survives_json_with_fields_it_does_not_know() -> None:
    m = up_map()
    j = m.to_json()
    j["future"] = {"x": 1}
    j["osds"][0]["future"] = 2
    back = ClusterMap.from_json(j)
    assert back.to_json() == j
    assert [o["id"] for o in j["osds"]] == [1, 2]
    assert isinstance(Osd.from_json(j["osds"][1]), Osd)


def test_health_names_down_out_full_and_missing_managers() -> None:
    m = osdmap.step(up_map(), {2: pres(2, free=10)}, 150, S)
    assert m is not None
    m = osdmap.mark_out(m, 1, 151, "a")
    assert m is not None
    cs = health.checks(m, {2: pres(2, free=10)}, {}, True, [{"name": "e1", "healthy": False}])
    codes = {c.code: c.severity for c in cs}
    assert codes == {"OSD_DOWN": "HEALTH_WARN", "OSD_OUT": "HEALTH_WARN",
                     "OSD_FULL": "HEALTH_ERR", "MDS_DOWN": "HEALTH_ERR",
                     "ETCD_QUORUM": "HEALTH_WARN"}
    assert health.overall(cs) == "HEALTH_ERR"
    ok = health.checks(up_map(), {1: pres(1), 2: pres(2)}, {"m": {"degraded": 0}}, True, [])
    assert ok == [] and health.overall(ok) == "HEALTH_OK"
    warn = health.checks(up_map(), {1: pres(1, free=100)}, {"m": {"degraded": 3}}, False, [])
    assert {c.code for c in warn} == {"OSD_NEARFULL", "FILES_DEGRADED", "ETCD_QUORUM"}


@pytest.mark.parametrize("name", ["a", "0", "fast", "ssd-1", "tier_2", "9lives", "a" * 31])
def test_a_pool_name_is_1_to_31_of_lowercase_digits_dash_and_underscore(name: str) -> None:
    assert osdmap.pool_name_ok(name)


@pytest.mark.parametrize("name", ["", "-fast", "_fast", "Fast", "fast!", "fa st", "fäst",
                                  "a" * 32, "fast\n", "default", None, 3, ["fast"]])
def test_anything_else_is_no_pool_name(name: Any) -> None:
    assert not osdmap.pool_name_ok(name)


def test_an_osd_that_announces_a_pool_is_added_in_it() -> None:
    m = osdmap.step(up_map(), {5: pres(5, pool="fast")}, 300, S)
    assert m is not None
    o = m.osd(5)
    assert o is not None and o.pool == "fast"
    assert "osd.5 added: presence seen at 127.0.0.1:20495 in pool fast" in m.reason
    assert m.to_json()["osds"][2]["pool"] == "fast"


@pytest.mark.parametrize("bad", ["Fast", "-x", "a" * 32, 7])
def test_a_new_osds_pool_that_is_no_name_is_ignored_and_the_reason_says_so(bad: Any) -> None:
    m = osdmap.step(up_map(), {5: pres(5, pool=bad)}, 300, S)
    assert m is not None
    o = m.osd(5)
    assert o is not None and o.pool == "" and o.up
    assert f"osd.5 added: presence seen at 127.0.0.1:20495, pool name {str(bad)!r} " \
           "ignored as invalid" in m.reason


def test_the_map_follows_a_pool_the_presence_changes() -> None:
    joined = osdmap.step(up_map(), {1: pres(1, pool="fast"),
                                    2: pres(2, advertise="10.0.2.2:20492")}, 300, S)
    assert joined is not None and joined.reason == 'osd.1 pool fast (was "")'
    moved = osdmap.step(joined, {1: pres(1, pool="slow"),
                                 2: pres(2, advertise="10.0.2.2:20492")}, 301, S)
    assert moved is not None and moved.reason == "osd.1 pool slow (was fast)"
    left = osdmap.step(moved, {1: pres(1, pool=""),
                               2: pres(2, advertise="10.0.2.2:20492")}, 302, S)
    assert left is not None and left.reason == 'osd.1 pool "" (was slow)'
    assert [o.pool for o in left.osds] == ["", ""] and left.epoch == joined.epoch + 2


def test_a_presence_without_a_pool_or_with_no_pool_name_leaves_the_maps_pool() -> None:
    m, _ = osdmap.add_osd(up_map(), {"id": 5, "ctl": "127.0.0.1:20595",
                                     "nfs": "127.0.0.1:20495", "pool": "fast"}, 300, "a")
    others = {1: pres(1), 2: pres(2, advertise="10.0.2.2:20492")}
    up = osdmap.step(m, {**others, 5: pres(5)}, 301, S)
    assert up is not None and "pool" not in up.reason
    assert osdmap.step(up, {**others, 5: pres(5, pool="Fast!")}, 302, S) is None
    o = up.osd(5)
    assert o is not None and o.pool == "fast"


def test_admin_add_takes_a_pool_and_refuses_one_that_is_no_name() -> None:
    m, o = osdmap.add_osd(up_map(), {"ctl": "h:1", "nfs": "h:2", "pool": "fast"}, 5, "a")
    assert o.pool == "fast" and m.reason == "osd.3 added by command in pool fast"
    _, none = osdmap.add_osd(up_map(), {"ctl": "h:1", "nfs": "h:2", "pool": ""}, 5, "a")
    assert none.pool == ""
    for bad in ("Fast", "-fast", "a" * 32, 3, None, ["fast"]):
        with pytest.raises(MapError, match="pool must be a pool name") as e:
            osdmap.add_osd(up_map(), {"ctl": "h:1", "nfs": "h:2", "pool": bad}, 5, "a")
        assert e.value.status == 400, bad


def test_the_seed_takes_a_pool_per_osd_and_refuses_one_that_is_no_name() -> None:
    m = osdmap.parse_seed("osd 1 ctl=h:1 nfs=h:2 pool=fast\nosd 2 ctl=h:3 nfs=h:4\n", 0, "x")
    assert [o.pool for o in m.osds] == ["fast", ""]
    for bad in ("pool=Fast", "pool=", "pool=-x"):
        with pytest.raises(ValueError, match="line 1: pool .* is not a pool name"):
            osdmap.parse_seed(f"osd 1 ctl=h:1 nfs=h:2 {bad}\n", 0, "x")


def test_every_osd_of_the_map_json_carries_its_pool_and_an_old_map_reads_as_none() -> None:
    j = up_map().to_json()
    assert [o["pool"] for o in j["osds"]] == ["", ""]
    for o in j["osds"]:
        del o["pool"]
    back = ClusterMap.from_json(j)
    assert [o.pool for o in back.osds] == ["", ""]
    assert "pool" not in back.osds[0].extra
