"""The dashboard's metadata managers with their export's quota in headless
Chromium against a real mgr on etcd, the managers stood in for by their
presence keys: the bytes used of the limit, amber from 90 %, red at the
limit, "–" without a limit on bytes or from a manager that sends no
quota.  Screenshots are kept in build/test-logs/<test>/."""
from __future__ import annotations

from collections.abc import Callable

from dashboard_page import Dashboard
from mgrtest import HandPresence, quota

GiB = 1 << 30


def test_the_managers_table_shows_each_bytes_quota_amber_near_and_red_full(
        dashboard: Dashboard, presence: Callable[..., HandPresence]) -> None:
    dashboard.fsals[0].put(quota=quota(bytes=10 * GiB, used_bytes=6 * GiB // 5))
    presence(mds="mds-b").put(quota=quota(bytes=10 * GiB, used_bytes=95 * GiB // 10))
    presence(mds="mds-c").put(quota=quota(bytes=10 * GiB, used_bytes=10 * GiB))
    presence(mds="mds-d").put(quota=quota(files=100, used_files=100))
    presence(mds="mds-e")                                   # an older manager
    dashboard.api.wait_for(lambda a: sum("quota" in m for m in a.get("/api/mds")) == 4,
                           timeout=10, what="four managers' quotas")
    page = dashboard.look("quota.png")
    assert "degradedquota" in page.text["mds"]              # the header's last two cells
    shown = {n: (page.text[f"quota-{n}"], page.attrs[f"quota-{n}"]["class"])
             for n in ("mds-a", "mds-b", "mds-c", "mds-d", "mds-e")}
    assert shown == {"mds-a": ("1.2 GiB/10.0 GiB", "quota"),
                     "mds-b": ("9.5 GiB/10.0 GiB", "quota warn"),
                     "mds-c": ("10.0 GiB/10.0 GiB", "quota err"),
                     "mds-d": ("–", "quota"), "mds-e": ("–", "quota")}
