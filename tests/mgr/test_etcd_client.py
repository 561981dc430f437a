"""pando_mgr.etcd, the mgr's asyncio client, against real etcd 3.4: what
the JSON gateway answers for txns, leases and members, and endpoints
tried in turn."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from pando_mgr.etcd import (Etcd, EtcdError, EtcdUnavailable, cmp_create, cmp_mod, cmp_value,
                            op_get, op_put)
from pando_testing.etcd import EtcdCluster
from pando_testing.pod import Pod

T = TypeVar("T")


def run(pod: Pod, urls: list[str], fn: Callable[[Etcd], Awaitable[T]]) -> T:
    """fn(client) on an event loop inside the pod."""
    async def go() -> T:
        e = Etcd(urls, timeout=1.0)
        try:
            return await fn(e)
        finally:
            await e.close()
    return pod.call_inside(lambda: asyncio.run(go()))


def test_txn_creates_only_when_absent_and_compares_revisions(pod: Pod,
                                                             etcd: EtcdCluster) -> None:
    async def body(e: Etcd) -> None:
        ok, resp = await e.txn([cmp_create("/t/k", 0)], [op_put("/t/k", b"one")],
                               [op_get("/t/k")])
        assert ok
        ok, resp = await e.txn([cmp_create("/t/k", 0)], [op_put("/t/k", b"two")],
                               [op_get("/t/k")])
        assert not ok and resp[0]["response_range"]["kvs"][0]["value"] == "b25l"
        kv = await e.get("/t/k")
        assert kv is not None and kv.value == b"one" and kv.create_revision > 0
        assert (await e.txn([cmp_mod("/t/k", kv.mod_revision)], [op_put("/t/k", b"3")]))[0]
        assert not (await e.txn([cmp_mod("/t/k", kv.mod_revision)], [op_put("/t/k", b"4")]))[0]
        assert (await e.txn([cmp_value("/t/k", b"3")], [op_put("/t/k", b"5")]))[0]
        assert (await e.txn([cmp_mod("/t/absent", 0)], []))[0]
        await e.put("/t/other", b"x")
        kvs, rev = await e.get_prefix("/t/")
        assert [k.key for k in kvs] == ["/t/k", "/t/other"] and rev >= kv.mod_revision + 3
        await e.delete("/t/other")
        assert await e.get("/t/other") is None
    run(pod, [etcd.members[0].client_url], body)


def test_a_lease_keeps_its_keys_until_revoked_and_keepalive_says_when_it_is_gone(
        pod: Pod, etcd: EtcdCluster) -> None:
    async def body(e: Etcd) -> None:
        lease = await e.lease_grant(5)
        await e.put("/t/leased", b"v", lease)
        assert await e.lease_keepalive(lease) == 5
        kv = await e.get("/t/leased")
        assert kv is not None and kv.lease == lease
        await e.lease_revoke(lease)
        assert await e.get("/t/leased") is None
        assert await e.lease_keepalive(lease) == 0
        await e.lease_revoke(lease)                     # gone already: not an error
        with pytest.raises(EtcdError) as exc:
            await e.put("/t/x", b"v", lease)
        assert not isinstance(exc.value, EtcdUnavailable) and exc.value.code == 5
    run(pod, [etcd.members[0].client_url], body)


def test_dead_endpoints_are_skipped_and_members_report_their_health(
        pod: Pod, etcd3: EtcdCluster) -> None:
    etcd3.members[0].kill9()
    urls = [m.client_url for m in etcd3.members]

    async def body(e: Etcd) -> list[dict[str, Any]]:
        # If etcd1 led, writes wait for the other two to elect a leader
        # (about an election timeout, 1 s here): retried, as the mgr does.
        for _ in range(20):
            try:
                await e.put("/t/k", b"v")
                break
            except EtcdUnavailable:
                await asyncio.sleep(0.25)
        kv = await e.get("/t/k")
        assert kv is not None and kv.value == b"v"
        return await e.members()
    members = run(pod, urls, body)
    assert sorted((m["name"], m["healthy"]) for m in members) == [
        ("etcd1", False), ("etcd2", True), ("etcd3", True)]
    etcd3.members[0].start()
    one = etcd3.client()          # ready before teardown's SIGTERM
    one.urls = [etcd3.members[0].client_url]
    one.wait_healthy()


def test_no_endpoint_answering_is_etcd_unavailable(pod: Pod) -> None:
    async def body(e: Etcd) -> None:
        with pytest.raises(EtcdUnavailable, match="no etcd endpoint answered"):
            await e.get("/t/k")
    run(pod, ["http://127.0.0.1:2399", "http://127.0.0.1:2398"], body)
