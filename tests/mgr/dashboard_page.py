"""The dashboard looked at in Debian's headless Chromium inside a test's
pod: the page's elements by id (Page), with a screenshot kept of each
look; and Dashboard, a mgr over hand-put presence keys to look at (the
`dashboard` fixture of conftest.py)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from mgrtest import HandPresence
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.pod import Pod

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


@dataclass
class Dashboard:
    """A mgr whose OSDs and metadata managers are hand-put presence keys
    (mgrtest.rebuild_cluster); each look keeps its screenshot in keep."""
    pod: Pod
    tmp: Path
    keep: Path
    mgr: MgrProcess
    api: MgrApi
    fsals: list[HandPresence]

    def look(self, shot: str) -> Page:
        return look(self.pod, self.tmp, self.mgr, shot, self.keep)
