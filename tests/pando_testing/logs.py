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


def log_dir_for(request: pytest.FixtureRequest) -> Path:
    return build_dir() / "test-logs" / re.sub(r"[^\w.-]+", "_", request.node.nodeid)


def keep_logs(request: pytest.FixtureRequest, logs: list[Path], tail: int = 30) -> None:
    if not request.node.stash.get(FAILED_KEY, False):
        return
    dest = log_dir_for(request)
    dest.mkdir(parents=True, exist_ok=True)
    for log in logs:
        if log.exists():
            shutil.copy(log, dest / log.name)
            if tail:
                lines = log.read_text(errors="replace").replace("\r", "").splitlines()[-tail:]
                lines = [x if len(x) <= 400 else x[:400] + " [...]" for x in lines]
                print(f"\n--- {log.name} (kept in {dest}) ---\n" + "\n".join(lines))


def check_clean_exits(request: pytest.FixtureRequest, codes: Mapping[Any, int | None],
                      logs: list[Path], what: str) -> None:
    """A daemon factory's teardown: the logs kept (when the test failed),
    then the test failed if a daemon stopped there (codes: its exit status
    by name) did not exit 0 on SIGTERM."""
    keep_logs(request, logs)
    bad = {k: c for k, c in codes.items() if c != 0}
    assert not bad, f"{what} did not exit cleanly on SIGTERM: {bad}"
