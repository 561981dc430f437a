"""A write layout that ends without a LAYOUTCOMMIT.  A client may return
a write layout without ever sending LAYOUTCOMMIT for bytes it wrote to
the OSDs (stock Ganesha 4.3 refuses a LAYOUTCOMMIT that arrives after
the CLOSE dropped a return-on-close layout; Linux does not tell the
application), which would leave bytes the OSDs committed past the
file's size.  The manager checks the size against the objects when such a
layout ends.

Reproduced without relying on a race: a guest opens a new file for
writing (its OPEN carries a LAYOUTGET, so it holds a write layout) and
waits; meanwhile the test writes bytes straight into both mirror
objects, as a pNFS writer would; then the guest closes without having
written, so no LAYOUTCOMMIT is sent, and unmounts, which returns the
layout.  The file's size must become what both mirrors hold.  A second
file whose mirrors disagree grows only to the shorter mirror."""
from __future__ import annotations

import os
import time
from typing import Callable

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_tools import PARTITION, PnfsCluster
from pando_testing.vm import Scenario

SCRIPT = """
exec 3>a 4>b
arrive opened "a=$(stat -c %i a)&b=$(stat -c %i b)"
exec 3>&- 4>&-
arrive closed
"""


def wait_size(c: PnfsCluster, path: str, want: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        size = c.nfs3_lookup(path)[1].size
        if size == want or time.monotonic() > deadline:
            return size
        time.sleep(0.2)


def test_size_from_objects_when_a_write_layout_ends_uncommitted(
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    kc = guest("6.12", c)
    vm = kc.start(Scenario().step("sh", "v4.1", gate.guest_lib() + SCRIPT), timeout=300)
    opened = gate.wait("opened", timeout=200, vms=[vm])
    ino_a, ino_b = int(opened.query["a"]), int(opened.query["b"])
    data = os.urandom(300_000)
    for ino, lengths in ((ino_a, (len(data), len(data))), (ino_b, (len(data), 100_000))):
        comps = c.wait_components(ino, 2)
        assert len(comps) == 2, f"inode {ino}: {comps} (no write layout in the OPEN?)"
        for k, n in zip(comps, lengths):
            with c.ctl(c.osd(k.osd_id)) as ctl:
                ctl.write(PARTITION, k.object_id, 0, data[:n])
    ls0 = c.layout_status()
    gate.release("opened")
    gate.wait("closed", timeout=120, vms=[vm])
    gate.release("closed")
    res = vm.wait()
    vm.kill()
    res.assert_ok()
    ls1 = c.layout_status()
    assert ls1.returned - ls0.returned >= 2, f"layouts not returned at the unmount: {ls0} -> {ls1}"

    run = "k6_12-1"
    base = f"{run}/s1-sh"
    assert wait_size(c, f"{base}/a", len(data)) == len(data), c.log_text()[-3000:]
    assert c.nfs3_read(f"{base}/a") == data
    # Only what every mirror holds: the shorter one.
    assert wait_size(c, f"{base}/b", 100_000) == 100_000
    assert c.nfs3_read(f"{base}/b") == data[:100_000]
    log = c.log_text()
    assert f"inode {ino_a}: size 0 -> {len(data)} from its objects" in log
