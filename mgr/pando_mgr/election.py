"""Leader election on an etcd lease.

Each mgr holds a lease (TTL --lease) kept alive every TTL/4, with its
`mgr/members/<name>` key on it.  Every tick it also runs the campaign txn:
create `mgr/leader` on its lease if the key is absent (create_revision 0),
else read it.  The leader key on our own lease means we lead, and its
create_revision is what every map write compares, so a deposed leader's
writes are refused by etcd itself.  A leader that loses its lease or
cannot reach etcd steps down at once; standbys campaign every tick and as
soon as a poll finds no leader key, so one takes over at most one poll
after the old lease expires."""
from __future__ import annotations

import asyncio
import json
import logging
import time

from .etcd import Etcd, EtcdError, EtcdUnavailable, cmp_create, op_get, op_put, unb64

log = logging.getLogger("pando_mgr.election")


class Election:
    def __init__(self, etcd: Etcd, prefix: str, name: str, url: str, ttl: float) -> None:
        self.etcd = etcd
        self.name = name
        self.url = url
        self.ttl = max(1, round(ttl))
        self.leader_key = prefix + "mgr/leader"
        self.member_key = prefix + "mgr/members/" + name
        self.lease = 0
        self.leader_rev = 0          # our leader key's create_revision; 0: not leader
        self.since = 0.0
        self.unreachable = False     # logged once per outage
        self._lock = asyncio.Lock()  # one round at a time (tick, campaign_now)

    @property
    def is_leader(self) -> bool:
        return self.leader_rev != 0

    def _value(self) -> bytes:
        return json.dumps({"name": self.name, "url": self.url, "since": self.since}).encode()

    def step_down(self, why: str) -> None:
        if self.leader_rev:
            log.info("leader lost: %s", why)
        self.leader_rev = 0

    async def _grant(self) -> None:
        self.lease = await self.etcd.lease_grant(self.ttl)
        self.since = time.time()
        await self.etcd.put(self.member_key, self._value(), self.lease)
        log.info("lease %x granted (ttl %ds), member key %s", self.lease, self.ttl,
                 self.member_key)

    async def _campaign(self) -> None:
        if not self.is_leader:
            self.since = time.time()
        ok, resp = await self.etcd.txn([cmp_create(self.leader_key, 0)],
                                       [op_put(self.leader_key, self._value(), self.lease)],
                                       [op_get(self.leader_key)])
        if ok:
            rev = int(resp[0]["response_put"]["header"]["revision"])
            self.leader_rev = rev
            log.info("leader acquired (lease %x, revision %d)", self.lease, rev)
            return
        kvs = resp[0].get("response_range", {}).get("kvs", []) if resp else []
        if kvs and int(kvs[0].get("lease", 0)) == self.lease:
            rev = int(kvs[0]["create_revision"])
            if rev != self.leader_rev:
                log.info("leader acquired (lease %x, revision %d, key kept)", self.lease, rev)
            self.leader_rev = rev
            return
        if self.is_leader:
            other = unb64(kvs[0].get("value", "")).decode(errors="replace") if kvs else "none"
            self.step_down(f"the leader key is not ours any more (now {other})")

    async def campaign_now(self) -> None:
        """Called when a poll finds no leader key: a standby need not wait
        for its next tick, so takeover costs one poll, not TTL/4."""
        if self.lease and not self.is_leader and not self._lock.locked():
            async with self._lock:
                try:
                    await self._campaign()
                except EtcdError as e:
                    log.debug("campaign: %s", e)

    async def tick(self) -> None:
        """One keepalive and campaign round."""
        async with self._lock:
            await self._tick()

    async def _tick(self) -> None:
        try:
            if not self.lease:
                await self._grant()
            elif await self.etcd.lease_keepalive(self.lease) <= 0:
                self.step_down(f"lease {self.lease:x} expired")
                log.warning("lease %x expired; granting a new one", self.lease)
                self.lease = 0
                await self._grant()
            await self._campaign()
            if self.unreachable:
                log.info("etcd reachable again")
            self.unreachable = False
        except EtcdUnavailable as e:
            self.step_down("etcd unreachable")
            if not self.unreachable:
                log.warning("etcd unreachable, retrying: %s", e)
            self.unreachable = True
        except EtcdError as e:
            self.step_down(f"etcd error: {e}")
            log.warning("election: %s", e)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.tick()
            except Exception:           # a bug: never lead on unchecked state
                self.step_down("internal error")
                log.exception("election tick failed")
            try:
                await asyncio.wait_for(stop.wait(), self.ttl / 4)
            except TimeoutError:
                pass

    async def resign(self) -> None:
        """Revokes the lease: the leader and member keys go at once."""
        self.step_down("stopping")
        if self.lease:
            try:
                await self.etcd.lease_revoke(self.lease)
                log.info("lease %x revoked", self.lease)
            except EtcdError as e:
                log.warning("could not revoke lease %x: %s", self.lease, e)
            self.lease = 0
