"""The dashboard's Rebuild panel in headless Chromium against a real mgr
on etcd, the FSAL stood in for by its presence and progress keys: the
summary, the progress bar, the plot of the rebuild rate and the scrub
state.  Screenshots are kept in build/test-logs/<test>/."""
from __future__ import annotations

import time

from dashboard_page import Dashboard
from mgrtest import put_progress, rebuild_progress, scrub_progress


def test_rebuild_panel_shows_progress_the_rate_plot_and_scrub(dashboard: Dashboard) -> None:
    api, fsals = dashboard.api, dashboard.fsals
    page = dashboard.look("rebuild-idle.png")
    assert page.attrs["rebuild"]["data-running"] == "false"
    assert "no rebuild running" in page.text["rebuild"]
    assert page.text["scrub"] == "scrub: idle, 0 mismatches, 0 repaired, 0 unrepairable"

    jid = api.post("/api/osd/2/out")["epoch"]
    for rate in (10 << 20, 30 << 20, 41 << 20):
        put_progress(fsals[0], "rebuild", rebuild_progress(
            jobs_active=[jid], files_total=120, files_done=80, bytes_total=1000 << 20,
            bytes_done=700 << 20, rate_bps=rate, eta_s=8.0))
        api.wait_for(lambda a, r=rate: a.get("/api/rebuild")["history"][-1]["rate_bps"] == r,
                     timeout=5, what="rate sampled")
        time.sleep(1.1)                     # the history keeps one point a second
    put_progress(fsals[0], "scrub", scrub_progress(files_total=500, files_done=120,
                                                   mismatches=2, repaired=1, unrepairable=1))
    api.wait_for(lambda a: a.get("/api/scrub")["unrepairable"] == 1, timeout=5, what="scrub")
    page = dashboard.look("rebuild-running.png")
    assert page.attrs["rebuild"]["data-running"] == "true"
    assert page.text["rebuild"] == ("rebuilding at 41.0 MiB/s: 80/120 files, "
                                    "700.0 MiB of 1000.0 MiB, ETA 8 s")
    assert page.attrs["rebuild-done"]["style"].startswith("width: 70%")
    assert page.text["rebuild-jobs"] == f"job {jid}: osd.2 (out), pending on mds-a"
    points = page.attrs["rate-plot-rate_bps"]["points"].split()
    assert len(points) >= 3
    ys = {float(p.split(",")[1]) for p in points}
    assert len(ys) >= 3 and min(ys) < 10, "the plot rises to the top rate"
    assert page.text["scrub"] == "scrub: running, 2 mismatches, 1 repaired, 1 unrepairable"
    assert page.attrs["scrub"]["class"] == "err"
