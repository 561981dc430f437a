"""`pando junction`'s human view: the junctions in the root of the
export, as the FSAL's junction_list JSON gives them
(ganesha-fsal/fsal/dbus_junction.c)."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def junctions(con: Console, found: list[dict[str, Any]]) -> None:
    if not found:
        con.print("no junctions")
        return
    t = Table(box=None, header_style="bold")
    for col in ("JUNCTION", "VOLUME PATH", "SERVERS"):
        t.add_column(col)
    for j in found:
        t.add_row(f"/{j.get('volume', '?')}", str(j.get("path", "?")),
                  ", ".join(map(str, j.get("servers", []))))
    con.print(t)
