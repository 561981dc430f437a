"""The dashboard in Debian's headless Chromium, inside the test's pod,
against a real mgr, etcd and pando-osd targets: HEALTH_OK with every OSD
up; after one OSD is killed, HEALTH_WARN and that OSD down.  Screenshots
of both are kept in build/test-logs/<test>/ whatever the outcome."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pando_testing.etcd import EtcdCluster
from pando_testing.logs import log_dir_for
from pando_testing.mgr import MgrProcess
from pando_testing.pod import Pod

Factory = Callable[..., Any]
CHROMIUM = "/usr/bin/chromium"


class Page(HTMLParser):
    """Each element's attributes by id, and the text under each id."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self._open: list[str | None] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        ident = a.get("id")
        if ident:
            self.attrs[ident] = a
            self.text.setdefault(ident, "")
        if tag not in ("br", "img", "input", "link", "meta"):
            self._open.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            if ident:
                self.text[ident] += data


def chromium(pod: Pod, tmp: Path, url: str, *mode: str) -> str:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'chromium-profile'}",
            "--virtual-time-budget=6000", "--window-size=1280,900", *mode, url]
    cp = pod.run(argv, check=False, timeout=120, env={"HOME": str(tmp), "PATH": "/usr/bin:/bin"})
    assert cp.returncode == 0, cp.stderr[-2000:]
    return str(cp.stdout)


def look(pod: Pod, tmp: Path, mgr: MgrProcess, shot: str, keep: Path) -> Page:
    page = Page(chromium(pod, tmp, mgr.url + "/", "--dump-dom"))
    png = tmp / shot
    chromium(pod, tmp, mgr.url + "/", f"--screenshot={png}")
    assert png.exists() and png.stat().st_size > 10_000
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(png, keep / shot)
    return page


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_dashboard_shows_health_ok_then_the_killed_osd_down(
        request: pytest.FixtureRequest, pod: Pod, tmp_path: Path, etcd: EtcdCluster,
        osd_factory: Factory, mgr_factory: Factory, presence: Factory) -> None:
    args = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    osds = [osd_factory(i, extra_args=list(args)) for i in (1, 2, 3)]
    presence(mds="mds-a")
    mgr = mgr_factory()
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in (1, 2, 3)},
                 timeout=15, what="osds up")
    api.wait_for(lambda a: a.status()["health"] == "HEALTH_OK", timeout=10, what="HEALTH_OK")
    keep = log_dir_for(request)

    page = look(pod, tmp_path, mgr, "dashboard-ok.png", keep)
    assert page.attrs["health"]["data-health"] == "HEALTH_OK", page.text.get("checks")
    for i in (1, 2, 3):
        row = page.attrs[f"osd-{i}"]
        assert (row["data-up"], row["data-in"]) == ("true", "true")
        assert "up" in page.text[f"osd-{i}"]
    assert "no recovery running" in page.text["recovery"]
    assert "mds-a" in page.text["mds"]
    assert "GiB" in page.text["capacity-text"] or "MiB" in page.text["capacity-text"]

    osds[1].kill9()
    api.wait_for(lambda a: a.osd_states().get(2) == (False, True), timeout=10, what="osd.2 down")
    page = look(pod, tmp_path, mgr, "dashboard-osd2-down.png", keep)
    assert page.attrs["health"]["data-health"] == "HEALTH_WARN"
    assert "OSD_DOWN" in page.text["checks"] and "osd.2" in page.text["checks"]
    assert page.attrs["osd-2"]["data-up"] == "false" and "down" in page.text["osd-2"]
    assert page.attrs["osd-1"]["data-up"] == "true"
