"""Prometheus text exposition (format 0.0.4), written by hand.

Labels are bounded: kind (values.KINDS, or one of the three kinds of
refusal), osd (an id in the map or in presence), mds (a metadata
manager's name), op (the fixed set of mgr/README.md), proto (nfs|ctl),
le (the FSAL's fixed bounds), group (a manager group's name), pool (a
named pool of the map's OSDs: at most one per OSD, its name checked as
the map was read).  Nothing per client or file."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .health import SEVERITY_RANK
from .manager import Manager
from .pools import NamedPool, named_pools
from .progress import num as _num

MDS_OPS = ("lookup", "getattr", "setattr", "create", "mkdir", "remove", "rename", "readdir",
           "open", "layoutget", "layoutcommit", "layoutreturn", "read", "write", "commit")
PROTOS = ("nfs", "ctl")


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(v: float) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if v == float("inf"):
        return "+Inf"
    return repr(float(v))


class Exposition:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.seen: set[str] = set()

    def family(self, name: str, kind: str, help_: str) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.lines += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"]

    def sample(self, name: str, value: float, **labels: str) -> None:
        lab = ",".join(f'{k}="{_esc(v)}"' for k, v in labels.items())
        self.lines.append(f"{name}{{{lab}}} {_fmt(value)}" if lab else f"{name} {_fmt(value)}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _cluster(e: Exposition, mgr: Manager, health: str) -> None:
    m = mgr.snap.cmap
    e.family("pando_map_epoch", "gauge", "Epoch of the cluster map this mgr read last.")
    e.sample("pando_map_epoch", m.epoch if m else 0)
    e.family("pando_mgr_leader", "gauge", "1 when this mgr leads.")
    e.sample("pando_mgr_leader", int(mgr.election.is_leader), mgr=mgr.name)
    e.family("pando_health_status", "gauge", "0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR.")
    e.sample("pando_health_status", SEVERITY_RANK[health])
    e.family("pando_etcd_reachable", "gauge", "1 when the last etcd read worked.")
    e.sample("pando_etcd_reachable", int(mgr.reachable))
    e.family("pando_mgr_etcd_malformed_total", "counter",
             "Values read from etcd and skipped as malformed, by kind of key (every read "
             "of a bad value counts).")
    for kind, n in mgr.skipped.counts.items():
        e.sample("pando_mgr_etcd_malformed_total", n, kind=kind)


def _osds(e: Exposition, mgr: Manager) -> None:
    m = mgr.snap.cmap
    pres = mgr.snap.presence
    ids = sorted({o.id for o in (m.osds if m else [])} | set(pres))
    states = {o.id: o for o in (m.osds if m else [])}
    gauges = [("pando_osd_up", "1 when the OSD is up in the map."),
              ("pando_osd_in", "1 when the OSD is in."),
              ("pando_osd_weight", "Placement weight in bytes.")]
    for name, help_ in gauges:
        e.family(name, "gauge", help_)
        for i in ids:
            o = states.get(i)
            v = 0 if o is None else (o.up if name == "pando_osd_up" else
                                     o.in_ if name == "pando_osd_in" else o.weight)
            e.sample(name, int(v), osd=str(i))
    for stat, help_ in (("bytes_total", "Capacity in bytes."),
                        ("bytes_free", "Free bytes."), ("objects", "Objects stored.")):
        e.family(f"pando_osd_{stat}", "gauge", help_)
        for i in ids:
            if i in pres:
                e.sample(f"pando_osd_{stat}", pres[i].statfs(stat), osd=str(i))
    for kind in ("read_bytes", "write_bytes", "read_ops", "write_ops"):
        name = f"pando_osd_{kind}_total"
        e.family(name, "counter", f"{kind.replace('_', ' ')} served since the OSD started.")
        for i in ids:
            if i not in pres:
                continue
            c = pres[i].value.get("counters", {})
            for proto in PROTOS:
                v = _int(c.get(f"{proto}_{kind}", 0)) if isinstance(c, dict) else 0
                e.sample(name, v, osd=str(i), proto=proto)
    _refusals(e, mgr, ids)


# What each OSD refused, from the counters in its presence: a capability
# it would not honour (forged, fenced), a control call whose key or MAC
# did not verify, a control call it had seen before.  The OSD counts
# replays among its control denials too; each refusal has one kind here.
def _refusal_kinds(c: dict[str, Any]) -> dict[str, int]:
    denied, replays = _int(c.get("ctl_auth_denied", 0)), _int(c.get("ctl_replays_refused", 0))
    return {"capability": _int(c.get("nfs_err_rejected", 0)),
            "ctl_auth": max(0, denied - replays), "ctl_replay": replays}


def _refusals(e: Exposition, mgr: Manager, ids: list[int]) -> None:
    name = "pando_osd_refused_total"
    e.family(name, "counter", "Calls an OSD refused since it started, by kind.")
    for i in ids:
        pres = mgr.snap.presence.get(i)
        c = pres.value.get("counters", {}) if pres else None
        if not isinstance(c, dict):
            continue
        for kind, n in _refusal_kinds(c).items():
            e.sample(name, n, osd=str(i), kind=kind)


POOL_GAUGES: tuple[tuple[str, str, Callable[[NamedPool], int]], ...] = (
    ("pando_pool_osds", "OSDs the map puts in each named pool.", lambda p: len(p.osds)),
    ("pando_pool_osds_up", "OSDs of each named pool up and in (0: its files cannot be placed).",
     lambda p: len(p.up)),
    ("pando_pool_bytes_total", "Capacity in bytes of each named pool's present OSDs.",
     lambda p: p.total),
    ("pando_pool_bytes_free", "Free bytes of each named pool's present OSDs.",
     lambda p: p.free))


def _pools(e: Exposition, mgr: Manager) -> None:
    named = named_pools(mgr.snap.cmap, mgr.snap.presence)
    for name, help_, value in POOL_GAUGES:
        e.family(name, "gauge", help_)
        for p in named:
            e.sample(name, value(p), pool=p.name)


def _mds_histogram(e: Exposition, name: str, v: dict[str, Any]) -> None:
    bounds = v.get("op_bounds", [])
    ops = v.get("ops", {})
    if not isinstance(bounds, list) or not isinstance(ops, dict):
        return
    for op in MDS_OPS:
        h = ops.get(op)
        if not isinstance(h, dict) or not isinstance(h.get("buckets"), list):
            continue
        buckets = [_int(b) for b in h["buckets"]]
        acc = 0
        for le, n in zip([*bounds, float("inf")], buckets):
            acc += n
            e.sample("pando_mds_op_duration_seconds_bucket", acc, mds=name, op=op,
                     le=_fmt(float(le)))
        e.sample("pando_mds_op_duration_seconds_sum", float(h.get("sum", 0) or 0),
                 mds=name, op=op)
        e.sample("pando_mds_op_duration_seconds_count", _int(h.get("count", acc)),
                 mds=name, op=op)


def _mds(e: Exposition, mgr: Manager) -> None:
    mds = mgr.snap.mds
    for field, kind, help_ in (("layouts", "gauge", "Layouts outstanding."),
                               ("clients", "gauge", "Clients connected."),
                               ("degraded", "gauge", "Files with a stale component."),
                               ("epoch", "gauge", "Map epoch the manager applied."),
                               ("recalls", "counter", "Layout recalls sent."),
                               ("fences", "counter", "Fences (capability bumps)."),
                               ("gateway_read_bytes", "counter", "Bytes read by the gateway."),
                               ("gateway_write_bytes", "counter",
                                "Bytes written by the gateway.")):
        name = f"pando_mds_{field}" + ("_total" if kind == "counter" else "")
        e.family(name, kind, help_)
        for n in sorted(mds):
            e.sample(name, _int(mds[n].get(field, 0)), mds=n)
    e.family("pando_mds_op_duration_seconds", "histogram", "Metadata op latency.")
    for n in sorted(mds):
        _mds_histogram(e, n, mds[n])
    _quota(e, mds)


QUOTA = (("bytes", "The export's quota on regular files' bytes (0: no limit)."),
         ("used_bytes", "Bytes of regular files the quota counts."),
         ("files", "The export's quota on inodes (0: no limit)."),
         ("used_files", "Inodes the quota counts."))


def _quota(e: Exposition, mds: dict[str, dict[str, Any]]) -> None:
    """Only for managers that send a quota (older ones do not); a limit of
    0 is still a sample, so usage shows without a limit."""
    for field, help_ in QUOTA:
        name = f"pando_mds_quota_{field}"
        e.family(name, "gauge", help_)
        for n in sorted(mds):
            q = mds[n].get("quota")
            if isinstance(q, dict):
                e.sample(name, q[field], mds=n)


def _groups(e: Exposition, mgr: Manager) -> None:
    groups = mgr.snap.groups
    e.family("pando_mds_group_term", "gauge",
             "The active's term of each manager group (0: no active).")
    e.family("pando_mds_group_takeover_timestamp_seconds", "gauge",
             "When each group's active took over (unix time).")
    e.family("pando_mds_group_standbys", "gauge", "Standbys following each group's journal.")
    e.family("pando_mds_group_lag_records", "gauge",
             "Journal records a standby is behind its group's active.")
    e.family("pando_mds_group_snapshot_seq", "gauge",
             "The last journal record each group's listed snapshot holds.")
    e.family("pando_mds_group_snapshot_timestamp_seconds", "gauge",
             "When each group's listed snapshot was made (unix time).")
    e.family("pando_mds_group_journal_first_seq", "gauge",
             "The first record each group's journal holds: a snapshot older than it"
             " cannot start the group again.")
    e.family("pando_mds_group_journal_segments", "gauge",
             "Segments each group's journal lists.")
    for name in sorted(groups):
        g = groups[name]
        e.sample("pando_mds_group_term", g.term if g.active else 0, group=name)
        since = g.since()
        if since is not None:
            e.sample("pando_mds_group_takeover_timestamp_seconds", since, group=name)
        e.sample("pando_mds_group_standbys", sum(
            m.get("role") == "standby" for m in g.members.values()), group=name)
        for n in sorted(g.members):
            lag = g.lag(n)
            if lag is not None:
                e.sample("pando_mds_group_lag_records", lag, group=name, mds=n)
        if g.snapshot is not None:
            e.sample("pando_mds_group_snapshot_seq", g.snapshot["seq"], group=name)
            e.sample("pando_mds_group_snapshot_timestamp_seconds", g.snapshot["at"], group=name)
        first = g.journal_from()
        if first is not None:
            e.sample("pando_mds_group_journal_first_seq", first, group=name)
        e.sample("pando_mds_group_journal_segments", len(g.segments), group=name)


REBUILD = (("files_total", "Files the manager's rebuild has to do."),
           ("files_done", "Files rebuilt."),
           ("files_failed", "Files whose rebuild failed."),
           ("bytes_total", "Bytes the manager's rebuild has to copy."),
           ("bytes_done", "Bytes copied by the rebuild."))
SCRUB = (("mismatches", "mismatches", "Mismatched extents scrub found."),
         ("repaired", "repaired", "Mismatched extents scrub repaired from a good copy."),
         ("unrepairable", "unrepairable", "Mismatched extents scrub could not repair."))
TRANSCODE = (("files", "files_done", "Files the transcoder rewrote to RS since the manager "
              "started."),
             ("bytes", "bytes_done", "Bytes the transcoder copied since the manager started."),
             ("failed", "failed", "Files whose transcoding failed since the manager started."))


def _rebuild(e: Exposition, mgr: Manager) -> None:
    prog = mgr.snap.rebuild
    for field, help_ in REBUILD:
        name = f"pando_rebuild_{field}"
        e.family(name, "gauge", help_)
        for n in sorted(prog):
            e.sample(name, _int(prog[n].get(field, 0)), mds=n)
    e.family("pando_rebuild_rate_bytes_per_second", "gauge", "Rebuild copy rate.")
    for n in sorted(prog):
        e.sample("pando_rebuild_rate_bytes_per_second", _num(prog[n].get("rate_bps")), mds=n)
    summary = mgr.rebuild_summary()
    e.family("pando_rebuild_eta_seconds", "gauge",
             "Seconds until the slowest manager's rebuild ends (absent: unknown).")
    if summary["eta_s"] is not None:
        e.sample("pando_rebuild_eta_seconds", float(summary["eta_s"]))
    e.family("pando_rebuild_jobs", "gauge", "Rebuild jobs not yet done everywhere.")
    e.sample("pando_rebuild_jobs", len(summary["jobs"]))


def _scrub(e: Exposition, mgr: Manager) -> None:
    prog = mgr.snap.scrub
    e.family("pando_scrub_files_done", "gauge", "Files checked in the current scrub pass.")
    for n in sorted(prog):
        e.sample("pando_scrub_files_done", _int(prog[n].get("files_done", 0)), mds=n)
    _counters(e, "pando_scrub", prog, SCRUB)


def _counters(e: Exposition, prefix: str, prog: dict[str, dict[str, Any]],
              fields: tuple[tuple[str, str, str], ...]) -> None:
    """<prefix>_<name>_total per manager, from each (name, progress field,
    help)."""
    for metric, field, help_ in fields:
        name = f"{prefix}_{metric}_total"
        e.family(name, "counter", help_)
        for n in sorted(prog):
            e.sample(name, _int(prog[n].get(field, 0)), mds=n)


def render(mgr: Manager, health: str) -> str:
    e = Exposition()
    _cluster(e, mgr, health)
    _osds(e, mgr)
    _pools(e, mgr)
    _mds(e, mgr)
    _groups(e, mgr)
    _rebuild(e, mgr)
    _scrub(e, mgr)
    _counters(e, "pando_transcode", mgr.snap.transcode, TRANSCODE)
    return e.text()
