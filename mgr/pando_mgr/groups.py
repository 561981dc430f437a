"""Manager groups (ganesha-fsal/README.md, "Manager groups"): what the
mgr reads of `groups/<group>/active`, `groups/<group>/members/<name>`,
`groups/<group>/held/<name>`, `groups/<group>/snapshot` and the
journal's segments `journal/<group>/<index>`, how the API and /metrics
show it, and the planned switchover it asks for with
`groups/<group>/handover`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .osdmap import MapError

# Mds_Group: at most 63 bytes, no '/' (the FSAL's limits); the API takes
# only names it could have made.
GROUP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,63}")
# How long the active keeps the journal for a member that is down
# (ganesha-fsal/mds/held.h, PANDO_HELD_KEEP_S).
HELD_KEEP_S = 3600


@dataclass
class Group:
    """A manager group: its active (None: none now) and term (the active
    key's create revision), every member's key by name, every member's
    held record (which outlives its key) by name, its snapshot (index,
    seq, bytes, at; None: none listed) and its journal's segments (the
    seq of each one's first record, by index)."""
    active: str | None = None
    term: int = 0
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    held: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshot: dict[str, int] | None = None
    segments: dict[int, int] = field(default_factory=dict)

    def journal_from(self) -> int | None:
        """The seq of the journal's first record (None: no segment)."""
        return self.segments[min(self.segments)] if self.segments else None

    def snapshot_followed(self) -> bool:
        """Whether the journal holds every record after the snapshot, so
        that a group whose every store is lost starts again from the two
        (the FSAL's group_snapshot_get asks the same)."""
        first = self.journal_from()
        return self.snapshot is not None and (first is None or first <= self.snapshot["seq"] + 1)

    def down(self, now: float) -> list[str]:
        """Members with a held record younger than HELD_KEEP_S and no key:
        down, and the journal kept for them until they come back."""
        return sorted(n for n, h in self.held.items()
                      if n not in self.members and now - h["at"] <= HELD_KEEP_S)

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


def view(groups: dict[str, Group], now: float) -> list[dict[str, Any]]:
    """Each group: its active, term, when the active took over, number of
    standbys, members with their role, seq and lag, members down (the seq
    their store holds, and when they last said so), its snapshot, and its
    journal (segments listed, the seq of the first record)."""
    out = []
    for name, g in sorted(groups.items()):
        members = [{"name": n, "role": m.get("role"), "seq": m.get("seq"), "lag": g.lag(n)}
                   for n, m in sorted(g.members.items())]
        down = [{"name": n, "seq": g.held[n]["seq"], "at": g.held[n]["at"]} for n in g.down(now)]
        out.append({"name": name, "active": g.active, "term": g.term, "since": g.since(),
                    "standbys": sum(m["role"] == "standby" for m in members),
                    "members": members, "down": down, "snapshot": g.snapshot,
                    "journal": {"segments": len(g.segments), "first_seq": g.journal_from()}})
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
