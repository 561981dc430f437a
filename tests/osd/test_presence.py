"""pando-osd's presence in etcd (mgr/README.md "OSD presence"): the key
osd/<id> under a lease, holding what the target says of itself, gone
within the TTL when the target dies or stops, gone at once on SIGTERM,
back by itself when etcd comes back; and etcd away, down or answering
garbage never keeps the target from serving NFS."""
from __future__ import annotations

import os
import signal
import socket
import threading
import time
from typing import Any, Callable, Iterator

import pytest

from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdClient, EtcdCluster
from pando_testing.nfs3 import NFS3_OK, Nfs3Client
from pando_testing.pod import Pod

TTL = 2
KEY = "/pando/osd/1"
PART = 1


def presence_args(etcd: str, ttl: int = TTL, *extra: str) -> list[str]:
    return ["--etcd", etcd, "--etcd-ttl", str(ttl), "--etcd-interval", "1", *extra]


def wait_key(client: EtcdClient, key: str = KEY, timeout: float = 15.0,
             pred: Callable[[Any], bool] = lambda v: True) -> Any:
    return client.wait_for(lambda c: (lambda v: v if v is not None and pred(v) else None)(
        c.get_json(key)), timeout=timeout, what=f"{key} present")


def wait_gone(client: EtcdClient, key: str = KEY, timeout: float = 15.0) -> float:
    """Seconds until the key is gone."""
    t0 = time.monotonic()
    client.wait_for(lambda c: c.get(key) is None, timeout=timeout, what=f"{key} gone")
    return time.monotonic() - t0


def nfs_write(osd: OsdProcess, oid: int, data: bytes) -> None:
    osd.tool("mkpart", str(PART), check=False)
    osd.tool("create", str(PART), str(oid))
    with Nfs3Client.connect(osd.pod, osd.host, osd.nfs_port) as nfs:
        assert nfs.write(handle_for(osd, PART, oid), 0, data).status == NFS3_OK


def test_presence_key_says_what_the_osd_is(etcd: EtcdCluster,
                                           osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(
        etcd.endpoints, TTL, "--advertise", "10.1.2.3:2049", "--domain", "rack-a"))
    client = etcd.client()
    v = wait_key(client)
    assert v["id"] == 1
    assert v["nfs"] == f"127.0.0.1:{osd.nfs_port}"
    assert v["ctl"] == f"127.0.0.1:{osd.ctl_port}"
    assert v["advertise"] == "10.1.2.3:2049"
    assert v["domain"] == "rack-a"
    assert osd.proc is not None and v["pid"] == osd.proc.pid
    assert v["host"] == socket.gethostname()
    assert abs(v["started_at"] - time.time()) < 60
    assert v["statfs"]["bytes_total"] >= v["statfs"]["bytes_free"] > 0
    assert v["statfs"]["objects"] == 0
    assert v["counters"]["nfs_write_ops"] == 0
    assert set(v["counters"]) >= {"nfs_read_ops", "nfs_read_bytes", "nfs_write_bytes",
                                  "ctl_write_bytes"}
    assert "registered /pando/osd/1 in etcd" in osd.log_text()


def test_presence_counters_and_objects_grow_after_an_nfs_write(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    client = etcd.client()
    first = wait_key(client)
    nfs_write(osd, 7, b"x" * 5000)
    v = wait_key(client, pred=lambda v: v["counters"]["nfs_write_ops"] >= 1)
    assert v["counters"]["nfs_write_bytes"] == 5000
    assert v["statfs"]["objects"] == 1
    assert v["time"] > first["time"]


def test_presence_defaults_advertise_the_nfs_address(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=["--etcd", etcd.endpoints, "--etcd-prefix", "/other/"])
    v = wait_key(etcd.client(), "/other/osd/1")
    assert v["advertise"] == v["nfs"] == f"127.0.0.1:{osd.nfs_port}"
    assert v["domain"] == ""


def test_sigterm_removes_the_key_at_once_and_exits_0(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints, ttl=30))
    client = etcd.client()
    wait_key(client)
    assert osd.stop() == 0
    assert client.get(KEY) is None
    assert "revoked the lease of /pando/osd/1" in osd.log_text()
