"""The mgr's state: what it last read from etcd, and the leader's writes.

Every poll (--poll, 0.25 s) reads the whole prefix but the per-file
rebuild tasks in one txn (map, presence of OSDs and metadata managers,
mgr keys, rebuild jobs and progress, all at one revision); the leader
then runs the state machine (osdmap.step) and writes the result, with
the rebuild jobs the change makes (rebuild.py).  Map writes are one
txn comparing the leader key's create_revision with ours and the map's
mod_revision with the one read (mgr/README.md), so neither a deposed
leader nor a concurrent change is ever overwritten."""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import groups, health, osdmap, progress, rebuild, values
from .groups import Group
from .election import Election
from .etcd import (KV, Etcd, EtcdError, EtcdUnavailable, cmp_create, cmp_mod, op_delete,
                   op_put)
from .history import SAMPLE_S, History, RateHistory
from .osdmap import ClusterMap, MapError, Presence, Settings
from .rebuild import Job

log = logging.getLogger("pando_mgr")

MEMBERS_S = 5.0         # how often etcd members are asked for their health
MEMBERS_RETRY_S = 1.0   # how soon after a failed ask, so one timeout does not blank them for long


class NotLeader(Exception):
    def __init__(self, leader_url: str | None) -> None:
        super().__init__("this mgr is not the leader")
        self.leader_url = leader_url


@dataclass
class Snapshot:
    """What the mgr last read from etcd."""
    map_kv: KV | None = None
    cmap: ClusterMap | None = None
    presence: dict[int, Presence] = field(default_factory=dict)
    mds: dict[str, dict[str, Any]] = field(default_factory=dict)
    leader: dict[str, Any] | None = None
    mgrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[int, Job] = field(default_factory=dict)
    job_revs: dict[int, int] = field(default_factory=dict)      # mod_revision of each job key
    rebuild: dict[str, dict[str, Any]] = field(default_factory=dict)   # progress per mds
    scrub: dict[str, dict[str, Any]] = field(default_factory=dict)      # progress per mds
    scrub_request: dict[str, Any] | None = None
    transcode: dict[str, dict[str, Any]] = field(default_factory=dict)  # progress per mds
    groups: dict[str, Group] = field(default_factory=dict)    # manager groups (Mds_Group)
    revision: int = 0
    read_at: float = 0.0
    # (kind, key, why) of each value left out as malformed (values.py).
    malformed: list[tuple[str, str, str]] = field(default_factory=list)


def _kind(rel: str) -> str | None:
    """The kind of key (values.KINDS) rel is, relative to the prefix; None
    for a key the mgr does not read."""
    if rel == "map":
        return "map"
    if rel.startswith("osd/") and rel[4:].isdigit():
        return "osd"
    if rel.startswith("mds/") and len(rel) > 4:
        return "mds"
    parts = rel.split("/")
    if parts[0] == "groups" and len(parts) == 3 and parts[1] and parts[2] in ("active", "snapshot"):
        return "group_" + parts[2]
    if parts[0] == "journal" and len(parts) == 3 and parts[1] and len(parts[2]) == 16:
        return "journal_segment"
    if parts[0] == "groups" and len(parts) == 4 and parts[1] and parts[3]:
        return {"members": "group_member", "held": "group_held"}.get(parts[2])
    if rel == "mgr/leader":
        return "leader"
    if rel.startswith("mgr/members/") and len(rel) > len("mgr/members/"):
        return "member"
    if rel.startswith(JOBS):
        return "job"
    if progress.parse_key(rel) is not None:
        return "progress"
    return "scrub_request" if rel == "scrub/request" else None


def parse_snapshot(kvs: list[KV], prefix: str, revision: int) -> Snapshot:
    """What kvs hold; a malformed value is left out and listed in
    Snapshot.malformed (a malformed map still sets map_kv: the map exists,
    so it is never seeded over)."""
    s = Snapshot(revision=revision, read_at=time.time())
    for kv in kvs:
        rel = kv.key[len(prefix):]
        kind = _kind(rel)
        if kind is None:
            continue
        if kind == "map":
            s.map_kv = kv
        try:
            _take(s, kind, rel, kv)
        except values.Malformed as e:
            s.malformed.append((kind, kv.key, str(e)))
    return s


def _take(s: Snapshot, kind: str, rel: str, kv: KV) -> None:
    try:
        val = kv.json()
    except ValueError:
        raise values.Malformed("not JSON") from None
    name = rel.rsplit("/", 1)[-1]
    if kind == "map":
        s.cmap = values.cluster_map(val)
    elif kind == "osd":
        s.presence[int(name)] = values.presence(int(name), val, kv.create_revision)
    elif kind == "mds":
        s.mds[rel[4:]] = values.mds(val)
    elif kind == "leader":
        s.leader = values.mgr(val)
    elif kind == "member":
        s.mgrs[rel[len("mgr/members/"):]] = values.mgr(val)
    elif kind == "job":
        j = values.job(rel[len(JOBS):], val)
        s.jobs[j.id], s.job_revs[j.id] = j, kv.mod_revision
    elif kind == "group_active":        # groups/<group>/active
        g = s.groups.setdefault(rel.split("/")[1], Group())
        g.active, g.term = values.group_active(val)["name"], kv.create_revision
    elif kind == "group_member":        # groups/<group>/members/<name>
        s.groups.setdefault(rel.split("/")[1], Group()).members[name] = values.group_member(val)
    elif kind == "group_held":          # groups/<group>/held/<name>
        s.groups.setdefault(rel.split("/")[1], Group()).held[name] = values.group_held(val)
    elif kind == "group_snapshot":      # groups/<group>/snapshot
        s.groups.setdefault(rel.split("/")[1], Group()).snapshot = values.group_snapshot(val)
    elif kind == "journal_segment":     # journal/<group>/<index>
        index, first_seq = values.journal_segment(name, val)
        s.groups.setdefault(rel.split("/")[1], Group()).segments[index] = first_seq
    elif kind == "progress":            # <rebuild|scrub|transcode>/progress/<name>
        per_mds = {"rebuild": s.rebuild, "scrub": s.scrub, "transcode": s.transcode}
        per_mds[rel.split("/", 1)[0]][name] = values.progress(val)
    else:
        s.scrub_request = values.scrub_request(val)


JOBS = "rebuild/jobs/"
TASKS = "rebuild/tasks/"
GROUPS = "groups/"
# What groups.py reads of each group: keys, and subtrees.
GROUP_KEYS = ("active", "snapshot")
GROUP_DIRS = ("members/", "held/")
GROUPS_MAX = 4096


def _after(prefix: str) -> str:
    """The first key past every key that starts with prefix."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def state_ranges(prefix: str, groups: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The whole prefix but the per-file rebuild tasks (one key per file to
    rebuild: thousands, read by the FSALs, not by the mgr) and, of each
    manager group's subtree, only what groups.py reads: the rest holds a
    key per NFSv4 client and NFSv3 host that may reclaim (thousands too)."""
    g = prefix + GROUPS
    out = [(prefix, g), (_after(g), prefix + TASKS), (_after(prefix + TASKS), _after(prefix))]
    for name in groups:
        base = g + name + "/"
        out += [(base + k, base + k + "\0") for k in GROUP_KEYS]
        out += [(base + d, _after(base + d)) for d in GROUP_DIRS]
    return out


async def group_names(etcd: Etcd, prefix: str) -> list[str]:
    """The groups with a key under groups/, one read of one key (no value)
    per group, so the keys under each are never listed here."""
    g = prefix + GROUPS
    names: list[str] = []
    start = g
    while len(names) < GROUPS_MAX:
        key = await etcd.first_key(start, _after(g))
        if key is None:
            break
        name, slash, _ = key[len(g):].partition("/")
        if name and slash:
            names.append(name)
            start = _after(g + name + "/")
        else:
            start = key + "\0" if name else _after(g + "/")
    return names


async def read_state(etcd: Etcd, prefix: str) -> tuple[list[KV], int]:
    """What the mgr reads (state_ranges), at one revision, and that revision."""
    return await etcd.get_ranges(state_ranges(prefix, await group_names(etcd, prefix)))


class Manager:
    def __init__(self, etcd: Etcd, prefix: str, name: str, url: str, lease: float,
                 settings: Settings, seed: Path | None = None, poll: float = 0.25,
                 ratios: health.FullRatios = health.FullRatios()) -> None:
        self.etcd = etcd
        self.prefix = prefix
        self.name = name
        self.url = url
        self.settings = settings
        self.ratios = ratios
        self.seed = seed
        self.poll = poll
        self.map_key = prefix + "map"
        self.election = Election(etcd, prefix, name, url, lease)
        self.snap = Snapshot()
        self.reachable = False
        self.etcd_members: list[dict[str, Any]] = []
        self.history = History()
        self.rate_history = RateHistory()
        self.skipped = values.Skipped()
        self.write_lock = asyncio.Lock()
        self._poll_failed = False
        # When this mgr last reached etcd again after failing to
        # (monotonic; osdmap.Settings.presence_grace), None: no gap yet.
        self._back_since: float | None = None

    # -- reading -----------------------------------------------------------
    async def poll_once(self) -> None:
        try:
            kvs, rev = await read_state(self.etcd, self.prefix)
        except EtcdError as e:
            if not self._poll_failed:
                log.warning("etcd unreachable, serving the last state read: %s", e)
            self._poll_failed, self.reachable = True, False
            return
        if self._poll_failed:
            log.info("etcd reachable again: no OSD is marked down for %gs",
                     self.settings.presence_grace)
            self._back_since = time.monotonic()
        self._poll_failed, self.reachable = False, True
        self.snap = parse_snapshot(kvs, self.prefix, rev)
        for kind, key, why in self.snap.malformed:
            self.skipped.record(kind, key, why)
        self.history.observe(self.snap.presence)
        self.rate_history.sample(self.rebuild_summary()["rate_bps"])
        if self.snap.leader is None:
            await self.election.campaign_now()
        if self.election.is_leader:
            await self.reconcile()
            await self.retire_done_jobs()

    def rebuild_summary(self) -> dict[str, Any]:
        s = self.snap
        return rebuild.summary(s.jobs, s.mds, s.rebuild)

    async def poll_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.poll_once()
            except Exception:           # a bug must not stop failure detection
                log.exception("poll failed")
            await _sleep(stop, self.poll)

    async def sample_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.history.sample()
            await _sleep(stop, SAMPLE_S)

    async def members_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                self.etcd_members = await self.etcd.members()
            except EtcdError as e:
                if self.etcd_members:
                    log.warning("etcd members could not be listed: %s", e)
                self.etcd_members = []
            await _sleep(stop, MEMBERS_S if self.etcd_members else MEMBERS_RETRY_S)

    # -- writing (leader only) ---------------------------------------------
    def job_key(self, job_id: int) -> str:
        return f"{self.prefix}{JOBS}{job_id}"

    async def write_map(self, new: ClusterMap, mod_revision: int,
                        put_jobs: tuple[Job, ...] | list[Job] = (),
                        del_jobs: tuple[Job, ...] | list[Job] = ()) -> bool:
        """The leader txn, with the rebuild jobs the change makes or
        cancels; False when refused (not leader, or the map moved)."""
        if not self.election.is_leader:
            return False
        body = json.dumps(new.to_json(), separators=(",", ":")).encode()
        ops = [op_put(self.map_key, body)]
        ops += [op_put(self.job_key(j.id), json.dumps(j.to_json()).encode()) for j in put_jobs]
        ops += [op_delete(self.job_key(j.id)) for j in del_jobs]
        ok, resp = await self.etcd.txn(
            [cmp_create(self.election.leader_key, self.election.leader_rev),
             cmp_mod(self.map_key, mod_revision)], ops)
        if ok:
            log.info("map epoch %d written: %s", new.epoch, new.reason)
            self._jobs_written(put_jobs, del_jobs)
            # Serve what was written at once, not from the next poll.
            rev = int(resp[0]["response_put"]["header"]["revision"])
            old = self.snap.map_kv
            self.snap.map_kv = KV(self.map_key, body, old.create_revision if old else rev,
                                  rev, 0)
            self.snap.cmap = new
        else:
            log.warning("map epoch %d refused by etcd (leader key or map changed)", new.epoch)
        return ok

    def _jobs_written(self, put_jobs: tuple[Job, ...] | list[Job],
                      del_jobs: tuple[Job, ...] | list[Job]) -> None:
        for j in put_jobs:
            log.info("rebuild job %d: rebuild osd.%d (%s%s)", j.id, j.osd, j.reason,
                     "" if j.target is None else f", onto osd.{j.target}")
            self.snap.jobs[j.id] = j
        for j in del_jobs:
            log.info("rebuild job %d cancelled: osd.%d is in again", j.id, j.osd)
            self.snap.jobs.pop(j.id, None)

    async def retire_done_jobs(self) -> None:
        """Deletes the jobs every present metadata manager lists done."""
        async with self.write_lock:
            s = self.snap
            for j in rebuild.done_jobs(s.jobs, s.mds, s.rebuild):
                if not self.election.is_leader:
                    return
                try:
                    ok, _ = await self.etcd.txn(
                        [cmp_create(self.election.leader_key, self.election.leader_rev),
                         cmp_mod(self.job_key(j.id), s.job_revs.get(j.id, 0))],
                        [op_delete(self.job_key(j.id))])
                except EtcdError as e:
                    log.warning("rebuild job %d: delete failed: %s", j.id, e)
                    return
                if ok:
                    log.info("rebuild job %d (osd.%d, %s) done on every metadata manager "
                             "(%s): deleted", j.id, j.osd, j.reason, ", ".join(sorted(s.mds)))
                    s.jobs.pop(j.id, None)

    async def reconcile(self) -> None:
        async with self.write_lock:
            s = self.snap
            mod = s.map_kv.mod_revision if s.map_kv else 0
            new: ClusterMap | None
            if s.cmap is None and s.map_kv is not None:
                return                  # malformed: left alone, reported (health, metrics)
            try:
                if s.cmap is None:
                    new = self._seed_map(s.presence)
                else:
                    new = osdmap.step(s.cmap, s.presence, time.time(), self.settings,
                                      hold_down=self._holding_down())
                if new is not None:
                    await self.write_map(new, mod, *self._job_changes(s, new))
            except EtcdError as e:
                log.warning("map write failed: %s", e)

    def _job_changes(self, cur: Snapshot, new: ClusterMap) -> tuple[list[Job], list[Job]]:
        """The jobs to put and to delete with the write cur -> new."""
        return (rebuild.out_jobs(cur.cmap, new, cur.jobs, new.updated_at, self.name),
                rebuild.cancelled_jobs(cur.cmap, new, cur.jobs))

    def _holding_down(self) -> bool:
        """True during presence_grace after this mgr reached etcd again: an
        outage longer than the OSDs' lease makes etcd expire every presence
        key at once when it comes back, though their OSDs live on."""
        return (self._back_since is not None
                and time.monotonic() - self._back_since < self.settings.presence_grace)

    def _seed_map(self, presence: dict[int, osdmap.Presence]) -> ClusterMap:
        now = time.time()
        if self.seed is None:
            log.info("no map in etcd and no --seed: starting an empty map")
            m = ClusterMap(pools=list(osdmap.DEFAULT_POOLS))
            m.epoch, m.updated_at, m.updated_by, m.reason = 1, now, self.name, "new cluster"
            return m
        m = osdmap.seed_map(self.seed.read_text(), presence, now, self.settings)
        log.info("seeding the map from %s: %d osds", self.seed, len(m.osds))
        return m

    async def change(self, fn: Callable[[ClusterMap, int], ClusterMap | None],
                     jobs: Callable[[Snapshot, ClusterMap], list[Job]] | None = None
                     ) -> ClusterMap | None:
        """Applies an admin change fn(map, revision) to the map in etcd now,
        with the jobs it makes (jobs(current state, new map): more to put);
        the new map, or None when fn says nothing changes.  Raises
        NotLeader, MapError, EtcdUnavailable."""
        for _ in range(5):
            self._require_leader()
            async with self.write_lock:
                kvs, rev = await read_state(self.etcd, self.prefix)
                cur = parse_snapshot(kvs, self.prefix, rev)
                if cur.map_kv is None:
                    raise MapError(409, "no cluster map yet")
                if cur.cmap is None:
                    raise MapError(409, "the cluster map in etcd is malformed: "
                                        "no change is made to it")
                new = fn(cur.cmap, rev)
                if new is None:
                    return None
                puts, dels = self._job_changes(cur, new)
                puts += jobs(cur, new) if jobs else []
                if await self.write_map(new, cur.map_kv.mod_revision, puts, dels):
                    return new
            await asyncio.sleep(0.05)
        raise MapError(409, "the map kept changing under this request; try again")

    async def rebuild(self, req: Any) -> Job:
        """POST /api/rebuild: an admin job, recorded with a map write (its
        epoch is the job's id, so two requests never share one)."""
        made: list[Job] = []
        now = time.time()

        def fn(m: ClusterMap, _rev: int) -> ClusterMap:
            osd, target = rebuild.check_rebuild(m, req)
            onto = "" if target is None else f" onto osd.{target}"
            return osdmap.bump(m, now, self.name, f"osd.{osd} rebuild{onto}: by command")

        def jobs(cur: Snapshot, new: ClusterMap) -> list[Job]:
            osd, target = rebuild.check_rebuild(new, req)
            rebuild.check_no_active_job(cur.jobs, osd)
            made[:] = [Job(id=new.epoch, osd=osd, reason="admin", target=target, created=now,
                           by=self.name)]
            return made
        await self.change(fn, jobs)
        return made[0]

    async def scrub(self, action: Any) -> dict[str, Any]:
        """POST /api/scrub: the next `scrub/request` (its id one above the
        last), put only while this mgr leads and nobody put another."""
        key = self.prefix + "scrub/request"
        rebuild.scrub_request(action, None, 0)         # 400 before anything else
        for _ in range(5):
            self._require_leader()
            kv = await self.etcd.get(key)
            req = rebuild.scrub_request(action, _last_request(kv), time.time())
            ok, _ = await self.etcd.txn(
                [cmp_create(self.election.leader_key, self.election.leader_rev),
                 cmp_mod(key, kv.mod_revision if kv else 0)],
                [op_put(key, json.dumps(req).encode())])
            if ok:
                log.info("scrub request %d: %s", req["id"], action)
                self.snap.scrub_request = req
                return req
            await asyncio.sleep(0.05)
        raise MapError(409, "scrub/request kept changing under this request; try again")

    async def failover(self, group: str) -> dict[str, Any]:
        """POST /api/groups/<group>/failover: asks the group's active, in
        its term, to hand over (`groups/<group>/handover`); it stops as on
        SIGTERM and a standby takes over.  Put only while this mgr leads."""
        rel, req = groups.handover(self.snap.groups, group)
        self._require_leader()
        ok, _ = await self.etcd.txn(
            [cmp_create(self.election.leader_key, self.election.leader_rev)],
            [op_put(self.prefix + rel, json.dumps({"from": req["from"],
                                                  "term": req["term"]}).encode())])
        if not ok:
            self._require_leader()
            raise MapError(409, "this mgr stopped leading; try again")
        log.info("group %s: handover asked of %s (term %d)", group, req["from"], req["term"])
        return {"group": group, **req}

    def _require_leader(self) -> None:
        if not self.reachable and not self.election.is_leader:
            raise EtcdUnavailable("etcd is unreachable")
        if not self.election.is_leader:
            url = (self.snap.leader or {}).get("url")
            raise NotLeader(url if url and url != self.url else None)

    # -- life --------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(self.election.run(stop), self.poll_loop(stop),
                             self.sample_loop(stop), self.members_loop(stop))

    async def shutdown(self) -> None:
        await self.election.resign()
        await self.etcd.close()


def _last_request(kv: KV | None) -> dict[str, Any] | None:
    """The scrub request in kv; None when absent or malformed (the next
    one then starts over from id 1)."""
    try:
        return values.scrub_request(kv.json()) if kv else None
    except ValueError:                  # not JSON, or values.Malformed
        return None


async def _sleep(stop: asyncio.Event, s: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), s)
    except TimeoutError:
        pass
