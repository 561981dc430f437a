"""Health checks (mgr/README.md: codes as Ceph's where one exists) from the
map, the OSD and metadata-manager presence and etcd's members.  Pure."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from .osdmap import ClusterMap, Presence
from .pools import named_pools
from .units import size

SEVERITY_RANK = {"HEALTH_OK": 0, "HEALTH_WARN": 1, "HEALTH_ERR": 2}


@dataclass
class Check:
    code: str
    severity: str                  # HEALTH_WARN | HEALTH_ERR
    summary: str
    detail: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "summary": self.summary,
                "detail": self.detail}


@dataclass(frozen=True)
class FullRatios:
    """The share of an OSD's file system in use past which it is nearfull
    (WARN) and full (ERR), as Ceph's mon_osd_nearfull_ratio and
    mon_osd_full_ratio: pando-mgr --nearfull-ratio and --full-ratio."""
    nearfull: float = 0.85
    full: float = 0.95


def _osd_checks(m: ClusterMap, presence: dict[int, Presence], ratios: FullRatios) -> list[Check]:
    out: list[Check] = []
    down = [o for o in m.osds if not o.up]
    if down:
        out.append(Check("OSD_DOWN", "HEALTH_WARN", f"{len(down)} osds down",
                         [f"osd.{o.id} ({o.nfs}) is down" for o in down]))
    gone = [o for o in m.osds if not o.in_]
    if gone:
        out.append(Check("OSD_OUT", "HEALTH_WARN", f"{len(gone)} osds out",
                         [f"osd.{o.id} is out" for o in gone]))
    full, near = [], []
    for p in sorted(presence.values(), key=lambda p: p.id):
        total, free = p.statfs("bytes_total"), p.statfs("bytes_free")
        if total <= 0:
            continue
        used = (total - free) / total
        line = f"osd.{p.id} is {used:.0%} full"
        if used > ratios.full:
            full.append(line)
        elif used > ratios.nearfull:
            near.append(line)
    if full:
        out.append(Check("OSD_FULL", "HEALTH_ERR", f"{len(full)} full osds", full))
    if near:
        out.append(Check("OSD_NEARFULL", "HEALTH_WARN", f"{len(near)} nearfull osds", near))
    return out


# OSDs up and in that a pool needs for a mirrored file (the export's
# default, 2 copies) to be placed in it: placement puts no two components
# of a file on one OSD.
POOL_MIN_UP = 2


def _pool_checks(m: ClusterMap, presence: dict[int, Presence]) -> list[Check]:
    """A file whose directory's policy names a pool is placed on that
    pool's OSDs only: with none up and in, moving it to objects fails
    with ENOSPC (ganesha-fsal/README.md, "Storage policies"), as in a
    full cluster; with one, so does any shape wider than one OSD."""
    out: list[Check] = []
    pools = named_pools(m, presence)
    dead = [p for p in pools if not p.up]
    if dead:
        out.append(Check("POOL_NO_OSD_UP", "HEALTH_ERR",
                         f"{len(dead)} pools with no osd up and in",
                         [f"pool {p.name}: no osd up and in (of {_osds(p.osds)}): "
                          "its files cannot be placed (ENOSPC)" for p in dead]))
    thin = [p for p in pools if 0 < len(p.up) < POOL_MIN_UP]
    if thin:
        out.append(Check("POOL_DEGRADED", "HEALTH_WARN",
                         f"{len(thin)} pools with fewer than {POOL_MIN_UP} osds up and in",
                         [f"pool {p.name}: only {_osds(p.up)} up and in (of {_osds(p.osds)}): "
                          f"a file on {POOL_MIN_UP} or more osds (a mirror) cannot be placed"
                          for p in thin]))
    return out


def _osds(ids: list[int]) -> str:
    return ", ".join(f"osd.{i}" for i in ids)


def _mds_checks(mds: dict[str, dict[str, Any]]) -> list[Check]:
    if not mds:
        return [Check("MDS_DOWN", "HEALTH_ERR", "no metadata manager is present",
                      ["no mds/<name> presence key in etcd"])]
    out: list[Check] = []
    degraded = {n: int(v.get("degraded", 0) or 0) for n, v in mds.items()}
    total = sum(degraded.values())
    if total > 0:
        out.append(Check("FILES_DEGRADED", "HEALTH_WARN",
                         f"{total} files degraded",
                         [f"mds {n}: {d} files with a stale component"
                          for n, d in sorted(degraded.items()) if d]))
    failed = sorted(n for n, v in mds.items()
                    if v.get("store_failed") or v.get("store") == "failed")
    if failed:
        out.append(Check("MDS_STORE_FAILED", "HEALTH_ERR",
                         f"{len(failed)} metadata stores failed",
                         [f"mds {n}: metadata store failed" for n in failed]))
    return out


# Percent of a quota limit from which QUOTA_NEARFULL warns.  Not the
# OSDs' NEARFULL/FULL: a full OSD is a share of raw space, a quota is
# exact (the store refuses the very byte or inode past it: EDQUOT), so
# QUOTA_FULL is the limit itself.
QUOTA_NEARFULL_PCT = 90
QUOTA_LIMITS: tuple[tuple[str, Callable[[int], str]], ...] = (
    ("bytes", size), ("files", lambda n: f"{n:,}"))


def _quota_checks(mds: dict[str, dict[str, Any]]) -> list[Check]:
    """A manager's export at its quota refuses writes that grow a file
    (bytes) or creates (files) with EDQUOT.  Managers that send no quota
    (older ones) raise nothing; a limit of 0 is none."""
    full, near = [], []
    for n, v in sorted(mds.items()):
        q = v.get("quota")
        if not isinstance(q, dict):
            continue
        for what, fmt in QUOTA_LIMITS:
            limit, used = q[what], q[f"used_{what}"]
            if not limit:
                continue
            # Floored, so a limit not yet reached never reads 100%.
            line = f"{n}: {what} {fmt(used)} of {fmt(limit)} ({100 * used // limit}%)"
            if used >= limit:
                full.append(line)
            elif 100 * used >= QUOTA_NEARFULL_PCT * limit:
                near.append(line)
    out: list[Check] = []
    if full:
        out.append(Check("QUOTA_FULL", "HEALTH_ERR",
                         f"{len(full)} quota limits reached (EDQUOT)", full))
    if near:
        out.append(Check("QUOTA_NEARFULL", "HEALTH_WARN",
                         f"{len(near)} quota limits nearly reached", near))
    return out


class GroupView(Protocol):
    """A manager group as the mgr read it (manager.Group)."""
    active: str | None
    members: dict[str, dict[str, Any]]
    held: dict[str, dict[str, Any]]
    snapshot: dict[str, int] | None

    def down(self, now: float) -> list[str]: ...

    def since(self) -> int | None: ...

    def journal_from(self) -> int | None: ...

    def snapshot_followed(self) -> bool: ...


SNAPSHOT_DUE_S = 3600


def _group_checks(groups: Mapping[str, GroupView], now: float) -> list[Check]:
    """A group with no active stops its file system until a standby takes
    over (a lease at most); one with no standby would stop it for good
    when its active goes; a member down keeps the journal from being
    trimmed (for an hour), and is one copy of the namespace fewer."""
    out: list[Check] = []
    down = [(n, d) for n, g in sorted(groups.items()) for d in g.down(now)]
    if down:
        out.append(Check("MDS_GROUP_MEMBER_DOWN", "HEALTH_WARN",
                         f"{len(down)} manager group members down",
                         [f"group {n}: {d} down since "
                          f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(groups[n].held[d]['at']))}"
                          f" UTC, its store at seq {groups[n].held[d]['seq']}"
                          for n, d in down]))
    inactive = sorted(n for n, g in groups.items() if g.active is None and g.members)
    if inactive:
        out.append(Check("MDS_GROUP_NO_ACTIVE", "HEALTH_ERR",
                         f"{len(inactive)} manager groups have no active manager",
                         [f"group {n}: no active manager; members "
                          + ", ".join(sorted(groups[n].members)) for n in inactive]))
    alone = sorted(n for n, g in groups.items() if g.active is not None and not any(
        m.get("role") == "standby" for m in g.members.values()))
    if alone:
        out.append(Check("MDS_GROUP_NO_STANDBY", "HEALTH_WARN",
                         f"{len(alone)} manager groups have no standby",
                         [f"group {n}: active {groups[n].active}, no standby follows its journal"
                          for n in alone]))
    return out + _snapshot_checks(groups, now)


def _snapshot_checks(groups: Mapping[str, GroupView], now: float) -> list[Check]:
    """A group whose every store is lost starts again from its snapshot and
    the journal after it (ganesha-fsal/mds/group_snapshot.h).  With none
    listed an hour after its active took over (the active makes one every
    Snapshot_Interval, 15 min by default), or one the journal no longer
    follows, it could not."""
    out: list[Check] = []
    none = sorted(n for n, g in groups.items() if g.active is not None and g.snapshot is None
                  and now - (g.since() or now) > SNAPSHOT_DUE_S)
    if none:
        out.append(Check("MDS_GROUP_NO_SNAPSHOT", "HEALTH_WARN",
                         f"{len(none)} manager groups have no snapshot",
                         [f"group {n}: no snapshot listed an hour after {groups[n].active} took"
                          " over: were every member's store lost, the group could not start again"
                          for n in none]))
    behind = sorted(n for n, g in groups.items()
                    if g.snapshot is not None and not g.snapshot_followed())
    if behind:
        out.append(Check("MDS_GROUP_SNAPSHOT_BEHIND", "HEALTH_WARN",
                         f"{len(behind)} manager groups have a snapshot the journal no longer follows",
                         [_behind(n, groups[n]) for n in behind]))
    return out


def _behind(name: str, g: GroupView) -> str:
    snap = g.snapshot or {}
    return (f"group {name}: snapshot {snap.get('index')} holds up to seq {snap.get('seq')},"
            f" the journal starts at seq {g.journal_from()}: were every member's store lost,"
            " the group could not start again")


def _scrub_checks(scrub: dict[str, dict[str, Any]]) -> list[Check]:
    """Ceph's OSD_SCRUB_ERRORS: extents scrub found wrong and could not
    repair (no good copy left to repair them from)."""
    bad = {n: _count(v.get("unrepairable")) for n, v in scrub.items()}
    total = sum(bad.values())
    if total <= 0:
        return []
    return [Check("OSD_SCRUB_ERRORS", "HEALTH_ERR", f"{total} scrub errors",
                  [f"mds {n}: scrub found {c} unrepairable mismatches"
                   for n, c in sorted(bad.items()) if c > 0])]


def _count(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _etcd_checks(reachable: bool, members: list[dict[str, Any]]) -> list[Check]:
    if not reachable:
        return [Check("ETCD_QUORUM", "HEALTH_ERR", "etcd is unreachable",
                      ["no etcd endpoint answered; the state shown may be stale"])]
    sick = [m for m in members if not m.get("healthy")]
    if sick:
        return [Check("ETCD_QUORUM", "HEALTH_WARN",
                      f"{len(sick)} of {len(members)} etcd members down",
                      [f"etcd member {m.get('name')} ({m.get('url')}) is not healthy"
                       for m in sick])]
    return []


MALFORMED_DETAIL = 10    # lines: the keys are whoever wrote them's, so bounded


def _malformed_checks(malformed: list[tuple[str, str, str]]) -> list[Check]:
    """Values the mgr skipped (values.py); ERR when the map is one of them:
    nothing can change it until it is fixed."""
    if not malformed:
        return []
    severity = "HEALTH_ERR" if any(k == "map" for k, _, _ in malformed) else "HEALTH_WARN"
    detail = [f"{key[:200]}: {why}" for _, key, why in malformed[:MALFORMED_DETAIL]]
    if len(malformed) > MALFORMED_DETAIL:
        detail.append(f"... and {len(malformed) - MALFORMED_DETAIL} more")
    return [Check("ETCD_MALFORMED", severity,
                  f"{len(malformed)} malformed values in etcd skipped", detail)]


def checks(m: ClusterMap | None, presence: dict[int, Presence], mds: dict[str, dict[str, Any]],
           etcd_reachable: bool, members: list[dict[str, Any]],
           scrub: dict[str, dict[str, Any]] | None = None,
           malformed: list[tuple[str, str, str]] | None = None,
           groups: Mapping[str, GroupView] | None = None,
           now: float | None = None, ratios: FullRatios = FullRatios()) -> list[Check]:
    """scrub: each metadata manager's `scrub/progress/<name>`; malformed:
    the (kind, key, why) of each value the last read skipped; groups: the
    manager groups by name; now: unix time (None: the clock's); ratios:
    when an OSD is nearfull and full."""
    out: list[Check] = _malformed_checks(malformed or [])
    if m is None and not any(k == "map" for k, _, _ in malformed or []):
        out.append(Check("MAP_MISSING", "HEALTH_WARN", "no cluster map yet",
                         ["the leading mgr writes it from --seed or from OSD presence"]))
    elif m is not None:
        out += _osd_checks(m, presence, ratios) + _pool_checks(m, presence)
    out += _mds_checks(mds) + _quota_checks(mds)
    out += _group_checks(groups or {}, time.time() if now is None else now)
    out += _scrub_checks(scrub or {})
    out += _etcd_checks(etcd_reachable, members)
    return out


def overall(cs: list[Check]) -> str:
    worst = "HEALTH_OK"
    for c in cs:
        if SEVERITY_RANK[c.severity] > SEVERITY_RANK[worst]:
            worst = c.severity
    return worst
