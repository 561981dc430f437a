"""`pando quota`'s human view: the export's quota and each user's and
group's, each limit with what is used of it, as the FSAL's quota_get,
owner_quota_get and owner_quota_list JSON give them
(ganesha-fsal/fsal/dbus_quota.c)."""
from __future__ import annotations

import grp
import pwd
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from . import units


def _files(n: Any) -> str:
    return f"{n:,}"


def _line(what: str, used: Any, limit: Any, fmt: Callable[[Any], str]) -> str:
    if not limit:
        return f"{what}: {fmt(used)} used, no limit"
    return (f"{what}: {fmt(used)} used of {fmt(limit)} "
            f"({units.percent(used, limit):.1f}%), {fmt(max(0, limit - used))} left")


def _limits(con: Console, q: dict[str, Any]) -> None:
    con.print(_line("bytes", q.get("used_bytes", 0), q.get("bytes", 0), units.size))
    con.print(_line("files", q.get("used_files", 0), q.get("files", 0), _files))


def name_of(kind: str, id_: int) -> str:
    """The name this host gives the id, or "-"."""
    try:
        return pwd.getpwuid(id_).pw_name if kind == "user" else grp.getgrgid(id_).gr_name
    except (KeyError, OverflowError):
        return "-"


def _used_of(used: Any, limit: Any, fmt: Callable[[Any], str]) -> str:
    return f"{fmt(used)} / {fmt(limit) if limit else '-'}"


def owner_table(owners: list[dict[str, Any]]) -> Table:
    t = Table(box=None, header_style="bold", title="USER AND GROUP QUOTAS",
              title_justify="left")
    for col in ("KIND", "ID", "NAME", "BYTES USED / LIMIT", "FILES USED / LIMIT"):
        t.add_column(col, justify="right" if col in ("ID",) else "left")
    for o in owners:
        kind, id_ = str(o.get("kind", "?")), int(o.get("id", 0))
        t.add_row(kind, str(id_), name_of(kind, id_),
                  _used_of(o.get("used_bytes", 0), o.get("bytes", 0), units.size),
                  _used_of(o.get("used_files", 0), o.get("files", 0), _files))
    return t


def export(con: Console, q: dict[str, Any]) -> None:
    """The export's quota, then the owners' (q["owners"]) as a table;
    owners None: the manager has no user and group quotas."""
    _limits(con, q)
    if "owners" in q and q["owners"] is None:
        con.print("users and groups: this manager has no user or group quotas "
                  "(its FSAL is older than pando)")
        return
    owners = [o for o in q.get("owners") or [] if isinstance(o, dict)]
    if owners:
        con.print()
        con.print(owner_table(owners))


def owner(con: Console, q: dict[str, Any]) -> None:
    """One user's or group's quota."""
    kind, id_ = str(q.get("kind", "?")), int(q.get("id", 0))
    con.print(f"{kind} {id_} ({name_of(kind, id_)})")
    _limits(con, q)
