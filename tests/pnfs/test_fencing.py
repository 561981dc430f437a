"""Fencing a layout holder that does not answer a recall.

A guest opens a file, writes 4 MiB through its write layout and keeps the
file open (the layout stays out: return-on-close).  Then it stops
answering: its qemu is frozen with SIGSTOP, or its back channel is cut (a
proxy in front of the manager swallows CB_COMPOUND calls).  An NFSv3
client on the host writes 64 KiB into the file: a write through the
manager to a file with another client's write layout out, so the manager
recalls the layout and answers NFS3ERR_JUKEBOX until it is returned.  It
never is: after Recall_Timeout the manager fences the holder (a new
capability version on every component object) and the write goes through.

The guest then goes on writing through the same open file.  Its layout's
handles are revoked: the OSDs refuse them (STALE, counted in
nfs_err_rejected), the client gets a new layout and its writes land; the
bytes the NFSv3 write put there stay intact, and both mirrors agree.
"""
from __future__ import annotations

import os
import time
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_JUKEBOX
from pando_testing.pnfs_guest import DROP, REPORT, chunk_loop, reports, values
from pando_testing.pnfs_tools import CallbackBlocker, PnfsCluster, freeze, sha256, thaw
from pando_testing.pod import Pod
from pando_testing.vm import Scenario

MIB = 1 << 20
RECALL_TIMEOUT = 5
P1, P2_CHUNKS = 4 * MIB, 8
X_OFF, X_LEN = MIB, 64 * 1024
PROXY_PORT = 2050


def holder_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + """
getdata p1 /tmp/p1; getdata p2 /tmp/p2
exec 3>f
cat /tmp/p1 >&3
sync
arrive hold "ino=$(stat -c %i f)"
# after the fence, through the same open file (and so its old layout):
# chunk by chunk, each fsync'ed (dd conv=fsync on stdout = fd 3)
""" + chunk_loop(P2_CHUNKS, "if=/tmp/p2 bs=1M skip=$i count=1 conv=fsync", to_fd3=True) + """\
exec 3>&-
drop
report f
"""


def nfs3_write_until_done(c: PnfsCluster, path: str, data: bytes,
                          limit: float) -> tuple[float, list[int]]:
    """NFSv3 FILE_SYNC WRITE of `data` at X_OFF, resent while the manager
    answers JUKEBOX (as a client does).  (seconds until it went through,
    the statuses seen)."""
    fh, _ = c.nfs3_lookup(path)
    seen = []
    t0 = time.monotonic()
    with c.nfs3() as n:
        while True:
            r = n.write(fh, X_OFF, data, FILE_SYNC)
            seen.append(r.status)
            if r.status != NFS3ERR_JUKEBOX:
                assert r.status == NFS3_OK and r.count == len(data), \
                    f"NFSv3 WRITE after {time.monotonic() - t0:.1f} s: status {r.status}, count {r.count}"
                return time.monotonic() - t0, seen
            assert time.monotonic() - t0 < limit, \
                f"NFSv3 WRITE still JUKEBOX after {limit} s ({len(seen)} tries)"
            time.sleep(0.25)


def run_fencing(c: PnfsCluster, kc: KernelClient, *, frozen: bool,
                blocker: CallbackBlocker | None = None) -> None:
    gate = c.gate
    assert gate is not None
    p1, p2, x = os.urandom(P1), os.urandom(P2_CHUNKS * MIB), os.urandom(X_LEN)
    gate.data.update(p1=p1, p2=p2)
    vm = kc.start(Scenario().step("sh", "v4.1", holder_script(gate.guest_lib())), timeout=400)
    path = f"/{vm.name}/s1-sh/f"
    ino = int(gate.wait("hold", timeout=300, vms=[vm]).query["ino"])
    ls0, osd0 = c.layout_status(), c.osd_stats()
    assert ls0.segments >= 1, f"the guest holds no layout: {ls0}"
    comps0 = c.components(ino)
    assert len(comps0) == 2, comps0

    # The holder goes silent.
    if frozen:
        freeze(vm)
    if blocker is not None:
        blocker.blocking = True
    try:
        took, seen = nfs3_write_until_done(c, path, x, limit=RECALL_TIMEOUT + 20)
        ls1 = c.layout_status()
        comps1 = c.components(ino)
    finally:
        if frozen:
            thaw(vm)
    print(f"NFSv3 WRITE went through after {took:.1f} s, {len(seen)} tries; {ls0} -> {ls1}")
    assert seen[0] == NFS3ERR_JUKEBOX, f"the first NFSv3 WRITE was not delayed: {seen}"
    assert RECALL_TIMEOUT - 1 <= took <= RECALL_TIMEOUT + 5, \
        f"JUKEBOX for {took:.1f} s, Recall_Timeout is {RECALL_TIMEOUT} s"
    assert ls1.recalls > ls0.recalls and ls1.fenced > ls0.fenced, f"{ls0} -> {ls1}"
    assert "did not return its layout of inode" in c.log_text()
    # Fencing is a new capability version on every component object, so
    # the handles in the old layout are refused from now on.
    for k0, k1 in zip(comps0, comps1):
        assert k1.cap_version > k0.cap_version, \
            f"component {k1.index} on OSD {k1.osd_id}: capability version {k0.cap_version} -> " \
            f"{k1.cap_version} after the fence: the fenced client's handles still work"

    gate.release("hold")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    d = c.stats_delta(osd0, c.osd_stats())
    ls2 = c.layout_status()
    rejected = c.total(d, "nfs_err_rejected")
    print(f"after the fence: OSDs rejected {rejected} requests; {ls2}")
    if blocker is not None:
        blocker.blocking = False
        print(f"callbacks dropped by the proxy: {blocker.dropped} of {blocker.callbacks}")
        assert blocker.dropped >= 1, "no CB_LAYOUTRECALL reached the proxy"
        # Never told of the recall, the guest used its fenced layout.
        assert rejected > 0, f"the fenced layout's writes were not refused by the OSDs: {d}"

    # Fencing refuses the old handles on every mirror alike: the mirrors
    # do not diverge, so nothing is damaged.  The client's reports of the
    # refusals (STALE in its LAYOUTRETURN) are not a failing component.
    damage = [r for r in c.damage() if r.ino == ino]
    assert not [r for r in damage if r.stale], \
        f"fencing left the file's components recorded stale (unreadable, unwritable): {damage}"

    # What the guest saw, and what the file holds.  A fenced client whose
    # file is still open gets a new layout and goes on (RFC 8435 2.3.3).
    out = res.steps[0]
    chunks = values(out, "chunk")
    assert len(chunks) == P2_CHUNKS, out.output
    assert all(v.endswith(" ok") for v in chunks), \
        f"the fenced client could not write on through a new layout: {chunks}"
    data = c.nfs3_read(path)
    assert len(data) == P1 + P2_CHUNKS * MIB, f"size {len(data)}"
    assert data[X_OFF:X_OFF + X_LEN] == x, "the NFSv3 write's bytes were overwritten"
    assert data[:X_OFF] == p1[:X_OFF] and data[X_OFF + X_LEN:P1] == p1[X_OFF + X_LEN:], \
        "the guest's first 4 MiB changed"
    for i in range(P2_CHUNKS):
        got = data[P1 + i * MIB:P1 + (i + 1) * MIB]
        assert got == p2[i * MIB:(i + 1) * MIB], \
            f"chunk {i}: acknowledged (fsync returned 0) but not on the server"
    assert reports(out)["f"].sha256 == sha256(data), "the guest reads another file than the server"
    _, images = c.mirrors(ino, len(data), copies=2)
    for m, img in enumerate(images):
        assert img == data, f"mirror {m} differs from the file"


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_frozen_holder_is_fenced(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                 guest: Callable[..., KernelClient]) -> None:
    """The holder's qemu is stopped (SIGSTOP) while it holds a write
    layout; CB_LAYOUTRECALL waits in its network queue.  On SIGCONT the
    client handles the stale recall first and gets a new layout, so its
    later writes need not reach the OSDs with the fenced handles (the
    back-channel test below makes sure they do)."""
    c = pnfs_cluster(recall_timeout=RECALL_TIMEOUT)
    run_fencing(c, guest(version, c), frozen=True)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.12", "7.x"])
def test_holder_without_back_channel_is_fenced(version: str, pod: Pod,
                                               pnfs_cluster: Callable[..., PnfsCluster],
                                               guest: Callable[..., KernelClient]) -> None:
    """The holder's back channel is cut: it never hears of the recall and
    writes on with its old layout, which the OSDs must refuse."""
    c = pnfs_cluster(recall_timeout=RECALL_TIMEOUT)
    blocker = CallbackBlocker(pod, PROXY_PORT, c.mds.nfs_port)
    blocker.start()
    try:
        run_fencing(c, guest(version, c, port=PROXY_PORT), frozen=False, blocker=blocker)
    finally:
        blocker.stop()
