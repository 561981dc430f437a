"""Keeping daemon and VM logs of failed tests (used by the conftest files).

tests/conftest.py's report hook marks a test's node with FAILED_KEY when any
phase fails; keep_logs() then copies the given logs to
build/test-logs/<test id>/ and prints their tails into the report."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

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
