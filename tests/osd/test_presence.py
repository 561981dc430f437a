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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess, osd_binary
from pando_testing.etcd import EtcdClient, EtcdCluster, b64
from pando_testing.nfs3 import NFS3_OK
from pando_testing.pod import Pod
from pando_testing.threads import RaisingThread

TTL = 2
KEY = "/pando/osd/1"
PART = 1


def presence_args(etcd: str, ttl: int = TTL, *extra: str) -> list[str]:
    return ["--etcd", etcd, "--etcd-ttl", str(ttl), "--etcd-interval", "1", *extra]


def wait_key(client: EtcdClient, key: str = KEY, timeout: float = 15.0,
             pred: Callable[[Any], bool] = lambda v: True) -> Any:
    def present(c: EtcdClient) -> Any:
        v = c.get_json(key)
        return v if v is not None and pred(v) else None
    return client.wait_for(present, timeout=timeout, what=f"{key} present")


def wait_gone(client: EtcdClient, key: str = KEY, timeout: float = 15.0) -> float:
    """Seconds until the key is gone."""
    t0 = time.monotonic()
    client.wait_for(lambda c: c.get(key) is None, timeout=timeout, what=f"{key} gone")
    return time.monotonic() - t0


def lease_of(client: EtcdClient, key: str = KEY) -> int:
    kvs = client.call("/v3/kv/range", {"key": b64(key)}).get("kvs", [])
    return int(kvs[0].get("lease", 0)) if kvs else 0


def nfs_write(osd: OsdProcess, oid: int, data: bytes) -> None:
    osd.tool("mkpart", str(PART), check=False)
    osd.tool("create", str(PART), str(oid))
    with osd.nfs3() as nfs:
        assert nfs.write(handle_for(osd, PART, oid), 0, data).status == NFS3_OK


def test_presence_key_says_what_the_osd_is(etcd: EtcdCluster,
                                           osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(
        etcd.endpoints, TTL, "--advertise", "10.1.2.3:2049", "--domain", "rack-a",
        "--pool", "fast"))
    client = etcd.client()
    v = wait_key(client)
    assert v["id"] == 1
    assert v["nfs"] == f"127.0.0.1:{osd.nfs_port}"
    assert v["ctl"] == f"127.0.0.1:{osd.ctl_port}"
    assert v["advertise"] == "10.1.2.3:2049"
    assert v["domain"] == "rack-a"
    assert v["pool"] == "fast"
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
    assert v["domain"] == v["pool"] == ""


def test_sigterm_removes_the_key_at_once_and_exits_0(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints, ttl=30))
    client = etcd.client()
    wait_key(client)
    assert osd.stop() == 0
    assert client.get(KEY) is None
    assert "revoked the lease of /pando/osd/1" in osd.log_text()


def test_killed_osd_leaves_etcd_within_the_ttl(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    client = etcd.client()
    wait_key(client)
    osd.kill9()
    gone = wait_gone(client)
    print(f"osd/1 gone {gone:.2f} s after kill -9 (ttl {TTL} s)")
    assert gone < TTL + 2


def test_stopped_osd_leaves_etcd_and_comes_back_with_a_new_lease_on_sigcont(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    assert osd.proc is not None
    client = etcd.client()
    wait_key(client)
    old = lease_of(client)
    os.kill(osd.proc.pid, signal.SIGSTOP)
    try:
        assert wait_gone(client) < TTL + 2
    finally:
        os.kill(osd.proc.pid, signal.SIGCONT)
    wait_key(client, timeout=5)
    assert lease_of(client) not in (0, old)
    assert "the lease of /pando/osd/1 has expired; granting a new one" in osd.log_text()


def test_osd_registers_again_by_itself_after_etcd_restarts(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    client = etcd.client()
    wait_key(client)
    old = lease_of(client)
    member = etcd.members[0]
    member.kill9()
    time.sleep(TTL + 1)
    nfs_write(osd, 1, b"served while etcd is away")
    member.start()
    client.wait_for(lambda c: lease_of(c) not in (0, old), timeout=15,
                    what="presence under a new lease")
    v = wait_key(client, pred=lambda v: v["counters"]["nfs_write_ops"] == 1)
    assert v["statfs"]["objects"] == 1
    log = osd.log_text()
    assert log.count("lost etcd") == 1, log
    assert "etcd back at http://127.0.0.1:2379" in log


def test_osd_started_while_etcd_is_down_serves_at_once_and_registers_later(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    member = etcd.members[0]
    member.kill9()
    t0 = time.monotonic()
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    nfs_write(osd, 1, b"served before etcd is up")
    assert time.monotonic() - t0 < 5
    assert "lost etcd" in osd.log_text()
    member.start()
    v = wait_key(etcd.client())
    assert v["counters"]["nfs_write_ops"] == 1
    assert "registered /pando/osd/1 in etcd" in osd.log_text()


GARBAGE = [
    b"this is not HTTP\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"header\":",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
]


@pytest.fixture
def garbage_endpoint(pod: Pod) -> Iterator[str]:
    """A TCP server in the pod that answers every request with one of
    GARBAGE in turn, then closes."""
    srv = pod.call_inside(lambda: socket.create_server(("127.0.0.1", 0)))
    stop = threading.Event()

    def serve() -> None:
        n = 0
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(65536)
                    conn.sendall(GARBAGE[n % len(GARBAGE)])
                except OSError:
                    pass
            n += 1

    t = RaisingThread(target=serve, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join()
    srv.close()


def test_an_endpoint_that_answers_garbage_never_stops_the_osd_serving(
        garbage_endpoint: str, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(garbage_endpoint))
    for i in range(5):
        nfs_write(osd, i + 1, b"still serving")
        time.sleep(0.5)
    log = osd.log_text()
    assert log.count("lost etcd") == 1, log
    assert "does not answer as etcd" in log
    assert osd.alive()


def test_sigterm_while_etcd_is_stopped_still_exits_0_within_seconds(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd.endpoints))
    wait_key(etcd.client())
    member = etcd.members[0]
    member.pause()
    try:
        time.sleep(1.5)   # the presence thread is now waiting on a silent etcd
        t0 = time.monotonic()
        assert osd.stop() == 0
        assert time.monotonic() - t0 < 4
    finally:
        member.resume()
    assert "could not revoke the lease of /pando/osd/1" in osd.log_text()


def test_presence_moves_to_another_member_when_its_etcd_dies(
        etcd3: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=presence_args(etcd3.endpoints))
    client = etcd3.client()
    wait_key(client)
    etcd3.members[0].kill9()   # the first endpoint, the one it talks to
    time.sleep(TTL + 1)
    v = wait_key(client, pred=lambda v: v["time"] > time.time() - 1.5)
    assert v["id"] == 1
    assert "registered" in osd.log_text()


def test_presence_settings_come_from_the_config_file_too(
        etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess], tmp_path: Path) -> None:
    conf = tmp_path / "osd.conf"
    conf.write_text(f"etcd = {etcd.endpoints}\netcd_prefix = /c/\netcd_ttl = 3\n"
                    "etcd_interval = 1\nadvertise = 192.0.2.7:20491\ndomain = rack-b\n"
                    "pool = hdd_2\n")
    osd_factory(1, extra_args=["--config", str(conf)])
    v = wait_key(etcd.client(), "/c/osd/1")
    assert (v["advertise"], v["domain"], v["pool"]) == ("192.0.2.7:20491", "rack-b", "hdd_2")


@pytest.mark.parametrize("args, code, message", [
    (["--etcd", "ftp://127.0.0.1:2379"], 1, "not a list of [http[s]://]HOST:PORT endpoints"),
    (["--etcd", "127.0.0.1"], 1, "not a list of [http[s]://]HOST:PORT endpoints"),
    (["--etcd-ttl", "1"], 2, "bad value '1' for etcd_ttl"),
    (["--etcd-interval", "0"], 2, "bad value '0' for etcd_interval"),
    (["--etcd-prefix", "/pando"], 2, "bad value '/pando' for etcd_prefix"),
    (["--advertise", "nohost"], 2, "bad value 'nohost' for advertise"),
    (["--pool", "Fast"], 2, "bad value 'Fast' for pool"),
    (["--pool", "-x"], 2, "bad value '-x' for pool"),
    (["--pool", "a" * 32], 2, "for pool"),
])
def test_bad_presence_settings_stop_the_start_with_a_clear_error(
        osd_factory: Callable[..., OsdProcess], args: list[str], code: int,
        message: str) -> None:
    osd = osd_factory(1, start=False)
    cp = osd.pod.run([osd_binary(), "--osd-id", "1", "--data-dir", osd.data_path,
                      "--key-file", osd.key.path, *args], check=False, timeout=10)
    assert cp.returncode == code
    assert message in cp.stderr
