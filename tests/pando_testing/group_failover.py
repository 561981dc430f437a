"""Stock kernels across a manager group's failover
(tests/pnfs/test_group_failover*.py).

failover_under_writer: the guest copies FILES files of FILE_BYTES over
NFSv4.1 with write layouts, and holds a lock throughout: f1 before the
failover; f2 open, half written, a write layout out, while the active
stops, and finished through the same descriptor after; f3 copied in the
background across it; f4 after.

nfs3_lock_across_failover: the guest holds an NFSv3 lock (NLM, with its
own statd) across it.
"""
from __future__ import annotations

import time
from typing import Callable

from pando_cluster.ganesha_conf import GRACE_PERIOD_S

from .e2e import KernelClient
from .mds import PandoMds
from .nfs4 import NFS4_OK, NFS4ERR_DENIED, NFS4ERR_GRACE, OPEN4_SHARE_ACCESS_BOTH, Nfs4Client
from .nlm import NLM4_DENIED, NLM4_DENIED_GRACE_PERIOD, NLM4_GRANTED, nlm_host
from .pnfs_tools import PnfsCluster, Rendezvous, guest_copies_query
from .vm import Scenario
from .vmnet import GUEST_NET_SH, TapNet

PSEUDO = "/pando"
FILES = 4
FILE_BYTES = 12 << 20
HALF_MIB = 6
TAKEOVER_TIMEOUT_S = 60
SLACK_S = 60.0   # TCG guests: copying and recovering take tens of seconds

NFS4_SCRIPT = f"""
i=1; while [ $i -le {FILES} ]; do getdata f$i /tmp/src$i; i=$((i + 1)); done
ptool lock -x lk sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' \\
    > /tmp/lk.out 2>&1 &
lk=$!
while [ ! -e held ]; do kill -0 $lk 2>/dev/null || fail "lock: $(cat /tmp/lk.out)"; sleep 0.05; done
arrive ready
dd if=/tmp/src1 of=f1 bs=1M conv=fsync 2>/dev/null || fail "dd f1"
exec 3>f2
dd if=/tmp/src2 bs=1M count={HALF_MIB} 2>/dev/null >&3 || fail "dd f2 first half"
(dd if=/tmp/src3 of=f3 bs=1M conv=fsync 2>/tmp/dd3.err || cat /tmp/dd3.err) &
f3=$!
arrive midway
dd if=/tmp/src2 bs=1M skip={HALF_MIB} 2>/dev/null >&3 || fail "dd f2 second half"
exec 3>&-
wait $f3
dd if=/tmp/src4 of=f4 bs=1M conv=fsync 2>/dev/null || fail "dd f4"
sync
echo 3 > /proc/sys/vm/drop_caches
""" + guest_copies_query(FILES) + """\
kill -0 $lk 2>/dev/null || fail "the lock holder ended: $(cat /tmp/lk.out)"
arrive written "${q#&}"
touch release
wait $lk || fail "lock: $(cat /tmp/lk.out)"
arrive unlocked
"""


def lock_status(m: PandoMds, run: str) -> int:
    """Another client's LOCK of the guest's lk, once the grace period is
    over: NFS4_OK or the error."""
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port)) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        deadline = time.monotonic() + GRACE_PERIOD_S
        while True:
            fh, sid = nfs.open(f"{PSEUDO}/{run}", "lk", OPEN4_SHARE_ACCESS_BOTH)
            status = nfs.lock(fh, sid, 0, 1)
            if status != NFS4ERR_GRACE:
                return status
            assert time.monotonic() < deadline, "the grace period goes on"
            time.sleep(0.5)


def failover_under_writer(c: PnfsCluster, b: PnfsCluster, kc: KernelClient,
                          stop: Callable[[], None], tap: TapNet | None = None) -> None:
    """kc's guest writes NFS4_SCRIPT's files through c's manager, the active,
    until midway; `stop` stops the active; then the guest goes on through
    b's manager, the standby, which must lead in TAKEOVER_TIMEOUT_S.
    Every file must read back whole in the guest and on b, the guest's
    lock be reclaimed on b, and the active's write layouts settled."""
    gate = c.gate
    assert gate is not None
    vm, data = c.copy_to_midway(kc, NFS4_SCRIPT, FILES, FILE_BYTES, "unlocked", tap=tap)
    stop()
    stopped = time.monotonic()
    b.mds.wait_serving(TAKEOVER_TIMEOUT_S)
    print(f"{kc.name}: b serves {time.monotonic() - stopped:.1f} s after a was stopped")
    gate.release("midway")
    written = gate.wait("written", timeout=GRACE_PERIOD_S + SLACK_S, vms=[vm])
    print(f"{kc.name}: the writer finished {time.monotonic() - stopped:.1f} s after the stop")
    run = f"{kc.name}/s1-sh"
    assert lock_status(b.mds, run) == NFS4ERR_DENIED, "the guest's lock was not reclaimed"
    gate.release("written")
    gate.wait("unlocked", timeout=120, vms=[vm])
    res = vm.wait()
    vm.kill()
    res.assert_ok()
    assert lock_status(b.mds, run) == NFS4_OK
    b.check_copies(run, data, written)
    log = b.log_text()
    assert "pando: 1 NFSv4 clients may reclaim" in log
    assert "had write layouts out when the manager stopped" in log, \
        "the failover met no write layout: the test did not test it"
    assert "not settled" not in log, log[-3000:]


NFS3_SCRIPT = """
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


def nfs3_lock_across_failover(a: PandoMds, b: PandoMds, kc: KernelClient, tap: TapNet,
                              gate: Rendezvous, stop: Callable[[], None]) -> None:
    """kc's guest, on `tap` and with its own statd, mounts a over NFSv3
    and locks NFS3_SCRIPT's lk; `stop` stops a; b must lead in
    TAKEOVER_TIMEOUT_S and tell the guest (sm-notify), whose lockd must
    reclaim the lock there before the grace period ends; the lock holder
    must see no error."""
    vm = kc.vm(Scenario().raw(GUEST_NET_SH).step("sh", "v3", gate.guest_lib() + NFS3_SCRIPT),
               nfs3_locks=True, params=tap.guest_params(), timeout=300)
    vm.netdev = tap.netdev()
    vm.start()
    gate.wait("locked", timeout=300, vms=[vm])
    fh = lookup(a, "lk")
    stop()
    stopped = time.monotonic()
    b.wait_serving(TAKEOVER_TIMEOUT_S)
    print(f"{kc.name}: b serves {time.monotonic() - stopped:.1f} s after a was stopped")
    held = lock_after_grace(b, fh)
    print(f"{kc.name}: the other host's lock {held} "
          f"{time.monotonic() - stopped:.1f} s after the stop")
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
