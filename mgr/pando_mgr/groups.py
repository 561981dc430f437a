"""Manager groups (ganesha-fsal/README.md, "Manager groups"): what the
mgr reads of `groups/<group>/active` and `groups/<group>/members/<name>`,
and how the API and /metrics show it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Group:
    """A manager group: its active (None: none now) and term (the active
    key's create revision), and every member's key by name."""
    active: str | None = None
    term: int = 0
    members: dict[str, dict[str, Any]] = field(default_factory=dict)

    def lag(self, name: str) -> int | None:
        """Journal records member name is behind the active (None for the
        active itself, and when the group has none)."""
        m = self.members.get(name, {})
        top = self.members.get(self.active or "", {}).get("seq")
        if top is None or m.get("role") != "standby":
            return None
        return max(0, int(top) - int(m.get("seq", 0)))


def view(groups: dict[str, Group]) -> list[dict[str, Any]]:
    """Each group: its active, term, number of standbys, and members with
    their role, seq and lag."""
    out = []
    for name, g in sorted(groups.items()):
        members = [{"name": n, "role": m.get("role"), "seq": m.get("seq"), "lag": g.lag(n)}
                   for n, m in sorted(g.members.items())]
        out.append({"name": name, "active": g.active, "term": g.term,
                    "standbys": sum(m["role"] == "standby" for m in members),
                    "members": members})
    return out
