"""The export's quota as each metadata manager's presence carries it
(mgr/README.md, "Metadata-manager presence"): QUOTA_NEARFULL and
QUOTA_FULL raised and cleared, pure and through a real mgr's
/api/status; the pando_mds_quota_* metrics; /api/mds and /api/status
listing it.  A manager that sends no quota (an older one) has none."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import HandPresence, parse_prometheus, quota, rebuild_cluster
from pando_mgr import health
from pando_testing.mgr import MgrApi

Factory = Callable[..., Any]
GiB = 1 << 30


def quota_checks(**mds: dict[str, Any] | None) -> dict[str, health.Check]:
    """The quota checks of managers whose presence has these quotas (None:
    no quota member)."""
    values = {n: {} if q is None else {"quota": q} for n, q in mds.items()}
    return {c.code: c for c in health.checks(None, {}, values, True, [])
            if c.code.startswith("QUOTA_")}


def test_nearfull_warns_from_90_percent_of_a_bytes_or_a_files_limit() -> None:
    checks = quota_checks(**{"mds-a": quota(bytes=10 * GiB, used_bytes=95 * GiB // 10),
                             "mds-b": quota(files=1000, used_files=900, bytes=10 * GiB)})
    assert list(checks) == ["QUOTA_NEARFULL"]
    c = checks["QUOTA_NEARFULL"]
    assert (c.severity, c.summary) == ("HEALTH_WARN", "2 quota limits nearly reached")
    assert c.detail == ["mds-a: bytes 9.5 GiB of 10 GiB (95%)", "mds-b: files 900 of 1,000 (90%)"]


def test_full_errs_at_the_limit_and_past_it_naming_each_limit_reached() -> None:
    checks = quota_checks(**{"mds-a": quota(bytes=10 * GiB, used_bytes=10 * GiB,
                                            files=100, used_files=120),
                             "mds-b": quota(files=1000, used_files=999)})
    assert list(checks) == ["QUOTA_FULL", "QUOTA_NEARFULL"]
    c = checks["QUOTA_FULL"]
    assert (c.severity, c.summary) == ("HEALTH_ERR", "2 quota limits reached (EDQUOT)")
    assert c.detail == ["mds-a: bytes 10 GiB of 10 GiB (100%)", "mds-a: files 120 of 100 (120%)"]
    # 99.9% is floored: a limit not yet reached never reads 100%.
    assert checks["QUOTA_NEARFULL"].detail == ["mds-b: files 999 of 1,000 (99%)"]
    assert health.overall(list(checks.values())) == "HEALTH_ERR"


@pytest.mark.parametrize("q", [
    None,                                                   # an older manager
    quota(used_bytes=10**15, used_files=10**9),             # no limit
    quota(bytes=1000, used_bytes=899, files=10, used_files=8),
    quota(bytes=0, used_bytes=5, files=10, used_files=0),
])
def test_no_quota_no_limit_or_under_90_percent_raises_nothing(q: dict[str, Any] | None) -> None:
    assert quota_checks(**{"mds-a": q}) == {}


def test_status_raises_quota_checks_as_usage_grows_and_clears_them_when_it_falls(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    api, (fsal, _) = _cluster(mgr_factory, presence, tmp_path)
    fsal.put(quota=quota(bytes=10 * GiB, used_bytes=9 * GiB, files=100, used_files=10))
    codes = api.wait_for(_quota_codes, timeout=10, what="QUOTA_NEARFULL")
    assert codes == {"QUOTA_NEARFULL": ("HEALTH_WARN", ["mds-a: bytes 9.0 GiB of 10 GiB (90%)"])}
    assert api.status()["health"] == "HEALTH_WARN"

    fsal.put(quota=quota(bytes=10 * GiB, used_bytes=10 * GiB, files=100, used_files=95))
    codes = api.wait_for(lambda a: "QUOTA_FULL" in (c := _quota_codes(a)) and c, timeout=10,
                         what="QUOTA_FULL")
    assert codes == {"QUOTA_FULL": ("HEALTH_ERR", ["mds-a: bytes 10 GiB of 10 GiB (100%)"]),
                     "QUOTA_NEARFULL": ("HEALTH_WARN", ["mds-a: files 95 of 100 (95%)"])}
    assert api.status()["health"] == "HEALTH_ERR"

    fsal.put(quota=quota(bytes=10 * GiB, used_bytes=GiB, files=100, used_files=89))
    api.wait_for(lambda a: a.status()["health"] == "HEALTH_OK", timeout=10,
                 what="HEALTH_OK once usage fell below 90%")
    assert _quota_codes(api) == {}


def test_metrics_give_each_managers_quota_and_usage_only_where_it_sends_one(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    """mds-b is an older manager: no quota, no samples; mds-a has none on
    bytes, still sampled so its usage shows."""
    api, (fsal, _) = _cluster(mgr_factory, presence, tmp_path)
    fsal.put(quota=quota(files=1000, used_bytes=5 * GiB, used_files=42))
    m = api.wait_for(lambda a: (p := parse_prometheus(a.get("/metrics"))).get(
        "pando_mds_quota_files") and p, timeout=10, what="the quota metrics")
    assert {name: m[name] for name in m if name.startswith("pando_mds_quota_")} == {
        "pando_mds_quota_bytes": [({"mds": "mds-a"}, 0.0)],
        "pando_mds_quota_used_bytes": [({"mds": "mds-a"}, float(5 * GiB))],
        "pando_mds_quota_files": [({"mds": "mds-a"}, 1000.0)],
        "pando_mds_quota_used_files": [({"mds": "mds-a"}, 42.0)]}


def test_api_mds_and_status_list_each_managers_quota(
        mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    api, (fsal, _) = _cluster(mgr_factory, presence, tmp_path)
    q = quota(bytes=10 * GiB, used_bytes=GiB, files=0, used_files=3)
    fsal.put(quota=q)
    mds = api.wait_for(lambda a: (m := a.get("/api/mds"))[0].get("quota") and m, timeout=10,
                       what="the quota in /api/mds")
    assert [(m["name"], m.get("quota")) for m in mds] == [("mds-a", q), ("mds-b", None)]
    assert [(m["name"], m.get("quota")) for m in api.status()["mds"]] == [
        ("mds-a", q), ("mds-b", None)]


def _cluster(mgr_factory: Factory, presence: Factory,
             tmp_path: Path) -> tuple[MgrApi, list[HandPresence]]:
    """OSDs 1-3 up; metadata managers mds-a and mds-b, neither sending a
    quota yet."""
    _, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    return api, fsals


def _quota_codes(api: MgrApi) -> dict[str, tuple[str, list[str]]]:
    return {c["code"]: (c["severity"], c["detail"]) for c in api.status()["checks"]
            if c["code"].startswith("QUOTA_")}
