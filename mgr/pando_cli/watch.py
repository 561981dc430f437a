"""`pando rebuild --watch`: GET /api/rebuild every interval until no job
is left.  At a terminal, a rich progress bar of the bytes copied with the
mgr's rate and ETA; otherwise one line per poll (logs, pipes), or one
JSON object per line with --json."""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from . import rebuild_view, units

Fetch = Callable[[], dict[str, Any]]


def _jobs(r: dict[str, Any]) -> list[Any]:
    jobs = r.get("jobs")
    if not isinstance(jobs, list):
        raise TypeError("the answer's jobs is not a list")
    return jobs


def _n(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _fields(r: dict[str, Any]) -> dict[str, Any]:
    return {"rate": units.rate(_n(r.get("rate_bps"))), "eta": units.duration(r.get("eta_s")),
            "files": f"{int(_n(r.get('files_done')))}/{int(_n(r.get('files_total')))} files",
            "bytes": f"{units.size(_n(r.get('bytes_done')))} of "
                     f"{units.size(_n(r.get('bytes_total')))}",
            "jobs": len(_jobs(r))}


def watch(fetch: Fetch, out: Console, as_json: bool, interval: float) -> None:
    """Returns once the mgr lists no job; Ctrl-C (KeyboardInterrupt) and
    the client's errors go to the caller."""
    if as_json:
        _lines(fetch, interval, lambda r: json.dumps(r, sort_keys=True))
    elif out.is_terminal:
        _bar(fetch, out, interval)
    else:
        _lines(fetch, interval, lambda r: "rebuild: " + rebuild_view.rebuild_line(r).plain)
    if not as_json:
        print("rebuild done: no job left", flush=True)


def _lines(fetch: Fetch, interval: float, line: Callable[[dict[str, Any]], str]) -> None:
    """One line per poll that changed something, flushed at once."""
    last = None
    while True:
        r = fetch()
        jobs = _jobs(r)
        text = line(r)
        if text != last:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
            last = text
        if not jobs:
            return
        time.sleep(interval)


def _bar(fetch: Fetch, out: Console, interval: float) -> None:
    cols = (TextColumn("[bold]rebuild[/] {task.fields[jobs]} job(s)"), BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"), TextColumn("{task.fields[bytes]}"),
            TextColumn("{task.fields[files]}"), TextColumn("{task.fields[rate]}"),
            TextColumn("ETA {task.fields[eta]}"))
    with Progress(*cols, console=out, transient=False) as prog:
        task: TaskID | None = None
        while True:
            r = fetch()
            f = _fields(r)
            total = max(1.0, _n(r.get("bytes_total")))
            if task is None:
                task = prog.add_task("rebuild", total=total, **f)
            prog.update(task, total=total, completed=min(total, _n(r.get("bytes_done"))), **f)
            if not f["jobs"]:
                prog.update(task, completed=total)
                return
            time.sleep(interval)
