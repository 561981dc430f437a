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
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdCluster
from pando_testing.group_failover import nfs3_lock_across_failover
from pando_testing.mds import PandoMds
from pando_testing.mds_group import GROUP, group_fsal, start_standby, wait_log
from pando_testing.pnfs_tools import Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle
from pando_testing.vmnet import TapNet

PSEUDO = "/pando"


@pytest.fixture
def tap_gate(pod: Pod, tap: TapNet) -> Iterator[Rendezvous]:
    """The test's gates where a guest on the tap device reaches them."""
    r = Rendezvous(pod, address=tap.host_addr, guest_address=tap.host_addr).start()
    yield r
    r.stop()


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
        nfs3_lock_across_failover(a, b, kc, tap, gate, a.kill9)
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
