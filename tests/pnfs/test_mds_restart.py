"""A metadata-manager restart under pNFS writers.

A stock kernel copies files over NFSv4.1 with write layouts (dd
conv=fsync, so every file ends with a LAYOUTCOMMIT) while ganesha.nfsd is
killed (kill -9, a crash) or stopped (SIGTERM, an upgrade) and started
again 3 s later.  Stock Ganesha 4.3 answered the LAYOUTCOMMIT of the
layout from before the restart with STALE_STATEID and Linux resent it for
ever: the copy never finished.  Now (patch 0001, ganesha-fsal/mds/restart.c):

- the client goes on within the grace period plus a few seconds;
- every file reads back (from the guest after dropping its caches, and
  from the host over NFSv3) byte for byte, with its size;
- the manager fenced and settled the files whose write layouts were out
  (its log says so) and kept no record once they were settled.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Callable

import pytest

from pando_cluster.ganesha_conf import GRACE_PERIOD_S
from pando_testing.e2e import KernelClient
from pando_testing.osdctl import Info
from pando_testing.pnfs_tools import PARTITION, PnfsCluster, guest_copies_query
from pando_testing.vm import Scenario

FILES = 4
FILE_BYTES = 12 << 20
HALF_MIB = 6
RESTART_AFTER_S = 3.0
# The grace period users get: clients reclaim in it (it ends early once
# every client and NFSv3 host of the last run reclaimed, patch 0140).
GRACE_S = float(GRACE_PERIOD_S)
SLACK_S = 60.0   # TCG guests: copying and recovering take tens of seconds

# f1 is written before the restart; f2 is open with half its bytes written
# (a write layout out, dirty or unstable data) while the manager restarts,
# and finished through the same descriptor after it; f3 is copied in the
# background across the restart; f4 after it.
SCRIPT = f"""
i=1; while [ $i -le {FILES} ]; do getdata f$i /tmp/src$i; i=$((i + 1)); done
arrive ready
dd if=/tmp/src1 of=f1 bs=1M conv=fsync 2>/dev/null || fail "dd f1"
exec 3>f2
dd if=/tmp/src2 bs=1M count={HALF_MIB} 2>/dev/null >&3 || fail "dd f2 first half"
(dd if=/tmp/src3 of=f3 bs=1M conv=fsync 2>/tmp/dd3.err || cat /tmp/dd3.err) &
arrive midway
dd if=/tmp/src2 bs=1M skip={HALF_MIB} 2>/dev/null >&3 || fail "dd f2 second half"
exec 3>&-
wait
dd if=/tmp/src4 of=f4 bs=1M conv=fsync 2>/dev/null || fail "dd f4"
sync
echo 3 > /proc/sys/vm/drop_caches
""" + guest_copies_query(FILES) + """arrive done "${q#&}"
"""


def restart_under_writer(c: PnfsCluster, kc: KernelClient, how: signal.Signals) -> None:
    gate = c.gate
    assert gate is not None
    vm, data = c.copy_to_midway(kc, SCRIPT, FILES, FILE_BYTES, "done")
    m = c.mds
    if how == signal.SIGKILL:
        m.kill9()
    else:
        assert m.stop_ganesha() == 0, "ganesha.nfsd did not exit cleanly on SIGTERM"
    time.sleep(RESTART_AFTER_S)
    m.start()
    restarted = time.monotonic()
    gate.release("midway")
    limit = (0 if m.graceless else GRACE_S) + SLACK_S
    done = gate.wait("done", timeout=limit, vms=[vm])
    took = time.monotonic() - restarted
    res = vm.wait()
    vm.kill()
    res.assert_ok()
    assert took < limit, f"the writer took {took:.0f} s after the restart"
    print(f"{kc.name}: {how.name} restart, graceless={m.graceless}: "
          f"the writer finished {took:.1f} s after the manager was back")

    c.check_copies(f"{kc.name}/s1-sh", data, done)
    log = m.log_text()
    assert "had write layouts out when the manager stopped" in log, \
        "the restart met no write layout: the test did not test it"
    assert "not settled" not in log, log[-3000:]


@pytest.mark.parametrize("version", ["6.12"])
def test_kill9_restart_with_grace_period_pnfs_writer_goes_on_nothing_lost(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(graceless=False)
    restart_under_writer(c, guest(version, c), signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "6.12", "7.x"])
def test_kill9_restart_graceless_pnfs_writer_goes_on_nothing_lost(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(graceless=True)
    restart_under_writer(c, guest(version, c), signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_kill9_restart_with_grace_period_other_kernels(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(graceless=False)
    restart_under_writer(c, guest(version, c), signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.12", "7.x"])
def test_sigterm_restart_upgrade_pnfs_writer_goes_on_nothing_lost(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(graceless=False)
    restart_under_writer(c, guest(version, c), signal.SIGTERM)


HOLD_SCRIPT = """
exec 3>a
arrive opened "a=$(stat -c %i a)"
exec 3>&-
arrive closed
"""


def test_restart_settles_sizes_of_files_whose_write_layouts_were_out(
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    """Deterministic: a guest holds a write layout of a new file; the test
    writes bytes into both mirror objects, as a pNFS writer whose
    LAYOUTCOMMIT never reached the manager would have; the manager is
    killed and started again.  Before it serves anyone the size is what
    both mirrors hold, the objects are fenced, and the record is gone."""
    c = pnfs_cluster(graceless=True)
    gate = c.gate
    assert gate is not None
    vm = guest("6.12", c).start(Scenario().step("sh", "v4.1", gate.guest_lib() + HOLD_SCRIPT),
                                timeout=300)
    ino = int(gate.wait("opened", timeout=200, vms=[vm]).query["a"])
    comps = c.components(ino)
    assert len(comps) == 2, f"inode {ino}: {comps} (no write layout in the OPEN?)"
    data = os.urandom(200_000)
    for k in comps:
        with c.ctl(c.osd(k.osd_id)) as ctl:
            ctl.write(PARTITION, k.object_id, 0, data)
            before = ctl.info(PARTITION, k.object_id)[Info.CAP_VERSION]
    c.mds.kill9()
    c.mds.start()
    assert c.nfs3_lookup("k6_12-1/s1-sh/a")[1].size == len(data), c.log_text()[-3000:]
    assert c.nfs3_read("k6_12-1/s1-sh/a") == data
    for k in comps:
        with c.ctl(c.osd(k.osd_id)) as ctl:
            assert ctl.info(PARTITION, k.object_id)[Info.CAP_VERSION] > before, "not fenced"
    log = c.log_text()
    assert f"inode {ino}: size 0 -> {len(data)} from its objects (a write layout of the previous run)" in log
    gate.release("opened")
    gate.release("closed")
    vm.wait().assert_ok()
    vm.kill()
    c.mds.stop_ganesha()
    c.mds.start()
    assert "had write layouts out" not in c.log_text().split("Starting")[-1], \
        "the record outlived the settle"
