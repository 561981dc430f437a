"""A read LAYOUTGET on an empty inline file must not keep the client off
pNFS once the file has data on the OSDs.

Linux answers NFS4ERR_LAYOUTUNAVAILABLE by marking the inode's layout
failed for that iomode: for 120 s (PNFS_LAYOUTGET_RETRY_TIMEOUT) it asks
no more and reads through the manager.  A client reading an empty file
with O_DIRECT asks for a read layout with loga_minlength 0 (a read at or
past its end of file, nothing to read); the manager now answers that
with NFS4ERR_LAYOUTTRYLATER, which Linux takes as "not now" for that one
read (-EOVERFLOW, through the manager, no penalty).

A guest makes an empty file over NFSv3 (inline: no objects), reads
it with O_DIRECT over NFSv4.1, then fills it over NFSv3 (1 MiB: it moves
to objects) and reads it again over NFSv4.1: those reads must come from
the OSDs, not the manager (which is where they went within 120 s when
the empty file's read LAYOUTGET got LAYOUTUNAVAILABLE)."""
from __future__ import annotations

import os
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario

SIZE = 1 << 20


def script(gate_lib: str) -> str:
    return gate_lib + """
mount_nfs v3 || fail "cannot mount v3"
V3=/mnt/v3/$PANDO_RUN/s1-sh
: > $V3/e
ptool io -r -d e r:0:4096 || fail "O_DIRECT read of the empty file failed"
arrive empty "ino=$(stat -c %i e)"
getdata blob /tmp/blob
cat /tmp/blob > $V3/e || fail "filling it over NFSv3 failed"
arrive filled
ptool io -r -d e r:0:16 r:1048560:16 || fail "O_DIRECT read of the full file failed"
arrive direct
echo "sha $(sha256sum < e | cut -d' ' -f1)"
arrive read
"""


@pytest.mark.parametrize("version", ["6.1", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("7.x", marks=pytest.mark.slow)])
def test_read_layoutget_on_empty_inline_file(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                              guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2, inline_max=65536)
    gate = c.gate
    assert gate is not None
    data = os.urandom(SIZE)
    gate.data["blob"] = data
    kc = guest(version, c)
    sc = Scenario().step("sh", "v4.1", script(gate.guest_lib())).step("mountstats", "v4.1")
    ls0 = c.layout_status()
    vm = kc.start(sc, timeout=400)
    ino = int(gate.wait("empty", timeout=200, vms=[vm]).query["ino"])
    ls1 = c.layout_status()
    # Asked for a read layout, the empty file stayed inline: none granted.
    assert c.components(ino) == [] and ls1.granted == ls0.granted, f"{ls0} -> {ls1}"
    gate.release("empty")
    gate.wait("filled", timeout=200, vms=[vm])
    osd1, ls2 = c.osd_stats(), c.layout_status()
    assert len(c.components(ino)) == 2, "1 MiB over NFSv3 did not move the file to objects"
    gate.release("filled")
    gate.wait("direct", timeout=200, vms=[vm])
    osd2, ls3 = c.osd_stats(), c.layout_status()
    gate.release("direct")
    gate.wait("read", timeout=200, vms=[vm])
    osd3, ls4 = c.osd_stats(), c.layout_status()
    gate.release("read")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()

    out = res.steps[0].output.splitlines()
    assert "r 0 -" in out, out
    assert f"r 0 {data[:16].hex()}" in out and f"r 1048560 {data[-16:].hex()}" in out \
        and f"sha {sha256(data)}" in out, out
    # The O_DIRECT reads of the full file (the client asks for a layout at
    # each, unless it marked the file failed) and then the page-cache read
    # (sha256sum) were served by the OSDs, none by the manager.
    for what, (o0, o1), (l0, l1), want in (("O_DIRECT", (osd1, osd2), (ls2, ls3), 32),
                                           ("cached", (osd2, osd3), (ls3, ls4), SIZE)):
        d = c.stats_delta(o0, o1)
        mds_read = l1.mds_read_bytes - l0.mds_read_bytes
        print(f"{what} reads: OSDs served {c.total(d, 'nfs_read_bytes')} bytes, the manager {mds_read}")
        assert c.total(d, "nfs_read_bytes") >= want and mds_read == 0, \
            f"{what} reads went through the manager: OSDs {d}, manager {mds_read} bytes ({l0} -> {l1})"
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    assert v41.events["pnfsread"] > 0, v41.events
