"""The active manager's whole machine cut off under a stock kernel's pNFS
writer.

The rack model (pando_testing/rack_group.py): an etcd member, four OSDs,
the active (a) and the standby (b) of one group each on a machine of its
own, and a stock kernel on the switch (a qemu guest on a tap port of the
switch's bridge) that mounts the group's service address, which a holds.
While the guest copies files with write layouts and holds a lock
(pando_testing/group_failover.py), a's machine is cut off at the switch,
its ganesha still running:

- b leads, fences a's layouts, takes the service address and announces
  it (ARP); the guest's next call at that address reaches b, with no new
  mount;
- the writer goes on through the descriptor it had open, and finishes;
  every file reads back byte for byte in the guest (caches dropped) and
  on b;
- the kernel reclaimed its open and its lock on b; b settled the files
  whose write layouts a had out;
- a, cut off from etcd, stops on its own and gives the address up.

The same for a guest holding an NFSv3 lock (with its own statd): b tells
it from the service address (sm-notify), and its lockd reclaims the lock
on b.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.group_failover import PSEUDO, TAKEOVER_TIMEOUT_S, failover_under_writer, \
    nfs3_lock_across_failover
from pando_testing.logs import keep_logs
from pando_testing.mds_files import file_bytes
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous
from pando_testing.pnfsload import pattern, pnfsload_argv, progress_lines, start_pnfsload, \
    stop_writer
from pando_testing.rack import HUB_ADDR
from pando_testing.rack_group import SERVICE, RackGroup, rack_group
from pando_testing.vm import NfsServerHandle
from pando_testing.vmnet import TapNet

EXIT_TIMEOUT_S = 30


@dataclass
class RackGuest:
    """The group, a kernel client that boots guests on the switch, and
    the test's gates where those guests reach them."""
    group: RackGroup
    kc: KernelClient
    tap: TapNet
    gate: Rendezvous


@pytest.fixture
def group(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RackGroup]:
    with rack_group(tmp_path, clients=("client",), protocols=None, pnfs=True, pseudo=PSEUDO,
                    graceless=False, inline_max=1, nsm=True) as g:
        try:
            yield g
        finally:
            keep_logs(request, [g.a.log_path, g.b.log_path])


@pytest.fixture
def rack(group: RackGroup, version: str, tmp_path: Path,
         request: pytest.FixtureRequest) -> Iterator[RackGuest]:
    g = group
    tap = g.rack.guest_tap()
    gate = Rendezvous(g.rack.hub, address=HUB_ADDR, guest_address=HUB_ADDR).start()
    target = g.a.mount_target(address=SERVICE)
    kc = KernelClient(g.rack.hub, version, tmp_path / "vms",
                      NfsServerHandle(name="pando", target=target, logs=[g.a.log_path]),
                      f"k{version.replace('.', '_')}-rack")
    try:
        yield RackGuest(g, kc, tap, gate)
    finally:
        for vm in kc.vms:
            vm.kill()
        gate.stop()
        tap.remove()
        keep_logs(request, [log for vm in kc.vms for log in vm.logs()])


def cut_under_writer(r: RackGuest) -> None:
    g = r.group
    a = PnfsCluster(g.nodes["mds-a"].pod, g.a, g.osds, r.gate)
    b = PnfsCluster(g.nodes["mds-b"].pod, g.b, g.osds, r.gate)
    failover_under_writer(a, b, r.kc, lambda: g.cut("mds-a"), tap=r.tap)
    check_cut_off_active_stopped(g)


def check_cut_off_active_stopped(g: RackGroup) -> None:
    assert g.a.proc is not None
    assert g.a.proc.wait(timeout=EXIT_TIMEOUT_S) != 0
    log = g.a.log_text()
    assert "a is no longer the active" in log or "no longer sure that it leads" in log
    assert "release` done" in log, log[-3000:]
    assert SERVICE not in g.nodes["mds-a"].pod.run(["ip", "-o", "addr"]).stdout


@pytest.mark.parametrize("version", ["6.12"])
def test_the_actives_machine_cut_off_writer_and_lock_holder_go_on_on_the_standby(
        rack: RackGuest) -> None:
    cut_under_writer(rack)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_the_actives_machine_cut_off_other_kernels(rack: RackGuest) -> None:
    cut_under_writer(rack)


@pytest.mark.parametrize("version", ["6.12"])
def test_the_actives_machine_cut_off_nfs3_lock_holder_reclaims_on_the_standby(
        rack: RackGuest) -> None:
    g = rack.group
    nfs3_lock_across_failover(g.a, g.b, rack.kc, rack.tap, rack.gate, lambda: g.cut("mds-a"))
    check_cut_off_active_stopped(g)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_the_actives_machine_cut_off_nfs3_lock_holder_other_kernels(rack: RackGuest) -> None:
    g = rack.group
    nfs3_lock_across_failover(g.a, g.b, rack.kc, rack.tap, rack.gate, lambda: g.cut("mds-a"))
    check_cut_off_active_stopped(g)


def test_the_actives_machine_cut_off_a_pnfsload_writer_rides_through_to_the_standby(
        group: RackGroup) -> None:
    """pnfsload --writer on a client machine, at the service address: its
    connection to the cut-off active fails once the standby holds the
    address, it makes a new session there and goes on with new layouts;
    its file then holds exactly the bytes it acknowledged."""
    g = group
    argv = pnfsload_argv(f"{SERVICE}:{g.a.nfs_port}", "wr", 2, export=PSEUDO,
                         transfer=64 * 1024, block=64 << 20, timeout=60,
                         extra=["--writer", "--pace", "10"])
    proc = start_pnfsload(argv, pod=g.nodes["client"].pod)
    acked: dict[int, int] = {}
    try:
        progress_lines(proc, lambda t: True, acked)
        g.cut("mds-a")
        cut = time.monotonic()
        g.b.wait_serving(TAKEOVER_TIMEOUT_S)
        served = time.monotonic()
        progress_lines(proc, lambda t: t > served, acked)
        at_served = dict(acked)
        progress_lines(proc, lambda t: t > served + 3, acked)
        r, err = stop_writer(proc, acked)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"b serves {served - cut:.1f} s after the cut; {r.raw}")
    assert r.recoveries >= 1 and "the MDS lost the session" in err, err
    assert all(acked[i] > at_served.get(i, 0) for i in (0, 1)), (at_served, acked)
    check_cut_off_active_stopped(g)
    for i in (0, 1):
        size, data = file_bytes(g.b, f"/wr/ior.{i}")
        assert size == acked[i] and data == pattern(i + 1, 0, acked[i]), i
