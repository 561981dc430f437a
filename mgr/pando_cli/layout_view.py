"""`pando layout get`'s human view: the storage policy of a directory or
file (or the export's defaults it falls back to) and a file's map, as the
FSAL's layout_get JSON gives them (ganesha-fsal/fsal/dbus_layout.c)."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from . import units


def _unit(su: Any) -> str:
    if not su:
        return "export default"
    return f"{units.size(su)} ({su})"


def scheme(p: dict[str, Any]) -> str:
    """'mirror x3', 'raid0', 'rs(8,2)', 'default (mirror x2)'."""
    name = p.get("scheme")
    if name == "default":
        copies = p.get("copies", 1)
        return f"default ({'mirror x' + str(copies) if copies and copies > 1 else 'raid0'})"
    if name == "mirror":
        return f"mirror x{p.get('copies')}"
    if name == "rs":
        k = p.get("k")
        return f"rs({k if k else 'auto'},{p.get('m')})"
    return str(name)


def _width(p: dict[str, Any]) -> str:
    if p.get("scheme") == "rs":
        return "k + m"
    w = p.get("width")
    return str(w) if w else "export default"


def _cold(p: dict[str, Any]) -> str:
    after = p.get("cold_after_s")
    c = p.get("cold")
    cold: dict[str, Any] = c if isinstance(c, dict) else {}
    if not after:
        return "-"
    k = cold.get("k")
    return f"after {units.duration(after)}: rs({k if k else 'auto'},{cold.get('m')})"


def _map(m: Any) -> str:
    if not isinstance(m, dict):
        return "- (inline, or not a file)"
    shape = (f"mirror x{m.get('mirrors')}" if m.get("scheme") == "mirror" else
             f"rs({m.get('k')},{m.get('m')})" if m.get("scheme") == "rs" else
             f"{m.get('scheme')} x{m.get('k')}")
    return (f"{shape}, {m.get('width')} components a group, {m.get('groups')} group(s), "
            f"stripe unit {_unit(m.get('stripe_unit'))}")


def layout(con: Console, j: dict[str, Any]) -> None:
    got = j.get("policy")
    p: dict[str, Any] = got if isinstance(got, dict) else {}
    head = Text(str(j.get("path", "?")) + "\n", style="bold")
    for label, value in (("ino", j.get("ino")), ("type", j.get("type")),
                         ("scheme", scheme(p)), ("stripe_unit", _unit(p.get("stripe_unit"))),
                         ("width", _width(p)), ("cold", _cold(p)),
                         ("pool", p.get("pool") or "- (any OSD)"), ("map", _map(j.get("map")))):
        head.append(f"  {label + ':':<13} {value if value is not None else '-'}\n")
    con.print(head, end="", no_wrap=True, overflow="ignore", crop=False)
