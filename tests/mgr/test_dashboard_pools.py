"""The dashboard's named pools in headless Chromium against a real mgr on
etcd, the OSDs stood in for by their presence keys: each pool's OSDs up
and in of its OSDs, size and free space under Capacity, red with none up,
amber with one; each OSD's pool in the OSD map.  Screenshots are kept in
build/test-logs/<test>/."""
from __future__ import annotations

from collections.abc import Callable

from dashboard_page import Dashboard
from mgrtest import HandPresence


def test_capacity_shows_each_pool_and_the_osd_map_each_osds_pool(
        dashboard: Dashboard, presence: Callable[..., HandPresence]) -> None:
    api = dashboard.api
    page = dashboard.look("pools-none.png")
    assert page.text["pools"].strip() == ""
    # The cells' text run together: nfs, domain ("–": none), pool, weight.
    assert "nfsdomainpoolweight" in page.text["osds"]
    assert "127.0.0.1:20491––" in page.text["osd-1"]

    presence(4, pool="fast", total=4 * 10**9, free=10**9)
    fast5 = presence(5, pool="fast", total=2 * 10**9, free=2 * 10**9)
    api.post("/api/osds", {"id": 6, "ctl": "127.0.0.1:20596", "nfs": "127.0.0.1:20496",
                           "pool": "archive"})
    api.wait_for(lambda a: {o["id"]: (o["pool"], o["up"]) for o in a.get("/api/osds")
                            if o["pool"]} == {4: ("fast", True), 5: ("fast", True),
                                              6: ("archive", False)},
                 timeout=15, what="osd.4 and osd.5 up in fast, osd.6 down in archive")
    page = dashboard.look("pools.png")
    assert page.text["pool-archive"] == "pool archive: 0/1 osds up and in, 0 B, 0 B free"
    assert page.attrs["pool-archive"]["class"] == "err"
    assert page.text["pool-fast"] == "pool fast: 2/2 osds up and in, 5.6 GiB, 2.8 GiB free"
    assert page.attrs["pool-fast"]["class"] == ""
    assert "127.0.0.1:20494–fast" in page.text["osd-4"]
    assert "127.0.0.1:20496–archive" in page.text["osd-6"]
    assert "POOL_NO_OSD_UP" in page.text["checks"] and "pool archive" in page.text["checks"]

    fast5.revoke()
    api.wait_for(lambda a: a.osd_states().get(5) == (False, True), timeout=10,
                 what="osd.5 down")
    page = dashboard.look("pools-fast-degraded.png")
    assert page.text["pool-fast"] == "pool fast: 1/2 osds up and in, 3.7 GiB, 953.7 MiB free"
    assert page.attrs["pool-fast"]["class"] == "warn"
    assert "POOL_DEGRADED" in page.text["checks"] and "pool fast" in page.text["checks"]
