"""Fixtures for the pNFS tests: a Pando metadata manager handing out
flexfiles layouts over four OSDs, stock Linux guests that mount it, and a
rendezvous the guests' scripts and the test meet at.

* `pnfs_cluster(mirrors=2, stripe_width=1, striped_clients="",
  recall_timeout=10, log_level=None, pnfs=True, capability_lifetime=600,
  **PandoMds fields)` ->
  PnfsCluster (pando_testing.pnfs_tools): PandoMds with layouts on
  (pnfs=False: the export's Pnfs = false), NFSv3, NFSv4.1 and NFSv4.2 as
  `pando-cluster up` serves them, data servers advertised at
  10.0.2.2 (what qemu guests see), the `Rendezvous` started in the pod.
  Teardown (tests/conftest.py's mds_factory): Ganesha must still be alive
  and exit 0 on SIGTERM, every OSD the test did not kill too.
* `fencing` -> (PnfsCluster, Nfs4Client): two mirrors, a
  FENCING_RECALL_TIMEOUT (pando_testing.pnfs_tools) of 2 s, and a plain
  NFSv4.1 client that never answers a recall.
* `guest(version, cluster, name=None, port=None)` -> KernelClient booting
  that Debian kernel, with its default module options, in the same pod
  (`port`: mount through a proxy listening there).

PANDO_PNFS_MDS_LOG_LEVEL=DEBUG (or FULL_DEBUG) raises the manager's log
level for a reproduction.  A failed test keeps the VMs' serial logs, the
Ganesha log and the OSD logs in build/test-logs/<test id>/.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.ganesha import STATE_DEBUG
from pando_testing.logs import keep_logs
from pando_testing.mds import PandoMds
from pando_testing.nfs4 import NFS4_OK, Nfs4Client
from pando_testing.pnfs_tools import FENCING_RECALL_TIMEOUT, PnfsCluster, Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import GUEST_ADDR, NfsServerHandle

PSEUDO = "/pando"


@pytest.fixture
def gate(pod: Pod) -> Iterator[Rendezvous]:
    r = Rendezvous(pod).start()
    yield r
    r.stop()


@pytest.fixture
def pnfs_cluster(request: pytest.FixtureRequest, pod: Pod, gate: Rendezvous,
                 mds_factory: Callable[..., PandoMds]) -> Iterator[Callable[..., PnfsCluster]]:
    made: list[PnfsCluster] = []

    def make(mirrors: int = 2, stripe_width: int = 1, striped_clients: str = "",
             recall_timeout: int = 10, log_level: str | None = None, pnfs: bool = True,
             inline_max: int = 1, capability_lifetime: int = 600, fsal: str = "",
             **kw: object) -> PnfsCluster:
        """Inline_Max 1 by default: these suites test the layout machinery
        with files of any size, so every file's data goes to the OSDs at
        its first write layout.  With production's 64 KiB, files that fit
        inline are written and read through the manager without a layout
        (ganesha-fsal/README.md, "Small files over pNFS"); test_small_files
        and test_inline_layout test that default.  `fsal`: more FSAL lines."""
        assert not made, "one manager per test (they share the pod's ports)"
        extra = "\n".join([f"Stripe_Width = {stripe_width};",
                           f"Recall_Timeout = {recall_timeout};",
                           f"Capability_Lifetime = {capability_lifetime};",
                           f'Striped_Clients = "{striped_clients}";', fsal])
        m = mds_factory(4, pseudo=PSEUDO, pnfs=pnfs, advertise_host=GUEST_ADDR,
                        mirrors=mirrors, extra_fsal=extra, inline_max=inline_max,
                        log_level=os.environ.get("PANDO_PNFS_MDS_LOG_LEVEL", log_level),
                        log_components=STATE_DEBUG, **kw)
        c = PnfsCluster(pod, m, list(m.osds), gate)
        made.append(c)
        return c

    yield make
    for c in made:
        keep_logs(request, [c.mds.conf_path, c.mds.cluster_conf, *(o.log_path for o in c.osds)],
                  tail=0)


@pytest.fixture
def fencing(pnfs_cluster: Callable[..., PnfsCluster]) -> Iterator[tuple[PnfsCluster, Nfs4Client]]:
    """Two mirrors, a Recall_Timeout of FENCING_RECALL_TIMEOUT s, and a
    plain NFSv4.1 client that never answers a recall (its back channel
    drops every call): fenced that long after one."""
    c = pnfs_cluster(mirrors=2, recall_timeout=FENCING_RECALL_TIMEOUT)
    m = c.mds
    with Nfs4Client(m.pod.connect(m.host, m.nfs_port), back_channel=True) as nfs:
        assert nfs.reclaim_complete() == NFS4_OK
        yield c, nfs


@pytest.fixture
def guest(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
          pnfs_cluster: Callable[..., PnfsCluster]) -> Iterator[Callable[..., KernelClient]]:
    made: list[KernelClient] = []

    def make(version: str, cluster: PnfsCluster, name: str | None = None,
             port: int | None = None) -> KernelClient:
        """`port`: mount the manager there (a proxy in front of it)."""
        m = cluster.mds
        target = m.mount_target()
        if port is not None:
            target = dataclasses.replace(target, port=port)
        handle = NfsServerHandle(name="pando", target=target, logs=[m.log_path])
        kc = KernelClient(pod, version, tmp_path / "vms", handle,
                          name or f"k{version.replace('.', '_')}-{len(made) + 1}")
        made.append(kc)
        return kc

    yield make
    vms = [vm for kc in made for vm in kc.vms]
    for vm in vms:
        if vm.proc is not None and vm.proc.poll() is None:
            try:
                os.kill(vm.proc.pid, 18)  # a test that froze it and failed
            except OSError:
                pass
        vm.kill()
    keep_logs(request, [log for vm in vms for log in vm.logs()])
