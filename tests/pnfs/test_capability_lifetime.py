"""A kernel client goes on past its handles' lifetime.

With Capability_Lifetime 5 s, a guest writes 10 MiB through one open
file, 1 MiB with fsync every 1.5 s (about three lifetimes), then drops
its caches and reads the file back.  Its layout's handles expire under
it: the OSDs refuse them (STALE, counted in nfs_err_rejected), the client
gets a new layout and goes on.  No write or fsync fails, and the file
holds every byte, on both mirrors."""
from __future__ import annotations

import os
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_guest import DROP, REPORT, chunk_loop, reports, values
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario

MIB = 1 << 20
CHUNKS = 10
LIFETIME_S = 5


def writer_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + """
getdata p /tmp/p
exec 3>f
""" + chunk_loop(CHUNKS, "if=/tmp/p bs=1M skip=$i count=1 conv=fsync", to_fd3=True,
                 each="sleep 1.5") + """\
exec 3>&-
drop
echo "ino $(stat -c %i f)"
report f
"""


def run_past_lifetime(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                      guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(capability_lifetime=LIFETIME_S)
    gate = c.gate
    assert gate is not None
    data = os.urandom(CHUNKS * MIB)
    gate.data["p"] = data
    osd0 = c.osd_stats()
    res = guest(version, c).run(Scenario().step("sh", "v4.1", writer_script(gate.guest_lib())),
                                timeout=400)
    print(res.report())
    res.assert_ok()
    out = res.steps[0]
    chunks = values(out, "chunk")
    assert len(chunks) == CHUNKS and all(v.endswith(" ok") for v in chunks), chunks
    rejected = c.total(c.stats_delta(osd0, c.osd_stats()), "nfs_err_rejected")
    print(f"the OSDs refused {rejected} calls with expired handles")
    assert rejected > 0, "no handle expired under the guest: the test proves nothing"
    f = reports(out)["f"]
    assert (f.size, f.sha256) == (len(data), sha256(data)), f
    ino = int(values(out, "ino")[0])
    _, images = c.mirrors(ino, len(data), copies=2)
    for m, img in enumerate(images):
        assert img == data, f"mirror {m} differs from what the guest wrote"


def test_a_kernel_client_goes_on_past_its_handles_lifetime(
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    run_past_lifetime("6.12", pnfs_cluster, guest)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_older_and_newer_kernels_go_on_past_their_handles_lifetime(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    run_past_lifetime(version, pnfs_cluster, guest)
