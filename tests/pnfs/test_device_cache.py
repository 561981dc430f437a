"""A client fetches each OSD's device info once per mount.

Layouts are return-on-close, so every CLOSE drops the layout and with it
the client's references to its devices.  Stock Ganesha 4.3 promised no
device notifications in GETDEVICEINFO, and Linux then marks a device
"nocache" and forgets it with its last layout: one GETDEVICEINFO per
mirror for every file written (80 for the 40 files below, on 6.1 and
6.12).  Patch 0004 promises CHANGE and DELETE notifications (a Pando
device id never changes address: the address is part of the id), so the
client keeps them."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.vm import Scenario

FILES = 40
SCRIPT = f"""
dd if=/dev/urandom of=/tmp/src bs=1k count=200 2>/dev/null
i=0; while [ $i -lt {FILES} ]; do cp /tmp/src f$i || fail "cp f$i"; i=$((i + 1)); done
echo 3 > /proc/sys/vm/drop_caches
i=0; while [ $i -lt {FILES} ]; do cmp /tmp/src f$i || fail "f$i differs"; i=$((i + 1)); done
"""


@pytest.mark.parametrize("version", ["6.1", pytest.param("7.x", marks=pytest.mark.slow)])
def test_each_device_fetched_once_per_mount(version: str,
                                            pnfs_cluster: Callable[..., PnfsCluster],
                                            guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    res = guest(version, c).run(Scenario().step("sh", "v4.1", SCRIPT).step("mountstats", "v4.1"),
                                timeout=400)
    res.assert_ok()
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    ls = c.layout_status()
    assert ls.granted >= 2 * FILES and ls.mds_write_bytes == 0, ls
    assert 0 < v41.count("GETDEVICEINFO") <= len(c.osds), v41.counts()
