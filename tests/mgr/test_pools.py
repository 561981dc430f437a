"""Named pools as the mgr sums and judges them (pando_mgr.pools,
pando_mgr.health): each pool's OSDs, those up and in, and its space;
POOL_NO_OSD_UP and POOL_DEGRADED raised and cleared, pure and through a
real mgr's /api/status; the pando_pool_* metrics."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import HandPresence, parse_prometheus, write_seed
from pando_mgr import health
from pando_mgr.osdmap import ClusterMap, Osd, Presence
from pando_mgr.pools import NamedPool, named_pools
from pando_testing.mgr import MgrApi

Factory = Callable[..., Any]


def osd(osd_id: int, pool: str, up: bool = True, in_: bool = True) -> Osd:
    return Osd(id=osd_id, ctl=f"h:{20590 + osd_id}", nfs=f"h:{20490 + osd_id}", weight=1000,
               pool=pool, up=up, in_=in_)


def pres(osd_id: int, total: int, free: int) -> Presence:
    return Presence(osd_id, {"id": osd_id, "statfs": {"bytes_total": total,
                                                      "bytes_free": free, "objects": 0}})


def pool_checks(m: ClusterMap) -> dict[str, health.Check]:
    return {c.code: c for c in health.checks(m, {}, {"mds-a": {}}, True, [])
            if c.code.startswith("POOL_")}


def test_named_pools_sum_their_present_osds_and_count_those_up_and_in() -> None:
    m = ClusterMap(epoch=3, osds=[osd(1, "fast"), osd(2, "fast", up=False),
                                  osd(3, "archive", in_=False), osd(4, ""), osd(5, "fast")])
    presence = {1: pres(1, 1000, 600), 3: pres(3, 500, 100), 4: pres(4, 9000, 9000),
                5: pres(5, 200, 50)}
    assert named_pools(m, presence) == [
        NamedPool("archive", osds=[3], up=[], total=500, free=100),
        NamedPool("fast", osds=[1, 2, 5], up=[1, 5], total=1200, free=650)]
    assert named_pools(None, presence) == []
    assert named_pools(ClusterMap(osds=[osd(1, "")]), presence) == []


def test_health_errs_on_a_pool_with_no_osd_up_and_in_and_names_it_and_its_osds() -> None:
    m = ClusterMap(osds=[osd(1, "fast", up=False), osd(2, "fast", in_=False), osd(3, "")])
    checks = pool_checks(m)
    assert list(checks) == ["POOL_NO_OSD_UP"]
    c = checks["POOL_NO_OSD_UP"]
    assert (c.severity, c.summary) == ("HEALTH_ERR", "1 pools with no osd up and in")
    assert c.detail == ["pool fast: no osd up and in (of osd.1, osd.2): "
                        "its files cannot be placed (ENOSPC)"]


def test_health_warns_on_a_pool_with_one_osd_up_and_in_and_names_it_and_its_osds() -> None:
    m = ClusterMap(osds=[osd(1, "fast"), osd(2, "fast", up=False), osd(3, "fast", in_=False),
                         osd(4, "archive"), osd(5, "archive")])
    checks = pool_checks(m)
    assert list(checks) == ["POOL_DEGRADED"]
    c = checks["POOL_DEGRADED"]
    assert (c.severity, c.summary) == ("HEALTH_WARN", "1 pools with fewer than 2 osds up and in")
    assert c.detail == ["pool fast: only osd.1 up and in (of osd.1, osd.2, osd.3): "
                        "a file on 2 or more osds (a mirror) cannot be placed"]


def test_pool_checks_clear_once_two_osds_of_each_pool_are_up_and_in() -> None:
    m = ClusterMap(osds=[osd(1, "fast", up=False), osd(2, "fast", up=False),
                         osd(3, "slow"), osd(4, "slow", in_=False)])
    assert set(pool_checks(m)) == {"POOL_NO_OSD_UP", "POOL_DEGRADED"}
    m.osds[0].up = True
    assert set(pool_checks(m)) == {"POOL_DEGRADED"}
    m.osds[1].up, m.osds[3].in_ = True, True
    assert pool_checks(m) == {}
    assert health.overall(health.checks(m, {}, {"mds-a": {}}, True, [])) == "HEALTH_OK"


def test_osds_in_no_pool_raise_no_pool_check_whatever_their_state() -> None:
    m = ClusterMap(osds=[osd(1, "", up=False), osd(2, "", in_=False)])
    assert pool_checks(m) == {}


def _pool_cluster(mgr_factory: Factory, presence: Factory,
                  tmp_path: Path) -> tuple[MgrApi, dict[int, HandPresence]]:
    """osd.1-3 in pool fast, osd.4 in archive, osd.5 in none, all up."""
    seed = write_seed(tmp_path / "cluster.conf", [1, 2, 3, 4, 5])
    pres = {1: presence(1, pool="fast", total=4 * 10**9, free=10**9),
            2: presence(2, pool="fast", total=2 * 10**9, free=2 * 10**9),
            3: presence(3, pool="fast"), 4: presence(4, pool="archive"), 5: presence(5)}
    presence(mds="mds-a")
    api = mgr_factory(seed=seed).api()
    api.wait_for(lambda a: [(o["pool"], o["up"]) for o in a.get("/api/osds")] == [
        ("fast", True), ("fast", True), ("fast", True), ("archive", True), ("", True)],
        timeout=15, what="every osd up in its pool")
    return api, pres


def _by_pool(metrics: dict[str, list[tuple[dict[str, str], float]]],
             name: str) -> dict[str, float]:
    samples = metrics.get(name, [])
    assert all(set(labels) == {"pool"} for labels, _ in samples), samples
    return {labels["pool"]: v for labels, v in samples}


def test_metrics_give_each_pools_osds_those_up_and_in_and_its_space(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    api, pres = _pool_cluster(mgr_factory, presence, tmp_path)
    m = parse_prometheus(api.get("/metrics"))
    assert _by_pool(m, "pando_pool_osds") == {"archive": 1, "fast": 3}
    assert _by_pool(m, "pando_pool_osds_up") == {"archive": 1, "fast": 3}
    assert _by_pool(m, "pando_pool_bytes_total") == {"archive": 10**9, "fast": 7 * 10**9}
    assert _by_pool(m, "pando_pool_bytes_free") == {"archive": 6 * 10**8,
                                                    "fast": 36 * 10**8}

    pres[1].revoke()
    pres[4].revoke()
    api.post("/api/osd/3/out")
    m = api.wait_for(lambda a: _by_pool(p := parse_prometheus(a.get("/metrics")),
                                        "pando_pool_osds_up") == {"archive": 0, "fast": 1} and p,
                     timeout=10, what="osd.1 and osd.4 down, osd.3 out")
    assert _by_pool(m, "pando_pool_osds") == {"archive": 1, "fast": 3}
    # A down OSD's presence is gone, so are its bytes; an out one's stay.
    assert _by_pool(m, "pando_pool_bytes_total") == {"archive": 0, "fast": 3 * 10**9}
    assert _by_pool(m, "pando_pool_bytes_free") == {"archive": 0, "fast": 26 * 10**8}


def _pool_codes(api: MgrApi) -> dict[str, tuple[str, list[str]]]:
    return {c["code"]: (c["severity"], c["detail"]) for c in api.status()["checks"]
            if c["code"].startswith("POOL_")}


def test_status_raises_pool_checks_as_osds_go_and_clears_them_when_they_return(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    api, pres = _pool_cluster(mgr_factory, presence, tmp_path)
    assert _pool_codes(api) == {
        "POOL_DEGRADED": ("HEALTH_WARN", ["pool archive: only osd.4 up and in (of osd.4): "
                                          "a file on 2 or more osds (a mirror) cannot be placed"])}

    pres[4].revoke()
    pres[1].revoke()
    pres[2].revoke()
    codes = api.wait_for(lambda a: len(c := _pool_codes(a)) == 2 and c, timeout=10,
                         what="both pool checks")
    assert codes["POOL_NO_OSD_UP"] == ("HEALTH_ERR", [
        "pool archive: no osd up and in (of osd.4): its files cannot be placed (ENOSPC)"])
    assert codes["POOL_DEGRADED"] == ("HEALTH_WARN", [
        "pool fast: only osd.3 up and in (of osd.1, osd.2, osd.3): "
        "a file on 2 or more osds (a mirror) cannot be placed"])
    assert api.status()["health"] == "HEALTH_ERR"

    for i in (1, 2, 4):
        pres[i].start()
    api.wait_for(lambda a: a.status()["health"] == "HEALTH_WARN" and _pool_codes(a) == {
        "POOL_DEGRADED": ("HEALTH_WARN", ["pool archive: only osd.4 up and in (of osd.4): "
                                          "a file on 2 or more osds (a mirror) cannot be placed"])},
        timeout=10, what="only archive's one-osd warning left")
    presence(6, pool="archive")
    api.wait_for(lambda a: a.status()["health"] == "HEALTH_OK", timeout=10,
                 what="HEALTH_OK with two osds in archive")
