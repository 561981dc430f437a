"""Manager groups (ganesha-fsal/README.md, "Manager groups"): what the
mgr reads of `groups/<group>/active` and `groups/<group>/members/<name>`,
how the API and /metrics show it, and the planned switchover it asks for
with `groups/<group>/handover`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .osdmap import MapError

# Mds_Group: at most 63 bytes, no '/' (the FSAL's limits); the API takes
# only names it could have made.
GROUP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,63}")


@dataclass
class Group:
    """A manager group: its active (None: none now) and term (the active
    key's create revision), and every member's key by name."""
    active: str | None = None
    term: int = 0
    members: dict[str, dict[str, Any]] = field(default_factory=dict)

    def since(self) -> int | None:
        """When the active took over (unix time), as its member key says."""
        since = self.members.get(self.active or "", {}).get("since")
        return int(since) if since else None

    def lag(self, name: str) -> int | None:
        """Journal records member name is behind the active (None for the
        active itself, and when the group has none)."""
        m = self.members.get(name, {})
        top = self.members.get(self.active or "", {}).get("seq")
        if top is None or m.get("role") != "standby":
            return None
        return max(0, int(top) - int(m.get("seq", 0)))


def view(groups: dict[str, Group]) -> list[dict[str, Any]]:
    """Each group: its active, term, when the active took over, number of
    standbys, and members with their role, seq and lag."""
    out = []
    for name, g in sorted(groups.items()):
        members = [{"name": n, "role": m.get("role"), "seq": m.get("seq"), "lag": g.lag(n)}
                   for n, m in sorted(g.members.items())]
        out.append({"name": name, "active": g.active, "term": g.term, "since": g.since(),
                    "standbys": sum(m["role"] == "standby" for m in members),
                    "members": members})
    return out


def handover(groups: dict[str, Group], name: str) -> tuple[str, dict[str, Any]]:
    """The key (relative to the prefix) and value that ask group `name`'s
    active to hand over to a standby; MapError when it cannot: no such
    group, no active, or no standby to take over."""
    if not GROUP_NAME.fullmatch(name):
        raise MapError(400, f"{name!r} is not a group name")
    g = groups.get(name)
    if g is None:
        raise MapError(404, f"no manager group {name}")
    if g.active is None:
        raise MapError(409, f"group {name} has no active to hand over")
    standbys = sorted(n for n, m in g.members.items() if m.get("role") == "standby")
    if not standbys:
        raise MapError(409, f"group {name} has no standby to take over from {g.active}")
    return f"groups/{name}/handover", {"from": g.active, "term": g.term, "standbys": standbys}
