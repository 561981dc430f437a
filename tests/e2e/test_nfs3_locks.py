"""NFSv3 locking: an NFSv3 host (NLM, with rpcbind and rpc.statd in the
guest) and an NFSv4.1 host lock the same byte ranges of one file on the
Pando cluster, and the metadata manager arbitrates between them.

The two guests meet the test at gates (pnfs_tools.Rendezvous), so each
step happens while the other guest holds its lock:

1. the NFSv3 guest holds W 0:100; the NFSv4.1 guest's F_SETLK on
   overlapping ranges fails with EAGAIN (exclusive and shared), F_GETLK
   names the holder, and disjoint ranges are granted;
2. the holder unlocks: the other gets 0:100;
3. the same with the roles swapped;
4. each waits (F_SETLKW) for a lock the other holds and is granted once
   it goes; the waits are printed (measured facts, tests/e2e/README.md).

A blocked NFSv3 lock is granted by a call from the server to the client
(NLM GRANTED).  Through qemu's user networking the server cannot reach the
guest: Ganesha calls the address the guest's requests come from, the pod's
own 127.0.0.1, and the guest gets its lock when lockd asks again, 30 s
after it blocked.  The last test gives the guest a tap device, so the
server reaches it at its own address, and the GRANTED call arrives.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, Iterator

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mds import PandoMds
from pando_testing.nfs3_setup import Nfs3Error
from pando_testing.nlm import NLM4_GRANTED, NLM4_VERS, NLM_PROG, NlmHost, getport
from pando_testing.pnfs_tools import GATE_PORT, Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario, Vm, wait_all
from pando_testing.vmnet import GUEST_NET_SH, TapNet

pytestmark = pytest.mark.slow

EAGAIN = "Resource temporarily unavailable"
HOLD_S = 3       # how long a holder keeps the lock once the other waits for it

# Shell both guests run (busybox ash, inside a `step sh`, after the gate
# functions): `hold GATE` keeps W 0:100 until the test opens GATE (ptool
# runs its command while it holds the lock: a plain wget, as shell
# functions do not reach it); `contend` is everything the other guest must
# see meanwhile; `waited NAME` takes W 0:100 blocking and prints how long
# it waited.
COMMON = f"""
hold() {{ ptool lock -x -r 0:100 f wget -q -O /dev/null "http://10.0.2.2:{GATE_PORT}/arrive/$1" \
            > /tmp/hold.out 2>&1 || fail "holding W 0:100: $(cat /tmp/hold.out)"; }}
contend() {{
  must_fail "{EAGAIN}" ptool lock -n -x -r 50:10 f
  must_fail "{EAGAIN}" ptool lock -n -s -r 99:1 f
  must_fail "{EAGAIN}" ptool lock -n -x f
  ptool lock -n -x -r 100:100 f > /dev/null || fail "W 100:100 refused beside the other's W 0:100"
  ptool lock -n -s -r 4096:1 f > /dev/null || fail "R 4096:1 refused beside the other's W 0:100"
  case "$(ptool lock -g -r 10:10 f)" in
    "conflict W 0:100 "*) ;;
    *) fail "F_GETLK 10:10: $(ptool lock -g -r 10:10 f), want conflict W 0:100" ;;
  esac
}}
take() {{ ptool lock -n -x -r 0:100 f > /dev/null || fail "W 0:100 refused after the other unlocked"; }}
waited() {{
  ptool lock -t 120 -x -r 0:100 f > /tmp/wait.out 2>&1 || fail "blocking W 0:100: $(cat /tmp/wait.out)"
  echo "$1 $(awk '/^locked/ {{ print $NF }}' /tmp/wait.out)"
}}
"""

V3_SCRIPT = """
mkdir -p /mnt/v3/nlm; cd /mnt/v3/nlm; : > f
hold v3-holds
arrive v3-unlocked
contend
arrive v3-contended
take
hold v3-holds-again
arrive v3-waits
waited v3_waited_s
"""

V41_SCRIPT = """
arrive v41-go
cd /mnt/v4.1/nlm
contend
arrive v41-contended
take
hold v41-holds
arrive v41-unlocked
arrive v41-waits
waited v41_waited_s
hold v41-holds-again
"""


@pytest.fixture
def gate(pod: Pod) -> Iterator[Rendezvous]:
    r = Rendezvous(pod).start()
    yield r
    r.stop()


def _waited(out: str, key: str) -> float:
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith(key)))


@pytest.mark.parametrize("v3_kernel,v41_kernel", [("6.1", "7.x"), ("7.x", "6.12")])
def test_nfs3_and_nfs41_hosts_lock_the_same_ranges(
        v3_kernel: str, v41_kernel: str, gate: Rendezvous,
        kernel_client: Callable[..., KernelClient]) -> None:
    lib = gate.guest_lib() + COMMON
    v3 = kernel_client(v3_kernel, name="nfs3").start(
        Scenario().step("sh", "v3", lib + V3_SCRIPT), nfs3_locks=True, timeout=400)
    v41 = kernel_client(v41_kernel, name="nfs41").start(
        Scenario().step("sh", "v4.1", lib + V41_SCRIPT), timeout=400)
    vms: list[Vm] = [v3, v41]

    def step(arrive: str, then_release: str) -> None:
        gate.wait(arrive, vms=vms)
        gate.release(then_release)

    step("v3-holds", "v41-go")              # v3 holds W 0:100: v4.1 contends
    step("v41-contended", "v3-holds")       # v3 unlocks
    step("v3-unlocked", "v41-contended")    # v4.1 takes 0:100, then holds it
    step("v41-holds", "v3-unlocked")        # v3 contends
    step("v3-contended", "v41-holds")       # v4.1 unlocks
    step("v41-unlocked", "v3-contended")    # v3 takes 0:100, then holds it
    step("v3-holds-again", "v41-unlocked")  # v4.1 waits for it (F_SETLKW)
    gate.wait("v41-waits", vms=vms)
    gate.release("v41-waits")
    time.sleep(HOLD_S)
    gate.release("v3-holds-again")          # v4.1 is granted; v3 waits for v4.1
    step("v41-holds-again", "v3-waits")
    time.sleep(HOLD_S)
    gate.release("v41-holds-again")         # v3 is granted

    results = wait_all(vms)
    for res in results:
        print(res.report())
    for res in results:
        res.assert_ok()
    w3 = _waited(results[0].steps[0].output, "v3_waited_s")
    w41 = _waited(results[1].steps[0].output, "v41_waited_s")
    print(f"F_SETLKW on a lock the other host held for {HOLD_S} s: NFSv3 ({v3_kernel}) "
          f"waited {w3:.1f} s, NFSv4.1 ({v41_kernel}) {w41:.1f} s")
    assert w3 >= HOLD_S - 0.5 and w41 >= HOLD_S - 0.5, (w3, w41)


def _hold_from_the_pod(mds: PandoMds, fh: bytes) -> NlmHost:
    """An NLM host in the pod holding W 0:100 of `fh`."""
    s = mds.pod.connect("127.0.0.1", 111)
    port = getport(s, NLM_PROG, NLM4_VERS)
    s.close()
    holder = NlmHost(mds.pod.connect("127.0.0.1", port), "pod-holder")
    assert holder.lock(fh, 0, 100) == NLM4_GRANTED
    return holder


def _wait_for_file(mds: PandoMds, name: str, vm: Vm, timeout: float = 120) -> None:
    root, c = mds.root_handle(), mds.client()
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                c.lookup(root, name)
                return
            except Nfs3Error:
                assert vm.alive() and time.monotonic() < deadline, f"no {name} from {vm.name}"
                time.sleep(0.2)
    finally:
        c.close()


@pytest.mark.parametrize("version", ["6.1"])
def test_nfs3_blocked_lock_is_granted_by_callback_over_tap(
        version: str, tap: TapNet, pando_cluster: PandoMds, nfs_server: NfsServerHandle,
        kernel_client: Callable[..., KernelClient]) -> None:
    """The guest on a tap device (10.0.3.2, the pod side 10.0.3.1) waits
    (F_SETLKW) for W 0:100 that an NLM host in the pod holds; HOLD_S after
    the guest began to wait, the holder unlocks.  Ganesha sends GRANTED to
    10.0.3.2 (rpcbind, then lockd in the guest), so the wait ends then, not
    at lockd's next poll 30 s later."""
    fh = pando_cluster.create_files(["f"])[0]
    holder = _hold_from_the_pod(pando_cluster, fh)
    server = dataclasses.replace(
        nfs_server, target=dataclasses.replace(nfs_server.target, address=tap.host_addr))
    kc = kernel_client(version, name="nfs3tap", server=server)
    script = COMMON + "cd /mnt/v3; touch waiting; waited v3_waited_s\n"
    vm = kc.vm(Scenario().raw(GUEST_NET_SH).step("sh", "v3", script), nfs3_locks=True,
               params=tap.guest_params(), timeout=300)
    vm.netdev = tap.netdev()
    try:
        vm.start()
        _wait_for_file(pando_cluster, "waiting", vm)
        time.sleep(HOLD_S)
        holder.unlock(fh, 0, 100)
    finally:
        holder.close()
    res = vm.wait()
    print(res.report())
    res.assert_ok()
    waited = _waited(res.steps[0].output, "v3_waited_s")
    print(f"F_SETLKW of an NFSv3 guest ({version}) on a tap device, lock held {HOLD_S} s "
          f"more: waited {waited:.1f} s")
    assert HOLD_S - 0.5 <= waited < HOLD_S + 10, waited
