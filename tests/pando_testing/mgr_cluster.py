"""A whole Pando cluster on etcd for the kernel-client tests: pando-mgr
seeding the map from the manager's cluster.conf, pando-osd targets with
presence in etcd advertised where qemu guests reach them, and Ganesha
(pNFS, two mirrors) following the map the mgr writes.

The set-up tests/pnfs/test_mgr_cluster.py and
tests/pnfs/test_rebuild_kernel.py share; the mgrs themselves are a
fixture of each test module (it stops them and keeps their logs)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .daemons import NFS_PORT_BASE
from .etcd import EtcdCluster
from .ganesha import STATE_DEBUG
from .mds import PandoMds
from .mgr import MgrProcess
from .pnfs_tools import PnfsCluster, Rendezvous
from .pod import Pod
from .vm import GUEST_ADDR

PREFIX = "/pando/"
MDS_NAME = "mds-1"
LEASE = 5           # pando-osd's default presence TTL, and the mgr's lease


def wait_until(what: str, cond: Callable[[], Any], timeout: float) -> float:
    """Seconds until cond() is truthy (an OSError or AssertionError counts
    as not yet); fails the test after timeout."""
    t0 = time.monotonic()
    while True:
        try:
            if cond():
                return time.monotonic() - t0
        except (OSError, AssertionError):
            pass
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


def written_bytes(c: PnfsCluster) -> int:
    """Bytes the OSDs have taken over NFS (pNFS writes), from their counters."""
    return sum(s.counters()["nfs_write_bytes"] for s in c.osd_stats().values())


def assert_writes_go_on(c: PnfsCluster, seconds: float, what: str, least: int) -> None:
    """At least `least` bytes reach the OSDs within `seconds`."""
    b0 = written_bytes(c)
    time.sleep(seconds)
    b1 = written_bytes(c)
    print(f"{what}: {(b1 - b0) / 2**20:.1f} MiB written to the OSDs in {seconds:.0f} s")
    assert b1 - b0 >= least, f"{what}: the writes stopped"


def osd_args(etcd: EtcdCluster) -> Callable[[int], list[str]]:
    """Presence in etcd, advertised where the guests reach the OSDs."""
    return lambda i: ["--etcd", etcd.endpoints, "--advertise", f"{GUEST_ADDR}:{NFS_PORT_BASE + i}"]


def dbus_json(c: PnfsCluster, method: str, *args: str) -> Any:
    """The JSON of a Pando dbus method answering (b status, s msg, s json)."""
    ok, msg, text = c.dbus(method, *args)
    assert ok, f"{method}: {msg}"
    return json.loads(text)


def fsal_osd_states(c: PnfsCluster) -> dict[int, tuple[bool, bool]]:
    """{osd: (up, in)} in the map the manager has applied."""
    st = dbus_json(c, "map_status")
    return {int(o["id"]): (bool(o["up"]), bool(o["in"])) for o in st["osds"]}


def start_cluster(pod: Pod, tmp_path: Path, gate: Rendezvous, etcd: EtcdCluster,
                  mds_factory: Callable[..., PandoMds], mgrs: list[MgrProcess],
                  osds: int, nmgrs: int, down_out: float, extra_fsal: str = "") -> PnfsCluster:
    """`osds` targets, `nmgrs` mgrs (appended to `mgrs`, the first leads
    at start) and the manager `MDS_NAME`, once the mgr has every OSD up
    and in and the manager has applied that map."""
    extra = "\n".join(["Recall_Timeout = 5;", f'Etcd = "{etcd.endpoints}";',
                       f'Etcd_Prefix = "{PREFIX}";', f'Mds_Name = "{MDS_NAME}";', extra_fsal])
    # Inline_Max 1: every file on the OSDs from its first write layout
    # (tests/pnfs/conftest.py, pnfs_cluster).
    m = mds_factory(osds, start=False, pseudo="/pando", pnfs=True, advertise_host=GUEST_ADDR,
                    mirrors=2, inline_max=1, extra_fsal=extra, osd_args=osd_args(etcd),
                    log_components=STATE_DEBUG)
    m.write_config()        # the mgr seeds the map from its cluster.conf
    for i in range(nmgrs):
        mgrs.append(MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, name=f"mgr-{i + 1}",
                               index=i, seed=m.cluster_conf, down_out_interval=down_out,
                               lease=LEASE))
        mgrs[-1].start()
    api = mgrs[0].api()

    def all_up() -> bool:
        states = api.osd_states()
        return len(states) == osds and all(up and in_ for up, in_ in states.values())
    wait_until("every OSD up in the map", all_up, 60)
    m.start()
    c = PnfsCluster(pod, m, list(m.osds), gate)
    wait_until("the manager applying the map", lambda: len(fsal_osd_states(c)) == osds, 30)
    return c

