"""pando-mgr with real pando-osd targets registering themselves in etcd:
killed (kill -9), hung (SIGSTOP) and stopped (SIGTERM) targets are marked
down; a target that comes back is up again; its counters reach /metrics,
what it refused among them."""
from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from mgrtest import osd_in_map
from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.nfs3 import NFS3_OK, NFS3ERR_BADHANDLE
from pando_testing.oncrpc import Auth, RpcDenied
from pando_testing.osdctl import Proc, args_partition, open_ctl

Factory = Callable[..., Any]
TTL = 2


def _osds(etcd: EtcdCluster, osd_factory: Factory, n: int) -> list[OsdProcess]:
    args = ["--etcd", etcd.endpoints, "--etcd-ttl", str(TTL), "--etcd-interval", "1"]
    return [osd_factory(i, extra_args=list(args)) for i in range(1, n + 1)]


def _up(etcd: EtcdCluster, osd_id: int) -> bool | None:
    o = osd_in_map(etcd.client(), osd_id)
    return None if o is None else bool(o["up"])


def _one_osd_with_object(etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory,
                         obj: int) -> tuple[OsdProcess, Any]:
    """osd.1 up in a mgr's map, with object `obj` in partition 1."""
    osd = _osds(etcd, osd_factory, 1)[0]
    api = mgr_factory().api()
    api.wait_for(lambda a: a.osd_states() == {1: (True, True)}, timeout=15, what="osd.1 up")
    osd.tool("mkpart", "1", check=False)
    osd.tool("create", "1", str(obj))
    return osd, api


def test_real_osds_are_added_and_a_killed_one_is_marked_down_within_the_lease(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    osds = _osds(etcd, osd_factory, 3)
    mgr = mgr_factory()
    c = etcd.client()
    c.wait_for(lambda _: all(_up(etcd, i) for i in (1, 2, 3)), timeout=15, what="osds up")
    o2 = osd_in_map(c, 2)
    assert o2 is not None and o2["nfs"] == f"127.0.0.1:{osds[1].nfs_port}"
    assert o2["ctl"] == osds[1].ctl_addr and o2["weight"] > 0
    osds[1].kill9()
    t0 = time.monotonic()
    c.wait_for(lambda _: _up(etcd, 2) is False, timeout=10, what="osd.2 down")
    took = time.monotonic() - t0
    assert took <= TTL + 2, f"down after {took:.1f}s"
    assert _up(etcd, 1) and _up(etcd, 3)
    osds[1].start()
    c.wait_for(lambda _: _up(etcd, 2), timeout=10, what="osd.2 up again")
    assert mgr.starts == 1


def test_a_hung_osd_is_marked_down_and_up_again_when_it_resumes(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    osds = _osds(etcd, osd_factory, 2)
    mgr_factory()
    c = etcd.client()
    c.wait_for(lambda _: _up(etcd, 1) and _up(etcd, 2), timeout=15, what="osds up")
    assert osds[0].proc is not None
    osds[0].proc.send_signal(signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        c.wait_for(lambda _: _up(etcd, 1) is False, timeout=10, what="osd.1 down")
        took = time.monotonic() - t0
    finally:
        osds[0].proc.send_signal(signal.SIGCONT)
    assert took <= TTL + 2, f"down after {took:.1f}s"
    c.wait_for(lambda _: _up(etcd, 1), timeout=10, what="osd.1 up after SIGCONT")


def test_a_stopped_osd_is_down_at_once_and_its_counters_reach_metrics(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    osds = _osds(etcd, osd_factory, 2)
    mgr = mgr_factory()
    c = etcd.client()
    c.wait_for(lambda _: _up(etcd, 1) and _up(etcd, 2), timeout=15, what="osds up")
    text = mgr.api().get("/metrics")
    assert 'pando_osd_read_bytes_total{osd="1",proto="nfs"}' in text
    assert 'pando_osd_bytes_total{osd="2"}' in text
    assert osds[0].stop() == 0
    t0 = time.monotonic()
    c.wait_for(lambda _: _up(etcd, 1) is False, timeout=5, what="osd.1 down")
    assert time.monotonic() - t0 < 1.5


def test_nfs_writes_to_a_real_osd_show_as_its_rate_history_and_counters(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    osd, api = _one_osd_with_object(etcd, osd_factory, mgr_factory, 77)
    chunk = b"p" * 65536
    with osd.nfs3() as nfs:
        fh = handle_for(osd, 1, 77)
        for i in range(3 * 16):             # 3 MiB over ~3 s: two presence refreshes
            assert nfs.write(fh, i * len(chunk), chunk).status == NFS3_OK
            time.sleep(0.06)
    o = api.wait_for(lambda a: (x := a.get("/api/osds")[0])["rates"]["write_bps"] > 0 and x,
                     timeout=10, what="a write rate")
    assert o["rates"]["write_ops"] > 0
    api.wait_for(lambda a: any(h["write_bps"] > 0 for h in a.get("/api/history")), timeout=5,
                 what="a history sample with writes")
    api.wait_for(lambda a: f'pando_osd_write_bytes_total{{osd="1",proto="nfs"}} {48 * 65536}'
                 in a.get("/metrics"), timeout=5, what="all bytes counted")


def test_what_an_osd_refused_reaches_metrics_by_kind(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    osd, api = _one_osd_with_object(etcd, osd_factory, mgr_factory, 78)
    forged = bytearray(handle_for(osd, 1, 78))
    forged[-1] ^= 1
    with osd.nfs3() as nfs:
        assert nfs.write(bytes(forged), 0, b"x").status == NFS3ERR_BADHANDLE
    with open_ctl(osd.pod, osd) as ctl:
        xid = ctl.rpc.next_xid()
        assert ctl.signer is not None
        cred, verf, _ = ctl.signer.sign(xid, Proc.CREATE_PARTITION, args_partition(5))
        ctl.call_raw(Proc.CREATE_PARTITION, args_partition(5), cred=cred, verf=verf, xid=xid)
        for _ in range(2):          # the same call again: a replay
            with pytest.raises(RpcDenied):
                ctl.call_raw(Proc.CREATE_PARTITION, args_partition(5), cred=cred, verf=verf,
                             xid=xid)
        with pytest.raises(RpcDenied):      # a MAC made with no key
            ctl.call_raw(Proc.CREATE_PARTITION, args_partition(6), cred=cred,
                         verf=Auth(verf.flavor, bytes(len(verf.body))))
    want = [f'pando_osd_refused_total{{osd="1",kind="{k}"}} {n}'
            for k, n in (("capability", 1), ("ctl_replay", 2), ("ctl_auth", 1))]
    got: list[str] = []

    def refusals(a: Any) -> bool:
        got[:] = [ln for ln in a.get("/metrics").splitlines() if "refused" in ln]
        return all(w in got for w in want)
    try:
        api.wait_for(refusals, timeout=10, what="the refusals in /metrics")
    except TimeoutError:
        raise AssertionError(f"want {want}, /metrics has {got}") from None


def test_the_pool_an_osds_config_names_reaches_the_map_and_follows_a_restart(
        etcd: EtcdCluster, osd_factory: Factory, mgr_factory: Factory) -> None:
    args = ["--etcd", etcd.endpoints, "--etcd-ttl", str(TTL), "--etcd-interval", "1"]
    fast = osd_factory(1, extra_args=[*args, "--pool", "fast"])
    osd_factory(2, extra_args=list(args))
    mgr_factory()
    c = etcd.client()

    def pools() -> dict[int, str]:
        return {i: str((osd_in_map(c, i) or {}).get("pool")) for i in (1, 2)}
    c.wait_for(lambda _: pools() == {1: "fast", 2: ""}, timeout=15, what="both OSDs in the map")
    fast.stop()
    fast.extra_args = [*args, "--pool", "ssd"]
    fast.start()
    c.wait_for(lambda _: pools() == {1: "ssd", 2: ""}, timeout=15, what="osd.1 in pool ssd")
