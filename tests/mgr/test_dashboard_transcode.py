"""The dashboard's Transcoding panel in headless Chromium against a real
mgr on etcd, the FSAL stood in for by its presence and
`transcode/progress/<name>` keys.  Screenshots are kept in
build/test-logs/<test>/."""
from __future__ import annotations

from dashboard_page import Dashboard
from mgrtest import put_progress
from test_transcode import transcode_progress


def test_transcoding_panel_shows_the_sums_each_manager_and_failures_in_red(
        dashboard: Dashboard) -> None:
    api, fsals = dashboard.api, dashboard.fsals
    page = dashboard.look("transcode-none.png")
    assert page.text["transcode"] == "no metadata manager transcodes"
    assert page.attrs["transcode"]["data-running"] == "false"
    assert page.text["transcode-mds"].strip() == ""

    put_progress(fsals[0], "transcode", transcode_progress(
        passes=4, files_done=3, bytes_done=12 << 20, failed=1, current_ino=77, interval_s=60))
    api.wait_for(lambda a: a.get("/api/transcode")["managers"] == 1, timeout=5,
                 what="transcode progress seen")
    page = dashboard.look("transcode-running.png")
    assert page.text["transcode"] == ("3 files, 12.0 MiB transcoded, 1 failed, "
                                      "transcoding on 1 of 1 managers")
    assert page.attrs["transcode"]["data-running"] == "true"
    assert page.attrs["transcode"]["class"] == "err"
    assert page.text["transcode-mds"].strip() == ("mds-a: 3 files, 12.0 MiB, 1 failed, "
                                                  "4 passes every 1 min 0 s, now inode 77")
