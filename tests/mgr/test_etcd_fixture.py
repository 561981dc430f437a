"""The etcd the tests run: one member or three, a quorum that survives one
member's loss, leases that expire."""
from __future__ import annotations

import time

from pando_testing.etcd import EtcdCluster


def test_one_member_stores_and_reads_back(etcd: EtcdCluster) -> None:
    c = etcd.client()
    c.put("/pando/test/a", b"1")
    c.put("/pando/test/b", b"2")
    assert c.get("/pando/test/a") == b"1"
    assert c.get_prefix("/pando/test/") == {"/pando/test/a": b"1", "/pando/test/b": b"2"}
    assert c.get("/pando/test/missing") is None


def test_three_members_keep_serving_with_one_killed(etcd3: EtcdCluster) -> None:
    c = etcd3.client()
    c.put("/pando/test/k", b"before")
    etcd3.members[0].kill9()
    c.put("/pando/test/k", b"after")
    assert c.get("/pando/test/k") == b"after"
    etcd3.members[0].start()
    one = etcd3.client()
    one.urls = [etcd3.members[0].client_url]
    one.wait_for(lambda cl: cl.get("/pando/test/k") == b"after", what="member caught up")


def test_a_leased_key_goes_when_its_lease_is_not_kept(etcd: EtcdCluster) -> None:
    c = etcd.client()
    lease = int(c.call("/v3/lease/grant", {"TTL": 2})["ID"])
    c.put("/pando/test/alive", b"x", lease=lease)
    t0 = time.monotonic()
    c.wait_for(lambda cl: cl.get("/pando/test/alive") is None, timeout=10, what="lease expiry")
    assert 1.5 < time.monotonic() - t0 < 6
