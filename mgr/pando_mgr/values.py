"""Typed parsing of the values the mgr reads from etcd (mgr/README.md,
"Keys in etcd").

Whoever reaches etcd can write any key (it has no authentication yet), and
a daemon with a bug can put a wrong value: every value is checked against
the shape of the README before the mgr uses it.  One that does not fit
raises Malformed; the caller skips it, and Skipped counts it per kind of
key (/metrics) and logs it at most once a minute per kind, so a flood of
bad keys neither fills the log nor stops failure detection for the rest.
Fields a reader does not know are kept and never checked."""
from __future__ import annotations

import logging
import math
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .osdmap import ADDR_RE, ClusterMap, Presence, pool_name_ok
from .rebuild import REASONS, Job

log = logging.getLogger("pando_mgr.values")

# The kinds of key (the label of pando_mgr_etcd_malformed_total: bounded).
KINDS = ("map", "osd", "mds", "leader", "member", "job", "progress", "scrub_request",
         "group_active", "group_member", "group_held", "group_snapshot", "journal_segment")
LOG_EVERY_S = 60.0
URL_MAX = 256

Check = Callable[[Any], bool]


class Malformed(ValueError):
    """A value that is not what its key holds; the message says why."""


def _uint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _map_hex(v: Any) -> bool:
    """A storage map as the journal's etcd values carry it: lowercase hex,
    within the FSAL's bound on a value (JOURNAL_VALUE_MAX)."""
    return (isinstance(v, str) and 0 < len(v) <= 65536 and len(v) % 2 == 0
            and all(c in "0123456789abcdef" for c in v))


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _addr(v: Any) -> bool:
    """HOST:PORT, or "" (not known yet)."""
    return isinstance(v, str) and (v == "" or (ADDR_RE.match(v) is not None
                                               and 0 < int(v.rsplit(":", 1)[1]) < 65536))


def _pool(v: Any) -> bool:
    """"" (none) or a pool name: what pando-osd puts, and all the C map
    parser takes (it refuses a whole map with another)."""
    return v == "" or pool_name_ok(v)


def _dict_of(check: Check) -> Check:
    return lambda v: isinstance(v, dict) and all(check(x) for x in v.values())


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _object(spec: dict[str, Check]) -> Check:
    return lambda v: isinstance(v, dict) and _bad_field(v, spec) is None


def _record(spec: dict[str, Check]) -> Check:
    """_object with every field of spec present: its readers take them all."""
    return lambda v: _object(spec)(v) and all(n in v for n in spec)


def mgr_url(v: Any) -> bool:
    """http(s)://HOST:PORT and nothing else (no user, path, query): what a
    follower may redirect a client, and its token, to."""
    if not isinstance(v, str) or len(v) > URL_MAX:
        return False
    try:
        parts = urllib.parse.urlsplit(v)
        port = parts.port
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and port is not None and port > 0
            and ADDR_RE.match(parts.netloc) is not None and parts.path in ("", "/")
            and not parts.query and not parts.fragment and not v.endswith(("?", "#")))


def _bad_field(val: dict[str, Any], spec: dict[str, Check]) -> str | None:
    for name, check in spec.items():
        if name in val and not check(val[name]):
            return f"{name} is {str(val[name])[:40]!r}"
    return None


def _fields(val: Any, spec: dict[str, Check], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """val when it is a JSON object whose fields in spec have their type."""
    if not isinstance(val, dict):
        raise Malformed("not a JSON object")
    missing = [n for n in required if n not in val]
    if missing:
        raise Malformed(f"no {', '.join(missing)}")
    bad = _bad_field(val, spec)
    if bad:
        raise Malformed(bad)
    return val


PRESENCE: dict[str, Check] = {"id": _uint, "ctl": _addr, "nfs": _addr, "advertise": _addr, "domain": _str,
            "pool": _pool, "pid": _uint, "host": _str, "started_at": _num, "time": _num,
            "statfs": _dict_of(_uint), "counters": _dict_of(_uint)}


def presence(osd_id: int, val: Any, create_revision: int) -> Presence:
    """An `osd/<id>` value; its id, when it says one, is the key's."""
    v = _fields(val, PRESENCE)
    if "id" in v and v["id"] != osd_id:
        raise Malformed(f"id {v['id']} in the key of osd.{osd_id}")
    return Presence(osd_id, v, create_revision)


MDS_OP: dict[str, Check] = {"count": _uint, "sum": _num, "buckets": _list_of(_uint)}
# The export's quota (ganesha-fsal/README.md, "Quotas"; 0: no limit).
MDS_QUOTA: dict[str, Check] = {n: _uint for n in ("bytes", "files", "used_bytes", "used_files")}
MDS: dict[str, Check] = {"name": _str, "nfs": _str, "pid": _uint, "time": _num, "epoch": _uint,
       "clients": _uint, "layouts": _uint, "recalls": _uint, "fences": _uint,
       "degraded": _uint, "gateway_read_bytes": _uint, "gateway_write_bytes": _uint,
       "store_failed": _bool, "store": _str, "op_bounds": _list_of(_num),
       "ops": _dict_of(_object(MDS_OP)), "quota": _record(MDS_QUOTA)}


def mds(val: Any) -> dict[str, Any]:
    """An `mds/<name>` value."""
    return _fields(val, MDS)


MAP_OSD: dict[str, Check] = {"id": lambda v: _uint(v) and 0 < v < 2**32, "ctl": _addr, "nfs": _addr,
           "advertise": _addr, "weight": _uint, "domain": _str, "pool": _pool, "up": _bool,
           "in": _bool, "down_at": _num, "out_at": _num, "weight_auto": _bool}
POOL: dict[str, Check] = {"name": _str, "scheme": _str, "copies": _uint, "stripe_unit": _uint}
MAP: dict[str, Check] = {"epoch": _uint, "partition": _uint,
       "osds": _list_of(lambda o: _object(MAP_OSD)(o) and "id" in o),
       "pools": _list_of(_object(POOL)), "updated_at": _num, "updated_by": _str,
       "reason": _str,
       "removed": lambda v: _dict_of(_uint)(v) and all(k.isdigit() for k in v)}


def cluster_map(val: Any) -> ClusterMap:
    """The `map` value."""
    return ClusterMap.from_json(_fields(val, MAP))


MGR: dict[str, Check] = {"name": _str, "url": mgr_url, "since": _num}


def mgr(val: Any) -> dict[str, Any]:
    """`mgr/leader` or `mgr/members/<name>`: a URL is one a client may be
    sent to (mgr_url)."""
    return _fields(val, MGR, required=("name", "url"))


JOB: dict[str, Check] = {"id": _uint, "osd": lambda v: _uint(v) and v > 0,
       "reason": lambda v: v in REASONS, "target": lambda v: v is None or _uint(v),
       "created": _num, "by": _str}


def job(key_id: str, val: Any) -> Job:
    """A `rebuild/jobs/<id>` value; the key's id wins over the value's."""
    if not key_id.isdigit():
        raise Malformed(f"job id {key_id[:40]!r} is not a number")
    return Job.from_json({**_fields(val, JOB, required=("osd",)), "id": int(key_id)})


PROGRESS: dict[str, Check] = {"state": _str, "jobs_done": _list_of(_uint), "jobs_active": _list_of(_uint),
            **{n: _num for n in (
                "files_total", "files_done", "files_failed", "bytes_total", "bytes_done",
                "rate_bps", "eta_s", "started", "updated", "parallel", "bandwidth_bps",
                "pass", "mismatches", "repaired", "unrepairable", "last_pass_end",
                "passes", "failed", "retried", "current_ino", "interval_s")}}


def progress(val: Any) -> dict[str, Any]:
    """A `<kind>/progress/<mds>` value (rebuild, scrub, transcode)."""
    return _fields(val, PROGRESS)


GROUP_ACTIVE: dict[str, Check] = {"name": _str}
GROUP_MEMBER: dict[str, Check] = {"name": _str, "role": lambda v: v in ("active", "standby"),
                                  "seq": _uint, "term": _uint, "since": _uint}


def group_active(val: Any) -> dict[str, Any]:
    """A `groups/<group>/active` value: the active manager's name."""
    return _fields(val, GROUP_ACTIVE, required=("name",))


def group_member(val: Any) -> dict[str, Any]:
    """A `groups/<group>/members/<name>` value: its role, the last
    journal record its store holds and, for the active, when it took over
    (`since`, unix time)."""
    return _fields(val, GROUP_MEMBER, required=("role", "seq"))


GROUP_HELD: dict[str, Check] = {"seq": lambda v: _uint(v) and v > 0, "at": _uint}


def group_held(val: Any) -> dict[str, Any]:
    """A `groups/<group>/held/<name>` value, kept without a lease: the
    last journal record the member's store holds, and when it said so
    (unix time)."""
    return _fields(val, GROUP_HELD, required=("seq", "at"))


SCRUB_REQUEST: dict[str, Check] = {"id": _uint, "action": lambda v: v in ("start", "stop"), "time": _num}


GROUP_SNAPSHOT: dict[str, Check] = {"index": lambda v: _uint(v) and v > 0, "seq": _uint,
                                    "bytes": _uint, "at": _uint, "map": _map_hex}
JOURNAL_SEGMENT: dict[str, Check] = {"index": _uint, "term": _uint, "first_seq": _uint,
                                     "map": _map_hex}


def group_snapshot(val: Any) -> dict[str, Any]:
    """A `groups/<group>/snapshot` value: the snapshot a member with no
    store starts from (ganesha-fsal/mds/group_snapshot.h), without its map."""
    v = _fields(val, GROUP_SNAPSHOT, required=tuple(GROUP_SNAPSHOT))
    return {n: v[n] for n in ("index", "seq", "bytes", "at")}


def journal_segment(index_hex: str, val: Any) -> tuple[int, int]:
    """A `journal/<group>/<index, 16 hex digits>` value: the segment's
    index and the seq of its first record (ganesha-fsal/mds/journal.h)."""
    v = _fields(val, JOURNAL_SEGMENT, required=tuple(JOURNAL_SEGMENT))
    if index_hex != f"{v['index']:016x}":
        raise Malformed(f"index {v['index']} in the key of segment {index_hex[:20]!r}")
    return v["index"], v["first_seq"]


def scrub_request(val: Any) -> dict[str, Any]:
    """The `scrub/request` value."""
    return _fields(val, SCRUB_REQUEST, required=("id", "action"))


@dataclass
class Skipped:
    """Malformed values skipped since the mgr started: a count per kind of
    key, and a log line per kind at most every LOG_EVERY_S."""
    log_every: float = LOG_EVERY_S
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    _logged: dict[str, float] = field(default_factory=dict)

    def record(self, kind: str, key: str, why: str, now: float | None = None) -> None:
        t = time.monotonic() if now is None else now
        self.counts[kind] += 1
        last = self._logged.get(kind)
        if last is None or t - last >= self.log_every:
            self._logged[kind] = t
            log.warning("skipping %s: %s (malformed %s values are skipped; this is "
                        "logged at most once a minute per kind of key)", key[:200], why, kind)
