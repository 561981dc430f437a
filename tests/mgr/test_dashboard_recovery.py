"""The dashboard's Recovery panel in headless Chromium against a real mgr
on etcd, the FSAL stood in for by its presence and progress keys: the
summary, the progress bar, the plot of the rebuild rate and the scrub
state.  Screenshots are kept in build/test-logs/<test>/."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import put_progress, recovery_cluster, recovery_progress, scrub_progress
from test_dashboard import CHROMIUM, look

from pando_testing.logs import log_dir_for
from pando_testing.pod import Pod

Factory = Callable[..., Any]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_recovery_panel_shows_progress_the_rate_plot_and_scrub(
        request: pytest.FixtureRequest, pod: Pod, tmp_path: Path, mgr_factory: Factory,
        presence: Factory) -> None:
    mgr, api, _, fsals = recovery_cluster(mgr_factory, presence, tmp_path)
    keep = log_dir_for(request)
    page = look(pod, tmp_path, mgr, "recovery-idle.png", keep)
    assert page.attrs["recovery"]["data-running"] == "false"
    assert "no recovery running" in page.text["recovery"]
    assert page.text["scrub"] == "scrub: idle, 0 mismatches, 0 repaired, 0 unrepairable"

    jid = api.post("/api/osd/2/out")["epoch"]
    for rate in (10 << 20, 30 << 20, 41 << 20):
        put_progress(fsals[0], "recovery", recovery_progress(
            jobs_active=[jid], files_total=120, files_done=80, bytes_total=1000 << 20,
            bytes_done=700 << 20, rate_bps=rate, eta_s=8.0))
        api.wait_for(lambda a, r=rate: a.get("/api/recovery")["history"][-1]["rate_bps"] == r,
                     timeout=5, what="rate sampled")
        time.sleep(1.1)                     # the history keeps one point a second
    put_progress(fsals[0], "scrub", scrub_progress(files_total=500, files_done=120,
                                                   mismatches=2, repaired=1, unrepairable=1))
    api.wait_for(lambda a: a.get("/api/scrub")["unrepairable"] == 1, timeout=5, what="scrub")
    page = look(pod, tmp_path, mgr, "recovery-running.png", keep)
    assert page.attrs["recovery"]["data-running"] == "true"
    assert page.text["recovery"] == ("rebuilding at 41.0 MiB/s: 80/120 files, "
                                     "700.0 MiB of 1000.0 MiB, ETA 8 s")
    assert page.attrs["recovery-done"]["style"].startswith("width: 70%")
    assert page.text["recovery-jobs"] == f"job {jid}: osd.2 (out), pending on mds-a"
    points = page.attrs["rate-plot-rate_bps"]["points"].split()
    assert len(points) >= 3
    ys = {float(p.split(",")[1]) for p in points}
    assert len(ys) >= 3 and min(ys) < 10, "the plot rises to the top rate"
    assert page.text["scrub"] == "scrub: running, 2 mismatches, 1 repaired, 1 unrepairable"
    assert page.attrs["scrub"]["class"] == "err"
