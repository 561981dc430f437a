"""The mgr's list of etcd members (for status and the ETCD_QUORUM check):
one failed ask blanks it only until the next ask, a second later, not for
the whole period between asks.  Against a stand-in for the etcd client."""
from __future__ import annotations

import asyncio
from typing import Any, cast

from pando_mgr import manager, osdmap
from pando_mgr.etcd import Etcd, EtcdUnavailable

MEMBER = {"name": "a", "url": "https://10.77.0.1:2379", "healthy": True}


class FlakyMembers:
    """members() fails its first `failures` calls, then lists MEMBER."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def members(self) -> list[dict[str, Any]]:
        self.calls += 1
        if self.calls <= self.failures:
            raise EtcdUnavailable("timed out")
        return [MEMBER]


async def _listed_after(etcd: FlakyMembers, seconds: float) -> list[dict[str, Any]]:
    m = manager.Manager(cast(Etcd, etcd), "/pando/", "m1", "http://127.0.0.1:1", 2.0,
                        osdmap.Settings(name="m1"))
    stop = asyncio.Event()
    task = asyncio.create_task(m.members_loop(stop))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return m.etcd_members


def test_one_failed_ask_is_retried_within_about_a_second() -> None:
    etcd = FlakyMembers(failures=1)
    assert asyncio.run(_listed_after(etcd, manager.MEMBERS_RETRY_S + 0.5)) == [MEMBER]
    assert etcd.calls == 2


def test_a_listed_cluster_is_asked_again_only_every_period() -> None:
    etcd = FlakyMembers(failures=0)
    assert asyncio.run(_listed_after(etcd, manager.MEMBERS_RETRY_S + 0.5)) == [MEMBER]
    assert etcd.calls == 1
