"""Keeping daemon and VM logs of failed tests (used by the conftest files).

tests/conftest.py's report hook marks a test's node with FAILED_KEY when any
phase fails; keep_logs() then copies the given logs to
build/test-logs/<test id>/ and prints their tails into the report."""
from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .pod import build_dir

FAILED_KEY = pytest.StashKey[bool]()

# The first line of a report by ASan, LSan, TSan (==PID==ERROR: or
# WARNING:) or UBSan (FILE:LINE:COL: runtime error:), as ci/sanitize's
# builds write them to a daemon's stderr.
_SANITIZER_REPORT = re.compile(
    r"^(?:==\d+==ERROR: \w+Sanitizer|WARNING: ThreadSanitizer|\S+:\d+:\d+: runtime error:).*$",
    re.M)


def log_dir_for(request: pytest.FixtureRequest) -> Path:
    return build_dir() / "test-logs" / re.sub(r"[^\w.-]+", "_", request.node.nodeid)


def keep_logs(request: pytest.FixtureRequest, logs: list[Path], tail: int = 30) -> None:
    """Copies logs into the failed test's log folder; a name already
    there (two managers' ganesha.log) gets its folder's name in front."""
    if not request.node.stash.get(FAILED_KEY, False):
        return
    dest = log_dir_for(request)
    dest.mkdir(parents=True, exist_ok=True)
    kept: set[str] = set()
    for log in logs:
        if log.exists():
            name = log.name if log.name not in kept else f"{log.parent.name}-{log.name}"
            kept.add(name)
            shutil.copy(log, dest / name)
            if tail:
                lines = log.read_text(errors="replace").replace("\r", "").splitlines()[-tail:]
                lines = [x if len(x) <= 400 else x[:400] + " [...]" for x in lines]
                print(f"\n--- {name} (kept in {dest}) ---\n" + "\n".join(lines))


def sanitizer_reports(logs: list[Path]) -> list[str]:
    """The first line of every sanitizer report in logs, by log name."""
    return [f"{log.name}: {m.group(0)}" for log in logs if log.exists()
            for m in _SANITIZER_REPORT.finditer(log.read_text(errors="replace"))]


def check_clean_exits(request: pytest.FixtureRequest, codes: Mapping[Any, int | None],
                      logs: list[Path], what: str) -> None:
    """A daemon factory's teardown: the logs kept (when the test failed),
    then the test failed if a daemon stopped there (codes: its exit status
    by name) did not exit 0 on SIGTERM, or if any daemon's log holds a
    sanitizer report (one that died of it mid-test is no longer stopped
    here, and not every test notices)."""
    reports = sanitizer_reports(logs)
    if reports:
        request.node.stash[FAILED_KEY] = True
    keep_logs(request, logs)
    assert not reports, f"{what}: sanitizer reports in its logs: {reports}"
    bad = {k: c for k, c in codes.items() if c != 0}
    assert not bad, f"{what} did not exit cleanly on SIGTERM: {bad}"
