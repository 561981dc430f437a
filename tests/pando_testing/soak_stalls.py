"""How long the soak's writers stalled, fault by fault.

A writer's progress is a list of times (time.monotonic()), one per
operation it completed; a gap is the time between two.  A fault's window
runs from when it went in until every writer went on after it was undone
(the daemon started again, the process resumed, the link or the disk
given back): a manager's restart takes a second, the grace period after
it most of a minute.  A gap belongs to the earliest fault whose window
it overlaps: the fault that stopped the writer, even if a later one came
while it waited.  A
fault's stall is the longest gap of any writer that belongs to it: a
writer that went on at its own pace through the fault has gaps of its
usual length there."""
from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    n: int
    kind: str
    start: float
    end: float

    def overlaps(self, a: float, b: float) -> bool:
        return a <= self.end and b >= self.start


@dataclass(frozen=True)
class Stall:
    seconds: float
    writer: str


def resumed(after: float, writers: Mapping[str, Sequence[float]]) -> float:
    """When every writer had made progress after `after`.  One that never
    did (it ended, or hung: errors the soak reports apart) is left out, or
    it would hold every later fault's window open."""
    firsts = [times[i] for times in writers.values()
              if (i := bisect.bisect_right(times, after)) < len(times)]
    return max(firsts, default=after)


def gaps(times: Sequence[float]) -> list[tuple[float, float]]:
    return list(zip(times, times[1:]))


def owner(windows: Sequence[Window], a: float, b: float) -> Window | None:
    """The earliest window the gap (a, b) overlaps."""
    return next((w for w in sorted(windows, key=lambda w: w.start) if w.overlaps(a, b)), None)


def fault_stalls(windows: Sequence[Window],
                 writers: Mapping[str, Sequence[float]]) -> dict[int, Stall]:
    """Each fault's stall, by its number."""
    out = {w.n: Stall(0.0, "") for w in windows}
    for name, times in writers.items():
        for a, b in gaps(times):
            w = owner(windows, a, b)
            if w is not None and b - a > out[w.n].seconds:
                out[w.n] = Stall(b - a, name)
    return out


def per_kind(windows: Sequence[Window], stalls: dict[int, Stall]) -> dict[str, float]:
    """The longest stall of each kind of fault injected."""
    out: dict[str, float] = {}
    for w in windows:
        out[w.kind] = max(out.get(w.kind, 0.0), stalls[w.n].seconds)
    return out


def longest_outside(windows: Sequence[Window], writers: Mapping[str, Sequence[float]]) -> Stall:
    """The longest gap that overlaps no fault's window: what the writers
    stall with nothing injected (a rebuild's freeze after an OSD went out
    counts here too: it is after that fault's window)."""
    best = Stall(0.0, "")
    for name, times in writers.items():
        for a, b in gaps(times):
            if owner(windows, a, b) is None and b - a > best.seconds:
                best = Stall(b - a, name)
    return best
