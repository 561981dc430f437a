"""The named pools the map's OSDs are in (mgr/README.md, "The cluster
map"): each pool's OSDs, those up and in, and their space, as /api/df,
/metrics and health show them.  Pure."""
from __future__ import annotations

from dataclasses import dataclass, field

from .osdmap import ClusterMap, Presence


@dataclass
class NamedPool:
    name: str
    osds: list[int] = field(default_factory=list)     # ids of the map's OSDs in it
    up: list[int] = field(default_factory=list)       # of those, up and in
    # Their presence's statfs summed, raw: an OSD without presence adds
    # nothing, and a file's protection within the pool is its directory's
    # policy, not the pool's.
    total: int = 0
    free: int = 0


def named_pools(m: ClusterMap | None, presence: dict[int, Presence]) -> list[NamedPool]:
    """A NamedPool per pool the map's OSDs are in, by name."""
    pools: dict[str, NamedPool] = {}
    for o in (m.osds if m else []):
        if not o.pool:
            continue
        pool = pools.setdefault(o.pool, NamedPool(o.pool))
        pool.osds.append(o.id)
        if o.up and o.in_:
            pool.up.append(o.id)
        p = presence.get(o.id)
        if p is not None:
            pool.total += p.statfs("bytes_total")
            pool.free += p.statfs("bytes_free")
    return [pools[n] for n in sorted(pools)]
