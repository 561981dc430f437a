"""Human output of rebuild, scrub and transcoding: the `pando status`
lines, `pando rebuild`, `pando scrub` and `pando transcode` tables.  Like render.py, every function takes
the API's JSON as it comes and shows what it can of a missing field."""
from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import render, units


def _n(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _count(v: Any) -> str:
    return str(int(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"


def rebuild_line(r: dict[str, Any]) -> Text:
    """'41 MiB/s, 80/120 files, 668 MiB of 1000 MiB, ETA 8 s, 1 job' (like
    ceph -s's rebuild line), or 'idle'."""
    if not r.get("running"):
        return Text("idle")
    got = r.get("jobs")
    jobs = got if isinstance(got, list) else []
    t = Text(f"{units.rate(_n(r.get('rate_bps')))}, "
             f"{_count(r.get('files_done'))}/{_count(r.get('files_total'))} files")
    failed = _n(r.get("files_failed"))
    if failed:
        t.append(f" ({int(failed)} failed)", style="bold red")
    t.append(f", {units.size(_n(r.get('bytes_done')))} of {units.size(_n(r.get('bytes_total')))}"
             f", ETA {units.duration(r.get('eta_s'))}")
    t.append(f", {len(jobs)} job{'s' if len(jobs) != 1 else ''}")
    return t


def scrub_line(s: dict[str, Any]) -> Text:
    """'running, 120/500 files, 1 mismatches, 1 repaired, 0 unrepairable'."""
    state = "running" if s.get("running") else "idle"
    t = Text(state)
    if "files_total" in s:
        t.append(f", {_count(s.get('files_done'))}/{_count(s.get('files_total'))} files")
    t.append(f", {_count(s.get('mismatches'))} mismatches, {_count(s.get('repaired'))} repaired, ")
    bad = _n(s.get("unrepairable"))
    t.append(f"{_count(s.get('unrepairable'))} unrepairable", style="bold red" if bad else "")
    return t


def transcode_line(t: dict[str, Any]) -> Text:
    """'3 files, 12 MiB transcoded, 0 failed, idle' (or 'transcoding on 1
    of 2 managers')."""
    failed = _n(t.get("failed"))
    line = Text(f"{_count(t.get('files_done'))} files, {units.size(_n(t.get('bytes_done')))} "
                "transcoded, ")
    line.append(f"{_count(t.get('failed'))} failed", style="bold red" if failed else "")
    running = int(_n(t.get("running")))
    line.append(f", transcoding on {running} of {_count(t.get('managers'))} managers"
                if running else ", idle")
    return line


def status_rows(st: dict[str, Any]) -> list[tuple[str, Text | str]]:
    """The rebuild, scrub and transcode lines of `pando status` (none from
    a mgr that does not say; no transcode line while no manager reports)."""
    rows: list[tuple[str, Text | str]] = []
    r, s, t = st.get("rebuild"), st.get("scrub"), st.get("transcode")
    if isinstance(r, dict):
        rows.append(("rebuild", rebuild_line(r)))
    if isinstance(s, dict):
        rows.append(("scrub", scrub_line(s)))
    if isinstance(t, dict) and _n(t.get("managers")):
        rows.append(("transcode", transcode_line(t)))
    return rows


def _ago(t: Any, now: float) -> str:
    return f"{max(0.0, now - float(t)):.0f}s ago" if isinstance(t, (int, float)) and t else "-"


def _bandwidth(v: Any) -> str:
    return "unlimited" if not _n(v) else units.rate(_n(v))


def _clock(t: Any) -> str:
    if not isinstance(t, (int, float)) or not t:
        return "-"
    return time.strftime("%H:%M:%S", time.localtime(float(t)))


def rebuild(con: Console, r: dict[str, Any], now: float | None = None) -> None:
    now = time.time() if now is None else now
    head = Table(box=None, show_header=False, pad_edge=False)
    head.add_column(style="bold")
    head.add_column()
    head.add_row("rebuild", rebuild_line(r))
    head.add_row("files", f"{_count(r.get('files_done'))} of {_count(r.get('files_total'))} "
                          f"done, {_count(r.get('files_failed'))} failed")
    bytes_ = Text(f"{units.size(_n(r.get('bytes_done')))} of "
                  f"{units.size(_n(r.get('bytes_total')))}  ")
    bytes_.append_text(render.bar(_n(r.get("bytes_done")), _n(r.get("bytes_total"))))
    head.add_row("bytes", bytes_)
    head.add_row("rate", f"{units.rate(_n(r.get('rate_bps')))}, "
                         f"ETA {units.duration(r.get('eta_s'))}")
    render.table(con, head)
    jobs = [j for j in r.get("jobs") or [] if isinstance(j, dict)]
    con.print()
    if not jobs:
        con.print("no rebuild job")
    else:
        render.table(con, jobs_table(jobs))
    mds = r.get("mds")
    if isinstance(mds, dict) and mds:
        con.print()
        render.table(con, rebuild_mds_table(mds, now))


def jobs_table(jobs: list[dict[str, Any]]) -> Table:
    t = Table(box=None, header_style="bold", pad_edge=False, title="JOBS", title_justify="left")
    for col in ("ID", "OSD", "REASON", "TARGET", "CREATED", "BY", "DONE ON", "PENDING ON"):
        t.add_column(col, no_wrap=True, justify="right" if col == "ID" else "left")
    for j in jobs:
        target = j.get("target")
        t.add_row(str(j.get("id", "?")), f"osd.{j.get('osd')}", str(j.get("reason", "?")),
                  "placement" if target is None else f"osd.{target}", _clock(j.get("created")),
                  str(j.get("by") or "-"), ", ".join(map(str, j.get("done_by") or [])) or "-",
                  ", ".join(map(str, j.get("pending_on") or [])) or "-")
    return t


def rebuild_mds_table(mds: dict[str, Any], now: float) -> Table:
    t = Table(box=None, header_style="bold", pad_edge=False, title="METADATA MANAGERS",
              title_justify="left")
    for col in ("NAME", "STATE", "FILES", "FAILED", "BYTES", "RATE", "ETA", "WORKERS",
                "BANDWIDTH", "UPDATED"):
        t.add_column(col, no_wrap=True, justify="left" if col in ("NAME", "STATE") else "right")
    for name, p in sorted(mds.items()):
        p = p if isinstance(p, dict) else {}
        t.add_row(name, str(p.get("state", "?")),
                  f"{_count(p.get('files_done'))}/{_count(p.get('files_total'))}",
                  _count(p.get("files_failed")),
                  f"{units.size(_n(p.get('bytes_done')))}/{units.size(_n(p.get('bytes_total')))}",
                  units.rate(_n(p.get("rate_bps"))), units.duration(p.get("eta_s")),
                  _count(p.get("parallel")), _bandwidth(p.get("bandwidth_bps")),
                  _ago(p.get("updated"), now))
    return t


def scrub(con: Console, s: dict[str, Any], now: float | None = None) -> None:
    now = time.time() if now is None else now
    line = Text("scrub: ", style="bold")
    line.append_text(scrub_line(s))
    req = s.get("request")
    if isinstance(req, dict):
        line.append(f" (last request {req.get('id', '?')}: {req.get('action', '?')} "
                    f"at {_clock(req.get('time'))})")
    con.print(line, no_wrap=True, overflow="ignore", crop=False)
    mds = s.get("mds")
    if not isinstance(mds, dict) or not mds:
        con.print("no metadata manager reports scrub progress")
        return
    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("NAME", "STATE", "PASS", "FILES", "BYTES", "MISMATCHES", "REPAIRED",
                "UNREPAIRABLE", "BANDWIDTH", "LAST PASS END", "UPDATED"):
        t.add_column(col, no_wrap=True, justify="left" if col in ("NAME", "STATE") else "right")
    for name, p in sorted(mds.items()):
        p = p if isinstance(p, dict) else {}
        bad = _n(p.get("unrepairable"))
        t.add_row(name, str(p.get("state", "?")), _count(p.get("pass")),
                  f"{_count(p.get('files_done'))}/{_count(p.get('files_total'))}",
                  units.size(_n(p.get("bytes_done"))), _count(p.get("mismatches")),
                  _count(p.get("repaired")),
                  Text(_count(p.get("unrepairable")), style="bold red" if bad else ""),
                  _bandwidth(p.get("bandwidth_bps")), _clock(p.get("last_pass_end")),
                  _ago(p.get("updated"), now))
    con.print()
    render.table(con, t)


def transcode(con: Console, t: dict[str, Any], now: float | None = None) -> None:
    now = time.time() if now is None else now
    line = Text("transcode: ", style="bold")
    line.append_text(transcode_line(t))
    con.print(line, no_wrap=True, overflow="ignore", crop=False)
    mds = t.get("mds")
    if not isinstance(mds, dict) or not mds:
        con.print("no metadata manager reports transcoding (Transcode_Interval 0, or no Etcd)")
        return
    tab = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("NAME", "PASSES", "FILES", "BYTES", "FAILED", "RETRIED", "NOW", "INTERVAL",
                "LAST PASS END", "UPDATED"):
        tab.add_column(col, no_wrap=True, justify="left" if col in ("NAME", "NOW") else "right")
    for name, p in sorted(mds.items()):
        p = p if isinstance(p, dict) else {}
        ino = int(_n(p.get("current_ino")))
        tab.add_row(name, _count(p.get("passes")), _count(p.get("files_done")),
                    units.size(_n(p.get("bytes_done"))),
                    Text(_count(p.get("failed")), style="bold red" if _n(p.get("failed")) else ""),
                    _count(p.get("retried")), f"inode {ino}" if ino else "-",
                    units.duration(p.get("interval_s")), _clock(p.get("last_pass_end")),
                    _ago(p.get("updated"), now))
    con.print()
    render.table(con, tab)
