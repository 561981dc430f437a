"""The dashboard in Debian's headless Chromium, inside the test's pod,
against a real mgr, etcd and pando-osd targets: HEALTH_OK with every OSD
up; after one OSD is killed, HEALTH_WARN and that OSD down.  Screenshots
of both are kept in build/test-logs/<test>/ whatever the outcome."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dashboard_page import CHROMIUM, look

from pando_testing.etcd import EtcdCluster
from pando_testing.logs import log_dir_for
from pando_testing.pod import Pod

Factory = Callable[..., Any]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_dashboard_shows_health_ok_then_the_killed_osd_down(
        request: pytest.FixtureRequest, pod: Pod, tmp_path: Path, etcd: EtcdCluster,
        osd_factory: Factory, mgr_factory: Factory, presence: Factory) -> None:
    args = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    osds = [osd_factory(i, extra_args=list(args)) for i in (1, 2, 3)]
    presence(mds="mds-a")
    mgr = mgr_factory()
    api = mgr.api()
    # Generous: on a loaded 2-core machine (ci/test) HEALTH_OK once took
    # more than 10 s; the page's content, not these waits, is the test.
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in (1, 2, 3)},
                 timeout=30, what="osds up")
    api.wait_for(lambda a: a.status()["health"] == "HEALTH_OK", timeout=30,
                 what=f"HEALTH_OK (checks as the wait began: {api.status().get('checks')})")
    keep = log_dir_for(request)

    page = look(pod, tmp_path, mgr, "dashboard-ok.png", keep)
    assert page.attrs["health"]["data-health"] == "HEALTH_OK", page.text.get("checks")
    for i in (1, 2, 3):
        row = page.attrs[f"osd-{i}"]
        assert (row["data-up"], row["data-in"]) == ("true", "true")
        assert "up" in page.text[f"osd-{i}"]
    assert "no rebuild running" in page.text["rebuild"]
    assert "mds-a" in page.text["mds"]
    assert "GiB" in page.text["capacity-text"] or "MiB" in page.text["capacity-text"]

    osds[1].kill9()
    api.wait_for(lambda a: a.osd_states().get(2) == (False, True), timeout=10, what="osd.2 down")
    page = look(pod, tmp_path, mgr, "dashboard-osd2-down.png", keep)
    assert page.attrs["health"]["data-health"] == "HEALTH_WARN"
    assert "OSD_DOWN" in page.text["checks"] and "osd.2" in page.text["checks"]
    assert page.attrs["osd-2"]["data-up"] == "false" and "down" in page.text["osd-2"]
    assert page.attrs["osd-1"]["data-up"] == "true"
