"""Rich tables for the CLI."""
from __future__ import annotations

from rich.table import Table

from .cluster import OsdView


def human(n: int | None) -> str:
    if n is None:
        return "-"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return str(n)


STATE_STYLE = {"up": "green", "down": "red", "no answer": "yellow"}


def status_table(rows: list[OsdView], title: str) -> Table:
    t = Table(title=title)
    for col in ("osd", "nfs addr", "ctl addr", "pid", "state", "objects", "free"):
        t.add_column(col, justify="right" if col in ("osd", "pid", "objects", "free") else "left")
    for r in rows:
        style = STATE_STYLE.get(r.state, "")
        t.add_row(str(r.rec.osd_id), r.rec.nfs_addr, r.rec.ctl_addr,
                  str(r.rec.pid) if r.running and r.rec.pid else "-",
                  f"[{style}]{r.state}[/]" if style else r.state,
                  str(r.stat.objects) if r.stat and r.stat.objects is not None else "-",
                  human(r.stat.free_bytes if r.stat else None))
    return t


def down_table(results: list[tuple[int, int | None, str]], title: str) -> Table:
    t = Table(title=title)
    t.add_column("osd", justify="right")
    t.add_column("pid", justify="right")
    t.add_column("result")
    for osd_id, pid, what in results:
        t.add_row(str(osd_id), str(pid) if pid else "-", what)
    return t
