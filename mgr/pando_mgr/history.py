"""Throughput from the OSDs' counters: per-OSD rates and the last 10
minutes of cluster-wide samples, in memory.

Rates are counter deltas over the OSD's own clock (the presence `time`),
taken whenever an OSD's presence is refreshed (every etcd_interval, 2 s by
default), so sampling out of step with the OSD gives no 0/2x jitter.  A
counter that went backwards (the OSD restarted) starts a new baseline."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .osdmap import Presence

WINDOW_S = 600.0
SAMPLE_S = 2.0
QUIET_S = 10.0          # an OSD whose presence has not moved for this long: rate 0

READ_BYTES = ("nfs_read_bytes", "ctl_read_bytes")
WRITE_BYTES = ("nfs_write_bytes", "ctl_write_bytes")
READ_OPS = ("nfs_read_ops", "ctl_read_ops")
WRITE_OPS = ("nfs_write_ops", "ctl_write_ops")
ZERO = {"read_bps": 0.0, "write_bps": 0.0, "read_ops": 0.0, "write_ops": 0.0}


def _sum(counters: dict[str, Any], names: tuple[str, ...]) -> int:
    return sum(int(counters.get(n, 0) or 0) for n in names)


def _totals(p: Presence) -> tuple[float, dict[str, int]] | None:
    c = p.value.get("counters")
    t = p.value.get("time")
    if not isinstance(c, dict) or not isinstance(t, (int, float)):
        return None
    return float(t), {"read_bps": _sum(c, READ_BYTES), "write_bps": _sum(c, WRITE_BYTES),
                      "read_ops": _sum(c, READ_OPS), "write_ops": _sum(c, WRITE_OPS)}


@dataclass
class History:
    window_s: float = WINDOW_S
    last: dict[int, tuple[float, dict[str, int]]] = field(default_factory=dict)
    rates: dict[int, dict[str, float]] = field(default_factory=dict)
    samples: deque[dict[str, float]] = field(default_factory=deque)

    def observe(self, presence: dict[int, Presence]) -> None:
        """Updates per-OSD rates from the presence just read."""
        now = time.time()
        for osd_id, p in presence.items():
            cur = _totals(p)
            if cur is None:
                continue
            prev = self.last.get(osd_id)
            if prev is not None and cur[0] > prev[0]:
                dt = cur[0] - prev[0]
                self.rates[osd_id] = {k: max(0, cur[1][k] - prev[1][k]) / dt for k in ZERO}
            if prev is None or cur[0] != prev[0]:
                self.last[osd_id] = cur
        for osd_id in list(self.last):
            if osd_id not in presence or now - self.last[osd_id][0] > QUIET_S:
                self.last.pop(osd_id, None)
                self.rates.pop(osd_id, None)

    def rate(self, osd_id: int) -> dict[str, float]:
        return dict(self.rates.get(osd_id, ZERO))

    def total(self) -> dict[str, float]:
        out = dict(ZERO)
        for r in self.rates.values():
            for k in out:
                out[k] += r[k]
        return out

    def sample(self, now: float | None = None) -> None:
        """Appends the cluster's rates now, dropping what left the window."""
        t = time.time() if now is None else now
        self.samples.append({"t": t, **self.total()})
        while self.samples and self.samples[0]["t"] < t - self.window_s:
            self.samples.popleft()

    def to_json(self) -> list[dict[str, float]]:
        return list(self.samples)


RATE_STEP_S = 1.0       # the FSALs refresh their progress every second


@dataclass
class RateHistory:
    """The rebuild rate (the FSALs' summed rate_bps) over the last 10
    minutes.  Sampled every poll; a sample in the same RATE_STEP_S slot of
    the clock as the last one replaces it, so the window holds one point a
    second (at most 601) whatever --poll."""
    window_s: float = WINDOW_S
    step_s: float = RATE_STEP_S
    samples: deque[dict[str, float]] = field(default_factory=deque)

    def sample(self, rate_bps: float, now: float | None = None) -> None:
        t = time.time() if now is None else now
        point = {"t": t, "rate_bps": float(rate_bps)}
        if self.samples and t // self.step_s == self.samples[-1]["t"] // self.step_s:
            self.samples[-1] = point
        else:
            self.samples.append(point)
        while self.samples and self.samples[0]["t"] < t - self.window_s:
            self.samples.popleft()

    def to_json(self) -> list[dict[str, float]]:
        return list(self.samples)
