"""The cluster map (mgr/README.md, "The cluster map") and its state
machine, as pure functions: each takes a map and what was observed and
returns a new map (epoch + 1, who, why) or None when nothing changes.
Nothing here talks to etcd, so every transition is unit-testable."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

ADDR_RE = re.compile(r"^[A-Za-z0-9._\-\[\]:]+:\d{1,5}$")
# The C side's rule (common/cluster_map.c, cluster_map_pool_name_ok); its
# map parser refuses a whole map with an OSD pool that breaks it.
POOL_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,30}")
POOL_NAME_RULE = ("1 to 31 of a-z, 0-9, '-' and '_', not starting with '-' or '_', "
                  "and not 'default'")


def pool_name_ok(v: Any) -> bool:
    """Whether v names a pool (POOL_NAME_RULE); "" (no pool) does not."""
    return isinstance(v, str) and POOL_NAME_RE.fullmatch(v) is not None and v != "default"


class MapError(ValueError):
    """A change refused: status is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Osd:
    id: int
    ctl: str
    nfs: str
    advertise: str = ""
    weight: int = 0
    domain: str = ""
    pool: str = ""                  # the named pool it is in; "": none
    up: bool = False
    in_: bool = True
    down_at: float = 0
    out_at: float = 0
    # Weight taken from the OSD's own statfs (no capacity configured).
    weight_auto: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("id", "ctl", "nfs", "advertise", "weight", "domain", "pool", "up", "in",
              "down_at", "out_at", "weight_auto")

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Osd:
        return cls(id=int(d["id"]), ctl=str(d.get("ctl", "")), nfs=str(d.get("nfs", "")),
                   advertise=str(d.get("advertise", "")), weight=int(d.get("weight", 0)),
                   domain=str(d.get("domain", "")), pool=str(d.get("pool", "")),
                   up=bool(d.get("up", False)),
                   in_=bool(d.get("in", True)), down_at=float(d.get("down_at", 0)),
                   out_at=float(d.get("out_at", 0)),
                   weight_auto=bool(d.get("weight_auto", False)),
                   extra={k: v for k, v in d.items() if k not in cls._KNOWN})

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "ctl": self.ctl, "nfs": self.nfs,
                             "advertise": self.advertise or self.nfs,
                             "weight": self.weight, "domain": self.domain,
                             "pool": self.pool, "up": self.up, "in": self.in_,
                             "down_at": self.down_at, "out_at": self.out_at}
        if self.weight_auto:
            d["weight_auto"] = True
        d.update(self.extra)
        return d


@dataclass
class ClusterMap:
    epoch: int = 0
    partition: int = 1
    osds: list[Osd] = field(default_factory=list)
    pools: list[dict[str, Any]] = field(default_factory=list)
    updated_at: float = 0
    updated_by: str = ""
    reason: str = ""
    # Removed OSD id -> etcd revision of the removal: a presence key made
    # before it is not the OSD coming back, so it is not added again.
    removed: dict[int, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("epoch", "partition", "osds", "pools", "updated_at", "updated_by",
              "reason", "removed")

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ClusterMap:
        return cls(epoch=int(d.get("epoch", 0)), partition=int(d.get("partition", 1)),
                   osds=sorted((Osd.from_json(o) for o in d.get("osds", [])),
                               key=lambda o: o.id),
                   pools=list(d.get("pools", [])),
                   updated_at=float(d.get("updated_at", 0)),
                   updated_by=str(d.get("updated_by", "")), reason=str(d.get("reason", "")),
                   removed={int(k): int(v) for k, v in d.get("removed", {}).items()},
                   extra={k: v for k, v in d.items() if k not in cls._KNOWN})

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"epoch": self.epoch, "partition": self.partition,
                             "osds": [o.to_json() for o in sorted(self.osds, key=lambda o: o.id)],
                             "pools": self.pools, "updated_at": self.updated_at,
                             "updated_by": self.updated_by, "reason": self.reason}
        if self.removed:
            d["removed"] = {str(k): v for k, v in sorted(self.removed.items())}
        d.update(self.extra)
        return d

    def osd(self, osd_id: int) -> Osd | None:
        return next((o for o in self.osds if o.id == osd_id), None)


@dataclass(frozen=True)
class Presence:
    """An `osd/<id>` key: its value and the revision that created it."""
    id: int
    value: dict[str, Any]
    create_revision: int = 0

    def statfs(self, name: str) -> int:
        s = self.value.get("statfs", {})
        return int(s.get(name, 0)) if isinstance(s, dict) else 0


@dataclass(frozen=True)
class Settings:
    name: str                       # this mgr, for updated_by
    down_out_interval: float = 600.0
    # After this mgr reaches etcd again, presence keys may be missing only
    # because etcd expired every lease when it came back from the outage
    # (3.4 does, at once): no OSD is marked down until the OSDs have had
    # this long to register again (pando-osd retries every second and
    # renews every TTL/4: measured within 2 s).
    presence_grace: float = 4.0


DEFAULT_POOLS = [{"name": "default", "scheme": "mirror", "copies": 2, "stripe_unit": 1048576}]


def _next(m: ClusterMap, now: float, by: str, reasons: list[str]) -> ClusterMap:
    m.epoch += 1
    m.updated_at = now
    m.updated_by = by
    m.reason = "; ".join(reasons)
    return m


def _addresses(p: Presence) -> tuple[str, str, str]:
    v = p.value
    nfs = str(v.get("nfs", ""))
    return str(v.get("ctl", "")), nfs, str(v.get("advertise", "") or nfs)


def _presence_pool(p: Presence) -> str | None:
    """The pool an OSD's presence says it is in ("": none); None when it
    says nothing (no "pool": a pando-osd from before pools) or names no
    pool, which the map must never hold."""
    v = p.value.get("pool")
    return v if v == "" or pool_name_ok(v) else None


def _pool_text(pool: str) -> str:
    return pool or '""'


def _observe(o: Osd, p: Presence | None, now: float, s: Settings,
             hold_down: bool) -> list[str]:
    """Moves one OSD along down/up/out from its presence; what changed."""
    why: list[str] = []
    if o.up and p is None and not hold_down:
        o.up, o.down_at = False, now
        why.append(f"osd.{o.id} down: presence lease expired")
    elif not o.up and p is not None:
        o.up, o.down_at = True, 0
        why.append(f"osd.{o.id} up: presence seen")
    if (not o.up and o.in_ and o.down_at > 0
            and now - o.down_at >= s.down_out_interval):
        o.in_, o.out_at = False, now
        why.append(f"osd.{o.id} out: down for {now - o.down_at:.0f}s "
                   f"(down-out-interval {s.down_out_interval:g}s)")
    if p is not None:
        ctl, nfs, adv = _addresses(p)
        if ctl and nfs and (ctl, nfs, adv) != (o.ctl, o.nfs, o.advertise or o.nfs):
            o.ctl, o.nfs, o.advertise = ctl, nfs, adv
            why.append(f"osd.{o.id} addresses now ctl={ctl} nfs={nfs} advertise={adv}")
        total = p.statfs("bytes_total")
        if o.weight_auto and total > 0 and o.weight != total:
            o.weight = total
            why.append(f"osd.{o.id} weight {total} from its statfs")
        pool = _presence_pool(p)
        if pool is not None and pool != o.pool:
            why.append(f"osd.{o.id} pool {_pool_text(pool)} (was {_pool_text(o.pool)})")
            o.pool = pool
    return why


def _discover(m: ClusterMap, p: Presence, now: float) -> str | None:
    """Adds an OSD that announced itself; None when it is not new."""
    if m.osd(p.id) is not None or p.id <= 0:
        return None
    if p.id in m.removed and p.create_revision <= m.removed[p.id]:
        return None
    ctl, nfs, adv = _addresses(p)
    if not ctl or not nfs:
        return None
    m.removed.pop(p.id, None)
    pool = _presence_pool(p) or ""
    m.osds.append(Osd(id=p.id, ctl=ctl, nfs=nfs, advertise=adv,
                      weight=p.statfs("bytes_total"), domain=str(p.value.get("domain", "")),
                      pool=pool, up=True, in_=True, weight_auto=True))
    m.osds.sort(key=lambda o: o.id)
    why = f"osd.{p.id} added: presence seen at {nfs}"
    if pool:
        why += f" in pool {pool}"
    elif p.value.get("pool", ""):
        why += f", pool name {str(p.value['pool'])[:40]!r} ignored as invalid"
    return why


def step(cur: ClusterMap, presence: dict[int, Presence], now: float,
         s: Settings, hold_down: bool = False) -> ClusterMap | None:
    """The map after observing presence at time now, or None if unchanged.
    hold_down: a missing presence key marks nobody down (presence_grace)."""
    m = copy.deepcopy(cur)
    why: list[str] = []
    for o in m.osds:
        why += _observe(o, presence.get(o.id), now, s, hold_down)
    for p in sorted(presence.values(), key=lambda p: p.id):
        added = _discover(m, p, now)
        if added:
            why.append(added)
    return _next(m, now, s.name, why) if why else None


def _need(cur: ClusterMap, osd_id: int) -> tuple[ClusterMap, Osd]:
    m = copy.deepcopy(cur)
    o = m.osd(osd_id)
    if o is None:
        raise MapError(404, f"no such OSD: {osd_id}")
    return m, o


def mark_out(cur: ClusterMap, osd_id: int, now: float, by: str) -> ClusterMap | None:
    m, o = _need(cur, osd_id)
    if not o.in_:
        return None
    o.in_, o.out_at = False, now
    return _next(m, now, by, [f"osd.{osd_id} out: by command"])


def mark_in(cur: ClusterMap, osd_id: int, now: float, by: str) -> ClusterMap | None:
    m, o = _need(cur, osd_id)
    if o.in_:
        return None
    o.in_, o.out_at = True, 0
    return _next(m, now, by, [f"osd.{osd_id} in: by command"])


def bump(cur: ClusterMap, now: float, by: str, reason: str) -> ClusterMap:
    """The same map one epoch on, for a request recorded with the map (a
    rebuild asked by command takes that epoch as its job id)."""
    return _next(copy.deepcopy(cur), now, by, [reason])


def _check_addr(what: str, v: Any) -> str:
    if not isinstance(v, str) or not ADDR_RE.match(v) or not 0 < int(v.rsplit(":", 1)[1]) < 65536:
        raise MapError(400, f"{what} must be \"HOST:PORT\", got {v!r}")
    return v


def _check_pool(v: Any) -> str:
    if v != "" and not pool_name_ok(v):
        raise MapError(400, f"pool must be a pool name ({POOL_NAME_RULE}) or \"\", got {v!r}")
    return v


def add_osd(cur: ClusterMap, req: Any, now: float, by: str) -> tuple[ClusterMap, Osd]:
    """An OSD added by command from {"id"?, "ctl", "nfs", "advertise"?,
    "domain"?, "weight"?, "pool"?}; it is down until its presence appears."""
    if not isinstance(req, dict):
        raise MapError(400, "expected a JSON object")
    unknown = set(req) - {"id", "ctl", "nfs", "advertise", "domain", "weight", "pool"}
    if unknown:
        raise MapError(400, f"unknown fields: {', '.join(sorted(unknown))}")
    m = copy.deepcopy(cur)
    osd_id = req.get("id")
    if osd_id is None:
        osd_id = max((o.id for o in m.osds), default=0) + 1
    if isinstance(osd_id, bool) or not isinstance(osd_id, int) or not 0 < osd_id < 2**32:
        raise MapError(400, f"id must be an integer in 1..2^32-1, got {osd_id!r}")
    if m.osd(osd_id) is not None:
        raise MapError(409, f"osd.{osd_id} is already in the map")
    ctl, nfs = _check_addr("ctl", req.get("ctl")), _check_addr("nfs", req.get("nfs"))
    adv = _check_addr("advertise", req["advertise"]) if req.get("advertise") else nfs
    domain = req.get("domain", "")
    if not isinstance(domain, str):
        raise MapError(400, "domain must be a string")
    weight = req.get("weight")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int)
                               or weight < 0):
        raise MapError(400, f"weight must be a non-negative integer, got {weight!r}")
    pool = _check_pool(req.get("pool", ""))
    o = Osd(id=osd_id, ctl=ctl, nfs=nfs, advertise=adv, weight=weight or 0, domain=domain,
            pool=pool, up=False, in_=True, weight_auto=weight is None)
    m.osds.append(o)
    m.osds.sort(key=lambda x: x.id)
    m.removed.pop(osd_id, None)
    why = f"osd.{osd_id} added by command" + (f" in pool {pool}" if pool else "")
    return _next(m, now, by, [why]), o


def remove_osd(cur: ClusterMap, osd_id: int, presence: Presence | None, force: bool,
               now: float, by: str, revision: int) -> ClusterMap:
    """Removal refused (409) unless the OSD is out and holds no objects;
    force skips the object check. revision: the store's, recorded so the
    OSD's current presence key does not bring it back."""
    m, o = _need(cur, osd_id)
    if o.in_:
        raise MapError(409, f"osd.{osd_id} is in: mark it out first")
    if not force:
        if presence is None:
            raise MapError(409, f"osd.{osd_id} is not present, so whether it holds "
                                "objects is unknown (force=1 to remove anyway)")
        n = presence.statfs("objects")
        if n > 0:
            raise MapError(409, f"osd.{osd_id} still holds {n} objects")
    m.osds = [x for x in m.osds if x.id != osd_id]
    m.removed[osd_id] = revision
    return _next(m, now, by, [f"osd.{osd_id} removed by command"])


def parse_seed(text: str, now: float, by: str) -> ClusterMap:
    """Epoch 1 from a cluster.conf (ganesha-fsal/osdio/cluster_conf.h):
    every OSD down and in until its presence appears."""
    m = ClusterMap(epoch=0, pools=copy.deepcopy(DEFAULT_POOLS))
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            _seed_line(m, line)
        except (ValueError, KeyError, MapError) as e:
            raise ValueError(f"line {n}: {e}: {raw.strip()!r}") from None
    m.osds.sort(key=lambda o: o.id)
    return _next(m, now, by, ["seeded from cluster.conf"])


def seed_map(text: str, presence: dict[int, Presence], now: float, s: Settings) -> ClusterMap:
    """Epoch 1 from a cluster.conf with the presence read in the same poll
    observed: OSDs already present are up in the first map a manager
    takes, which must never leave it nowhere to place a file."""
    m = parse_seed(text, now, s.name)
    stepped = step(m, presence, now, s)
    if stepped is None:
        return m
    stepped.epoch, stepped.reason = m.epoch, f"{m.reason}; {stepped.reason}"
    return stepped


def _seed_line(m: ClusterMap, line: str) -> None:
    if "=" in line and not line.startswith("osd "):
        k, v = (x.strip() for x in line.split("=", 1))
        if k == "partition":
            m.partition = int(v)
        elif k != "key_file":
            raise ValueError(f"unknown setting {k}")
        return
    words = line.split()
    if words[0] != "osd" or len(words) < 2:
        raise ValueError("expected 'osd ID ctl=H:P nfs=H:P ...'")
    osd_id = int(words[1])
    opts = dict(w.split("=", 1) for w in words[2:])
    unknown = set(opts) - {"ctl", "nfs", "advertise", "capacity", "pool"}
    if unknown:
        raise ValueError(f"unknown option {', '.join(sorted(unknown))}")
    if m.osd(osd_id) is not None:
        raise ValueError(f"osd {osd_id} listed twice")
    cap = int(opts.get("capacity", 0))
    nfs = _check_addr("nfs", opts["nfs"])
    pool = opts.get("pool", "")
    if "pool" in opts and not pool_name_ok(pool):
        raise ValueError(f"pool {pool!r} is not a pool name ({POOL_NAME_RULE})")
    m.osds.append(Osd(id=osd_id, ctl=_check_addr("ctl", opts["ctl"]), nfs=nfs,
                      advertise=opts.get("advertise", nfs), weight=cap, pool=pool,
                      up=False, in_=True, weight_auto=cap == 0))
