"""Detached daemons, identified by pid (and checked to be ours before signals)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .ui import Ui


def spawn_detached(argv: Sequence[str | os.PathLike[str]], cwd: Path, output: Path,
                   env: Mapping[str, str] | None = None) -> int:
    """Starts argv in its own session (setsid), stdin from /dev/null, stdout and
    stderr appended to `output`, immune to the terminal's hangup; returns its pid.
    `env` is added to this process's environment."""
    with open(output, "ab") as out, open(os.devnull, "rb") as devnull:
        p = subprocess.Popen([str(a) for a in argv], cwd=cwd, stdin=devnull, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True,
                             close_fds=True, env={**os.environ, **(env or {})})
    return p.pid


def is_running(pid: int | None, exe_name: str) -> bool:
    """True when `pid` is alive and runs `exe_name` (not a recycled pid); a
    Python module name matches `python -m MODULE`."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        _reap(pid)
        return False
    return _runs(cmdline, exe_name)


def _runs(cmdline: list[bytes], name: str) -> bool:
    """argv[0] is `name`, or a Python interpreter runs `-m name` (pando-mgr)."""
    argv = [a.decode(errors="replace") for a in cmdline]
    if argv and os.path.basename(argv[0]) == name:
        return True
    return len(argv) > 2 and os.path.basename(argv[0]).startswith("python") and \
        argv[1] == "-m" and argv[2] == name


def pid_alive(pid: int | None) -> bool:
    """True when `pid` exists and is not a zombie (reaped here if it is ours)."""
    if not pid:
        return False
    _reap(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def terminate(pid: int | None, exe_name: str, timeout: float) -> str:
    """SIGTERM, wait up to `timeout`, then SIGKILL. Returns what happened."""
    if pid is None or not is_running(pid, exe_name):
        return "not running"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _reap(pid)
        if not is_running(pid, exe_name):
            return "stopped"
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        _reap(pid)
        if not is_running(pid, exe_name):
            break
        time.sleep(0.05)
    return f"killed (no exit {timeout:.0f} s after SIGTERM)"


class StartError(Exception):
    """A daemon did not come up. `tails` holds the last lines of the logs
    that tell why, read now: stopping the other daemons adds more lines."""

    def __init__(self, msg: str, logs: Sequence[Path] = (), lines: int = 20) -> None:
        super().__init__(msg)
        self.tails = {log: log.read_text(errors="replace").splitlines()[-lines:]
                      for log in logs if log.exists()}


def wait_ready(ui: Ui, what: str, steps: Sequence[tuple[str, Callable[[], bool]]],
               pid: int, timeout: float, logs: Sequence[Path]) -> None:
    """Waits, with a spinner, until each step's check passes in turn, while
    `pid` (our child) lives; StartError when it exits or `timeout` runs out."""
    deadline = time.monotonic() + timeout
    with ui.waiting(what) as update:
        for label, ready in steps:
            update(f"waiting for {label}")
            while not ready():
                if not pid_alive(pid):
                    raise StartError(f"{what}: exited (pid {pid}) while waiting for {label}", logs)
                if time.monotonic() > deadline:
                    raise StartError(f"{what}: no {label} after {timeout:.0f} s", logs)
                time.sleep(0.1)
