"""A manager group's failover under a stock kernel holding an NFSv3 lock.

The active (a) and a standby (b) of one group, on three etcd members, b
in a's place (its address and ports, what a floating address does between
hosts).  Without the group's NSM records (the previous patch series) the
other host was granted the range 4.8 s after the kill, and the guest's
lock was gone without a word to it.  A stock kernel on a tap device (the pod reaches the guest there,
as sm-notify must; slirp would not let it) mounts the group over NFSv3,
with its own rpcbind and rpc.statd, and holds W 0:100 of a file while a
is killed (kill -9):

- b lists the guest, which a's NLM monitored, in its notify list
  (the group's records in etcd: fsal/nsm_hosts.c), and its sm-notify
  tells the guest (sent from the tap address, which the guest's statd
  matches to the server it monitors);
- the guest's lockd reclaims the lock on b: once the grace period is
  over, another host is refused the range while the guest holds it, and
  gets it once the guest lets go;
- the lock holder never sees an error.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_cluster.ganesha_conf import GRACE_PERIOD_S
from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mds_group import GROUP, group_fsal, start_standby, wait_log
from pando_testing.nlm import NLM4_DENIED, NLM4_DENIED_GRACE_PERIOD, NLM4_GRANTED, nlm_host
from pando_testing.pnfs_tools import Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario
from pando_testing.vmnet import GUEST_NET_SH, TapNet

PSEUDO = "/pando"
TAKEOVER_TIMEOUT_S = 60
SLACK_S = 60.0   # TCG guests: booting and reclaiming take tens of seconds

SCRIPT = """
cd /mnt/v3
: > lk
ptool lock -x -r 0:100 lk sh -c 'touch held; while [ ! -e release ]; do sleep 0.1; done' \\
    > /tmp/lk.out 2>&1 &
lk=$!
while [ ! -e held ]; do kill -0 $lk 2>/dev/null || fail "lock: $(cat /tmp/lk.out)"; sleep 0.05; done
arrive locked
kill -0 $lk 2>/dev/null || fail "the lock holder ended: $(cat /tmp/lk.out)"
touch release
wait $lk || fail "lock: $(cat /tmp/lk.out)"
arrive unlocked
"""


@pytest.fixture
def tap_gate(pod: Pod, tap: TapNet) -> Iterator[Rendezvous]:
    """The test's gates where a guest on the tap device reaches them."""
    r = Rendezvous(pod, address=tap.host_addr, guest_address=tap.host_addr).start()
    yield r
    r.stop()


def lock_after_grace(m: PandoMds, fh: bytes) -> int:
    """The other host's W 50:10 of the guest's file once the grace
    period is over: GRANTED or DENIED (it lets go of what it got)."""
    host = nlm_host(m.pod, "127.0.0.5", "other")
    try:
        deadline = time.monotonic() + GRACE_PERIOD_S + SLACK_S
        while (status := host.lock(fh, 50, 10)) == NLM4_DENIED_GRACE_PERIOD:
            assert time.monotonic() < deadline, "the grace period never ended"
            time.sleep(0.5)
        if status == NLM4_GRANTED:
            assert host.unlock(fh, 50, 10) == NLM4_GRANTED
        return status
    finally:
        host.close()


def lookup(m: PandoMds, name: str) -> bytes:
    c = m.client()
    try:
        return c.lookup(m.root_handle(), name)
    finally:
        c.close()


def run_failover(version: str, pod: Pod, tap: TapNet, gate: Rendezvous,
                 mds_factory: Callable[..., PandoMds], etcd: EtcdCluster,
                 tmp_path: Path) -> None:
    a = mds_factory(4, pseudo=PSEUDO, protocols=(3, 4), graceless=False, mds_group=GROUP,
                    extra_fsal=group_fsal(etcd, "a"))
    wait_log(a, "a is the active, term", 10)
    b = start_standby(a, etcd, tmp_path, in_place=True)
    try:
        target = dataclasses.replace(a.mount_target(), address=tap.host_addr)
        kc = KernelClient(pod, version, tmp_path / "vms",
                          NfsServerHandle(name="pando", target=target, logs=[a.log_path]),
                          f"nfs3-{version.replace('.', '_')}")
        vm = kc.vm(Scenario().raw(GUEST_NET_SH).step("sh", "v3", gate.guest_lib() + SCRIPT),
                   nfs3_locks=True, params=tap.guest_params(), timeout=300)
        vm.netdev = tap.netdev()
        vm.start()
        gate.wait("locked", timeout=300, vms=[vm])
        fh = lookup(a, "lk")
        a.kill9()
        killed = time.monotonic()
        b.wait_serving(TAKEOVER_TIMEOUT_S)
        print(f"{kc.name}: b serves {time.monotonic() - killed:.1f} s after the kill")
        held = lock_after_grace(b, fh)
        print(f"{kc.name}: the other host's lock {held} "
              f"{time.monotonic() - killed:.1f} s after the kill")
        gate.release("locked")
        gate.wait("unlocked", timeout=120, vms=[vm])
        gate.release("unlocked")
        res = vm.wait()
        vm.kill()
        print(res.report())
        res.assert_ok()
        assert held == NLM4_DENIED, "the guest's lock was not reclaimed"
        assert lock_after_grace(b, fh) == NLM4_GRANTED
        log = b.log_text()
        assert "pando: 1 NFSv3 hosts to tell" in log, log[-3000:]
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


@pytest.mark.parametrize("version", ["6.12"])
def test_kill9_of_the_active_nfs3_lock_holder_reclaims_on_the_standby(
        version: str, pod: Pod, tap: TapNet, tap_gate: Rendezvous,
        mds_factory: Callable[..., PandoMds], etcd3: EtcdCluster, tmp_path: Path) -> None:
    run_failover(version, pod, tap, tap_gate, mds_factory, etcd3, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_kill9_of_the_active_nfs3_lock_holder_other_kernels(
        version: str, pod: Pod, tap: TapNet, tap_gate: Rendezvous,
        mds_factory: Callable[..., PandoMds], etcd3: EtcdCluster, tmp_path: Path) -> None:
    run_failover(version, pod, tap, tap_gate, mds_factory, etcd3, tmp_path)
