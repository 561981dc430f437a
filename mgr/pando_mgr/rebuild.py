"""Rebuild jobs and scrub requests (mgr/README.md, "Rebuild and scrub"),
as pure functions: which jobs a map change makes or cancels, which jobs
are done, the summaries the API serves.  The etcd I/O is manager.py's.

Jobs are written in the same txn as the map write that asks for them (an
OSD taken out, a rebuild requested), so a leader that dies between the
two cannot lose a job, and a new leader, which sees the map already
changed, cannot make a second one for the same out event."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .osdmap import ClusterMap, MapError
from .progress import num as _num
from .progress import sums

REASONS = ("out", "admin")


@dataclass(frozen=True)
class Job:
    id: int                         # the map epoch that asked for it
    osd: int
    reason: str                     # "out" | "admin"
    target: int | None = None       # rebuild onto this OSD; None: declustered placement
    created: float = 0.0
    by: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Job:
        t = d.get("target")
        return cls(id=int(d["id"]), osd=int(d["osd"]), reason=str(d.get("reason", "out")),
                   target=None if t is None else int(t), created=float(d.get("created", 0)),
                   by=str(d.get("by", "")))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "osd": self.osd, "reason": self.reason, "target": self.target,
                "created": self.created, "by": self.by}


def _osd_in(m: ClusterMap | None, osd_id: int) -> bool | None:
    o = m.osd(osd_id) if m else None
    return None if o is None else o.in_


def out_jobs(old: ClusterMap | None, new: ClusterMap, jobs: dict[int, Job], now: float,
             by: str) -> list[Job]:
    """The jobs the write old -> new makes: one per OSD it takes out,
    unless a job for that OSD is already active (an admin rebuild asked
    before the out rebuilds the same components)."""
    busy = {j.osd for j in jobs.values()}
    made = []
    for o in new.osds:
        if not o.in_ and _osd_in(old, o.id) is True and o.id not in busy:
            made.append(Job(id=new.epoch, osd=o.id, reason="out", created=now, by=by))
    return made


def cancelled_jobs(old: ClusterMap | None, new: ClusterMap, jobs: dict[int, Job]) -> list[Job]:
    """The out-jobs the write old -> new cancels: their OSD is in again,
    so its components are where they were (admin jobs stay)."""
    back = {o.id for o in new.osds if o.in_ and _osd_in(old, o.id) is False}
    return [j for j in jobs.values() if j.reason == "out" and j.osd in back]


def done_jobs(jobs: dict[int, Job], mds: dict[str, dict[str, Any]],
              progress: dict[str, dict[str, Any]]) -> list[Job]:
    """Jobs every present metadata manager lists in its progress'
    jobs_done.  None while no manager is present: nobody has run them."""
    if not mds:
        return []
    done: set[int] | None = None
    for name in mds:
        listed = _ints(progress.get(name, {}).get("jobs_done"))
        done = listed if done is None else done & listed
    return [j for j in jobs.values() if done and j.id in done]


def _ints(v: Any) -> set[int]:
    if not isinstance(v, list):
        return set()
    return {int(x) for x in v if isinstance(x, int) and not isinstance(x, bool)}


def check_rebuild(m: ClusterMap, req: Any) -> tuple[int, int | None]:
    """(osd, target) of a POST /api/rebuild body, or MapError: 400 for a
    bad body or target (unknown, down, out, the OSD itself), 404 for an
    OSD not in the map."""
    if not isinstance(req, dict):
        raise MapError(400, "expected a JSON object {\"osd\", \"target\"?}")
    unknown = set(req) - {"osd", "target"}
    if unknown:
        raise MapError(400, f"unknown fields: {', '.join(sorted(unknown))}")
    osd, target = req.get("osd"), req.get("target")
    if isinstance(osd, bool) or not isinstance(osd, int) or not 0 < osd < 2**32:
        raise MapError(400, f"osd must be an OSD id (an integer), got {osd!r}")
    if m.osd(osd) is None:
        raise MapError(404, f"no such OSD: {osd}")
    if target is None:
        return osd, None
    if isinstance(target, bool) or not isinstance(target, int):
        raise MapError(400, f"target must be an OSD id (an integer) or null, got {target!r}")
    t = m.osd(target)
    if t is None:
        raise MapError(400, f"target osd.{target} is not in the map")
    if target == osd:
        raise MapError(400, f"target osd.{target} is the OSD to rebuild")
    if not t.up:
        raise MapError(400, f"target osd.{target} is down")
    if not t.in_:
        raise MapError(400, f"target osd.{target} is out")
    return osd, target


def check_no_active_job(jobs: dict[int, Job], osd: int) -> None:
    active = sorted(j.id for j in jobs.values() if j.osd == osd)
    if active:
        raise MapError(409, f"osd.{osd} already has an active rebuild job "
                            f"({', '.join(map(str, active))})")


# -- summaries -----------------------------------------------------------------
SUMMED = ("files_total", "files_done", "files_failed", "bytes_total", "bytes_done")


def summary(jobs: dict[int, Job], mds: dict[str, dict[str, Any]],
            progress: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """GET /api/rebuild without its history: the FSALs' progress summed.
    eta_s is the slowest busy manager's (they rebuild in parallel); null
    while one has bytes left and no rate yet."""
    busy = {n: p for n, p in progress.items() if p.get("state", "idle") != "idle"}
    out: dict[str, Any] = dict(sums(progress, SUMMED))
    out["rate_bps"] = sum(_num(p.get("rate_bps")) for p in progress.values())
    running = bool(jobs) or bool(busy)
    etas = [_eta(p) for p in busy.values()]
    left = out["bytes_total"] - out["bytes_done"]
    eta: float | None = 0.0
    if None in etas:
        eta = None
    elif etas:
        eta = max(e for e in etas if e is not None)
    elif running and left > 0:
        eta = left / out["rate_bps"] if out["rate_bps"] > 0 else None
    out["eta_s"] = eta
    out["running"] = running
    out["jobs"] = [_job_view(j, mds, progress) for j in sorted(jobs.values(), key=lambda j: j.id)]
    out["mds"] = dict(sorted(progress.items()))
    return out


def _eta(p: dict[str, Any]) -> float | None:
    """One manager's ETA; None (unknown) while it has bytes left and no
    rate yet (the FSAL then says 0)."""
    left = _num(p.get("bytes_total")) - _num(p.get("bytes_done"))
    if left > 0 and _num(p.get("rate_bps")) <= 0:
        return None
    return _num(p.get("eta_s"))


def _job_view(j: Job, mds: dict[str, dict[str, Any]],
              progress: dict[str, dict[str, Any]]) -> dict[str, Any]:
    done_by = sorted(n for n in mds if j.id in _ints(progress.get(n, {}).get("jobs_done")))
    return {**j.to_json(), "done_by": done_by,
            "pending_on": sorted(n for n in mds if n not in done_by)}


SCRUB_SUMMED = ("mismatches", "repaired", "unrepairable", "files_total", "files_done",
                "bytes_done")


def scrub_summary(progress: dict[str, dict[str, Any]],
                  request: dict[str, Any] | None) -> dict[str, Any]:
    """GET /api/scrub: each FSAL's scrub progress and the findings summed."""
    return {"running": any(p.get("state") == "running" for p in progress.values()),
            "mds": dict(sorted(progress.items())), "request": request,
            **sums(progress, SCRUB_SUMMED)}


def scrub_request(action: Any, last: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """The next `scrub/request`: its id one above the last one's."""
    if action not in ("start", "stop"):
        raise MapError(400, f"action must be \"start\" or \"stop\", got {action!r}")
    prev = last.get("id") if isinstance(last, dict) else 0
    prev_id = prev if isinstance(prev, int) and not isinstance(prev, bool) else 0
    return {"id": prev_id + 1, "action": action, "time": now}
