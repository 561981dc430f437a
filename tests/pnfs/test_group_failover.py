"""A manager group's failover under a stock kernel's pNFS writer.

The active (a) and a standby (b) of one group, on three etcd members.
The standby waits on the active's address and ports, which it takes over
when it leads (a standby opens no port before): in one pod both share the
pod's address, what a floating address does between hosts.  A stock
kernel copies files over NFSv4.1 with write layouts, and holds a lock,
while a is killed (kill -9), or asked to hand over as `pando mds
failover` asks (a planned switchover: a stops as on SIGTERM, exit 0):

- the writer goes on through the descriptor it had open, and finishes;
- every file reads back byte for byte in the guest (caches dropped) and
  on the new active;
- the kernel reclaimed its open and its lock on b (the group's reclaim
  records in etcd named it): another client is refused the lock while the
  guest holds it, and gets it once the guest lets go;
- b fenced and settled the files whose write layouts a had out.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdCluster
from pando_testing.group_failover import failover_under_writer
from pando_testing.mds_group import GROUP, group_fsal, start_standby, wait_log
from pando_testing.pnfs_tools import PnfsCluster


def kill9(c: PnfsCluster, etcd: EtcdCluster) -> None:
    c.mds.kill9()


def hand_over(c: PnfsCluster, etcd: EtcdCluster) -> None:
    """What `pando mds failover g1` asks (mgr/pando_mgr/groups.py)."""
    client = etcd.client()
    term = client.get_json(f"/pando/groups/{GROUP}/members/a")["term"]
    client.put(f"/pando/groups/{GROUP}/handover", json.dumps({"from": "a", "term": term}))


def run_failover(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                 guest: Callable[..., KernelClient], etcd: EtcdCluster, tmp_path: Path,
                 stop: Callable[[PnfsCluster, EtcdCluster], None] = kill9) -> None:
    c = pnfs_cluster(graceless=False, mds_group=GROUP, fsal=group_fsal(etcd, "a"))
    wait_log(c.mds, "a is the active, term", 10)
    b = start_standby(c.mds, etcd, tmp_path, in_place=True)
    try:
        # b serves c's manager's address: the guest's gate and OSDs are c's
        failover_under_writer(c, dataclasses.replace(c, mds=b), guest(version, c),
                              lambda: stop(c, etcd))
        if stop is hand_over:
            assert c.mds.proc is not None and c.mds.proc.wait(timeout=30) == 0
            assert "a asked to hand over" in c.mds.log_text()
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


@pytest.mark.parametrize("version", ["6.12"])
def test_kill9_of_the_active_writer_and_lock_holder_go_on_on_the_standby(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient], etcd3: EtcdCluster, tmp_path: Path) -> None:
    run_failover(version, pnfs_cluster, guest, etcd3, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_kill9_of_the_active_other_kernels(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient], etcd3: EtcdCluster, tmp_path: Path) -> None:
    run_failover(version, pnfs_cluster, guest, etcd3, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.12", "7.x"])
def test_planned_switchover_writer_and_lock_holder_go_on_on_the_standby(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient], etcd3: EtcdCluster, tmp_path: Path) -> None:
    run_failover(version, pnfs_cluster, guest, etcd3, tmp_path, hand_over)
