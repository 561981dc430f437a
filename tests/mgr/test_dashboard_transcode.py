"""The dashboard's Transcoding panel in headless Chromium against a real
mgr on etcd, the FSAL stood in for by its presence and
`transcode/progress/<name>` keys.  Screenshots are kept in
build/test-logs/<test>/."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mgrtest import put_progress, recovery_cluster
from test_dashboard import CHROMIUM, look
from test_transcode import transcode_progress

from pando_testing.logs import log_dir_for
from pando_testing.pod import Pod

Factory = Callable[..., Any]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_transcoding_panel_shows_the_sums_each_manager_and_failures_in_red(
        request: pytest.FixtureRequest, pod: Pod, tmp_path: Path, mgr_factory: Factory,
        presence: Factory) -> None:
    mgr, api, _, fsals = recovery_cluster(mgr_factory, presence, tmp_path)
    keep = log_dir_for(request)
    page = look(pod, tmp_path, mgr, "transcode-none.png", keep)
    assert page.text["transcode"] == "no metadata manager transcodes"
    assert page.attrs["transcode"]["data-running"] == "false"
    assert page.text["transcode-mds"].strip() == ""

    put_progress(fsals[0], "transcode", transcode_progress(
        passes=4, files_done=3, bytes_done=12 << 20, failed=1, current_ino=77, interval_s=60))
    api.wait_for(lambda a: a.get("/api/transcode")["managers"] == 1, timeout=5,
                 what="transcode progress seen")
    page = look(pod, tmp_path, mgr, "transcode-running.png", keep)
    assert page.text["transcode"] == ("3 files, 12.0 MiB transcoded, 1 failed, "
                                      "transcoding on 1 of 1 managers")
    assert page.attrs["transcode"]["data-running"] == "true"
    assert page.attrs["transcode"]["class"] == "err"
    assert page.text["transcode-mds"].strip() == ("mds-a: 3 files, 12.0 MiB, 1 failed, "
                                                  "4 passes every 1 min 0 s, now inode 77")
